"""A Hugging Face cache with dataset repositories built in the test, laid out exactly as
huggingface_hub lays out what it downloads (``datasets--OWNER--NAME/refs/REF``,
``snapshots/COMMIT/…`` as symlinks into ``blobs/``), so ``hf:`` data resolves through the real
``snapshot_download`` with ``HF_HUB_OFFLINE=1`` and nothing is fetched."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest


class HubCache:
    def __init__(self, root: Path):
        self.root = root

    def add(self, repo: str, folder: Path, commit: str, refs: tuple[str, ...] = ("main",)) -> Path:
        """Put every file under ``folder`` into the cache as ``repo`` at ``commit``."""
        owner, name = repo.split("/")
        store = self.root / f"datasets--{owner}--{name}"
        snapshot = store / "snapshots" / commit
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            data = path.read_bytes()
            blob = store / "blobs" / hashlib.sha256(data).hexdigest()
            blob.parent.mkdir(parents=True, exist_ok=True)
            blob.write_bytes(data)
            link = snapshot / path.relative_to(folder)
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(os.path.relpath(blob, link.parent))
        for ref in refs:
            (store / "refs").mkdir(parents=True, exist_ok=True)
            (store / "refs" / ref).write_text(commit)
        return snapshot


@pytest.fixture
def hub_cache(tmp_path, monkeypatch) -> HubCache:
    """An empty Hugging Face cache, offline, and a fresh gavel data cache."""
    root = tmp_path / "hf-cache"
    root.mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(root))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("GAVEL_CACHE_DIR", str(tmp_path / "gavel-cache"))
    return HubCache(root)


def copy_tree(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target


def videohallucer_parquet(release: Path, out: Path) -> None:
    """The release folder as one Parquet file, one row per pair, videos embedded (flat)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from gavel.benchmarks.videohallucer.data import load_dataset

    video = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    records = []
    for pair in load_dataset(release).pairs:
        record = {"category": pair.category, "type": pair.type}
        for side in ("basic", "hallucination"):
            question = pair.side(side)
            data = (release / pair.category / "videos" / question.video).read_bytes()
            record[f"{side}_video"] = {"bytes": data, "path": question.video}
            record[f"{side}_question"] = question.question
            record[f"{side}_answer"] = question.answer
        records.append(record)
    schema = pa.schema(
        [("category", pa.string()), ("type", pa.string())]
        + [
            (f"{side}_{name}", video if name == "video" else pa.string())
            for side in ("basic", "hallucination")
            for name in ("video", "question", "answer")
        ]
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(records, schema=schema), out, row_group_size=2)


@pytest.fixture(name="videohallucer_parquet")
def videohallucer_parquet_writer():
    """:func:`videohallucer_parquet`, for the test modules (importlib mode: they cannot import
    this)."""
    return videohallucer_parquet
