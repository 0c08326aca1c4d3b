"""An exported lmms-eval task that names its Hub dataset, as lmms-eval's own tasks do.

``gavel export lmms-eval --hub-dataset`` writes ``dataset_path: OWNER/NAME`` with
``dataset_kwargs: {revision: COMMIT}``, ``dataset_name`` (the card's config) and
``test_split``: lmms-eval then loads the rows with ``datasets.load_dataset`` itself (the Hub,
or ``datasets``' own cache), and the task's ``process_docs`` turns them into one document per
question gavel asks. A VideoHallucer row is a pair (nested ``basic``/``hallucination``
structs or flat ``basic_video``, ... columns, as gavel's Parquet layout reads them) and
becomes two documents.

The images lmms-eval gives the model come from the rows (a decoded PIL image, or a struct of
``bytes`` and ``path``); the prompts and the gold answers come from gavel's own reading of the
same dataset at the same commit (through the Hugging Face cache), so the prompt, the sample ids
and the scores are those of ``gavel score --data hf:OWNER/NAME@COMMIT``. ``process_docs``
checks that the rows ``datasets`` gave are that commit's: offline, ``datasets`` reads its
prepared copy of the dataset, whichever commit it was prepared from.
"""

from __future__ import annotations

import hashlib
import io
import posixpath
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gavel.benchmarks.videohallucer.layout import PAIR_SIDES, pair_side
from gavel.errors import GavelError

#: The document column holding a question's medium: GAVEL and DetailVerifyBench rows keep
#: their ``image`` column; a VideoHallucer question gets its side's video.
MEDIUM = {"gavel": "image", "detailverify": "image", "videohallucer": "video"}


@dataclass(frozen=True)
class HubRows:
    """Where lmms-eval loads the rows: a Hub repository at a revision, a config and a split."""

    repo: str
    revision: str | None
    config: str | None
    split: str

    def yaml(self) -> str:
        """The YAML lines of the dataset, as lmms-eval hands them to ``load_dataset``."""
        text = f"dataset_path: {self.repo}\n"
        if self.config:
            text += f"dataset_name: {self.config}\n"
        if self.revision:
            text += f"dataset_kwargs:\n  revision: {self.revision}\n"
        return text + f"test_split: {self.split}\nprocess_docs: !function utils.process_docs\n"


def hub_rows(benchmark: str, spec: str, source: dict[str, Any] | None) -> HubRows:
    """The rows of ``spec`` (``hf:OWNER/NAME[@REV][:SPLIT]``) as lmms-eval loads them, from the
    provenance gavel's data sources recorded when reading them (``source``: config, split)."""
    from gavel.sources.spec import parse_hub

    hub = parse_hub(spec)
    source = source or {}
    if benchmark == "videohallucer" and source.get("materialized") is None:
        raise GavelError(
            f"--hub-dataset: {spec} holds the VideoHallucer release folders (JSON files and "
            "videos), not rows that datasets.load_dataset reads as pairs; export it without "
            "--hub-dataset"
        )
    if not source.get("split"):
        raise GavelError(
            f"--hub-dataset: {spec} names the config {source.get('config')!r} of several "
            "splits; lmms-eval asks one split: name it as hf:OWNER/NAME:SPLIT"
        )
    return HubRows(hub.repo, hub.revision, source.get("config"), source["split"])


def row_ids(benchmark: str, rows: Any) -> list[str]:
    """gavel's sample id of each row (VideoHallucer: each row's two question ids), as the
    loaders name the samples of the layout gavel's sources write these rows into."""
    if benchmark == "gavel":
        return [str(row["id"]) for row in rows]
    if benchmark == "detailverify":  # real_test: the file name; synthetic_test: the image's
        return [
            str(row["filename"])
            if row.get("filename") is not None
            else posixpath.basename(str(row["image_path"]).replace("\\", "/"))
            for row in rows
        ]
    seen: Counter[str] = Counter()
    ids = []
    for row in rows:
        category = str(row["category"])
        ids += [f"{category}/{seen[category]}/{side}" for side in PAIR_SIDES]
        seen[category] += 1
    return ids


def documents(benchmark: str, dataset: Any, expected: list[str], spec: str) -> Any:
    """lmms-eval's ``process_docs``: the rows of ``dataset`` (a ``datasets.Dataset``) as one
    document per question, each with gavel's sample ``id`` and its medium; refused when the
    ids are not those of gavel's reading of ``spec`` (``expected``)."""
    named = [c for c in ("id", "filename", "image_path", "category") if c in dataset.column_names]
    ids = row_ids(benchmark, dataset.select_columns(named))
    if sorted(ids) != sorted(expected):
        missing = sorted(set(expected) - set(ids))[:3]
        extra = sorted(set(ids) - set(expected))[:3]
        raise GavelError(
            f"the rows datasets.load_dataset gave are not those of {spec} (missing "
            f"{missing or 'none'}, unknown {extra or 'none'}): its cache holds another commit; "
            "load the dataset at that revision once with network access"
        )
    if benchmark == "gavel":
        return dataset
    if benchmark == "detailverify":  # synthetic_test rows number themselves in ``id``
        if "id" in dataset.column_names:
            dataset = dataset.remove_columns("id")
        return dataset.add_column("id", ids)

    def pairs(batch: dict[str, list[Any]]) -> dict[str, list[Any]]:
        rows = [
            dict(zip(batch, values, strict=True)) for values in zip(*batch.values(), strict=True)
        ]
        return {"video": [(pair_side(row, side) or {}).get("video") for row in rows
                          for side in PAIR_SIDES]}  # fmt: skip

    media = dataset.map(pairs, batched=True, remove_columns=dataset.column_names)
    return media.add_column("id", ids)


def open_image(cell: Any) -> Any:
    """A row's image as an RGB PIL image: ``datasets`` decodes an ``Image`` column, a plain
    struct column gives ``{bytes, path}``; None when the row carries no image bytes."""
    from PIL import Image

    from gavel.media.pixels import apply_pixel_limit

    if cell is None:
        return None
    if isinstance(cell, Image.Image):
        return cell.convert("RGB")
    data = cell.get("bytes") if isinstance(cell, dict) else None
    if not data:
        return None
    apply_pixel_limit()
    with Image.open(io.BytesIO(data)) as image:
        return image.convert("RGB")


def video_file(cell: Any) -> Path | None:
    """A row's video as a file gavel's frame sampler opens: its bytes written once into a
    folder of this process, named by their hash; None when the row carries no bytes."""
    data = cell.get("bytes") if isinstance(cell, dict) else None
    if not data:
        return None
    suffix = posixpath.splitext(str(cell.get("path") or ""))[1] or ".mp4"
    path = _video_folder() / f"{hashlib.sha256(data).hexdigest()}{suffix}"
    if not path.exists():
        path.write_bytes(data)
    return path


_VIDEOS: list[tempfile.TemporaryDirectory] = []


def _video_folder() -> Path:
    if not _VIDEOS:
        _VIDEOS.append(tempfile.TemporaryDirectory(prefix="gavel-lmms-videos-"))
    return Path(_VIDEOS[0].name)
