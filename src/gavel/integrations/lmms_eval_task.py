"""gavel's benchmarks as lmms-eval tasks: ``gavel export lmms-eval DIR``, then
``lmms-eval --include_path DIR --tasks gavel``.

:func:`export_task` writes one folder per benchmark under ``DIR``: the task's YAML, its
``utils.py`` and ``docs.jsonl`` (one document per request, with gavel's prompt and the
absolute paths of its image or video). lmms-eval loads the documents with ``datasets``' JSON
reader (no Hub), asks the model with gavel's prompt, and hands the answers to ``utils.py``,
whose functions are the ones below: the images (a video as gavel's sampled frames), the prompt,
and aggregations that score the whole run with gavel's own scorer, so each lmms-eval metric is
the number ``gavel score`` gives on the same answers.

The folder may be the user's: gavel records what it wrote there (``.gavel-export.json``, the
SHA-256 of each file) and writes again only over those files, unchanged; a folder holding
anything else is refused unless ``force`` is given.
"""

from __future__ import annotations

import functools
import json
import math
import os
import pprint
import re
from pathlib import Path
from typing import Any

from gavel.errors import GavelError
from gavel.integrations import _gavel_api as api
from gavel.io.files import write_together
from gavel.io.run_files import file_sha256, sha256_of

#: Tokens lmms-eval lets a model write per answer (``gavel generate``'s default).
MAX_NEW_TOKENS = 1024
#: What an export wrote into its folder: file name -> SHA-256.
RECORD = ".gavel-export.json"


def metric_key(name: str) -> str:
    """An lmms-eval metric name for a gavel metric: ``grounding.A@0.5`` -> ``grounding_A_0_5``."""
    return re.sub(r"[^0-9A-Za-z]+", "_", name).strip("_")


def export_task(
    out: Path,
    benchmark: str,
    data: str | Path,
    options: api.TaskOptions,
    *,
    frames: int | None = None,
    fps: float | None = None,
    max_frames: int | None = None,
    force: bool = False,
) -> Path:
    """Write ``out/<benchmark>/`` (YAML, utils.py, docs.jsonl) and return that folder; a folder
    holding files this export did not write is refused unless ``force``.

    ``data`` is what ``gavel score --data`` takes; Parquet and ``hf:`` data are read from
    gavel's data cache, where they are materialized once."""
    api.check_benchmark(benchmark)
    folder = out / benchmark
    if not force and (folder.is_symlink() or (folder.exists() and not folder.is_dir())):
        raise GavelError(
            f"{folder}: a symbolic link or a file, not a folder gavel export made; choose "
            "another folder, or pass --force to write through it"
        )
    foreign = [] if force else foreign_files(folder)
    if foreign:
        raise GavelError(
            f"{folder}: holds files gavel export did not write ({', '.join(foreign)}); choose "
            "another folder, or pass --force to write the task's files over them"
        )
    local, options = api.resolve_data(benchmark, str(data), options)
    data = local.resolve()
    if options.image_root:
        options = api.TaskOptions(
            **{**options.as_dict(), "image_root": str(Path(options.image_root).resolve())}
        )
    sampling = {"frames": frames, "fps": fps, "max_frames": max_frames}
    described = api.describe_sampling(**sampling)  # checks the sampling flags
    requests = api.load_requests(benchmark, data, options, described)
    real = folder.resolve()  # the relative places are computed from its real path
    docs = b"".join(
        json.dumps(
            {
                "id": r.sample_id,
                "prompt": r.prompt,
                "media": [_place(Path(p), real) for p in r.images],
            }
        ).encode()
        + b"\n"
        for r in requests
    )
    root = options.image_root
    settings = {
        "benchmark": benchmark,
        "data": _place(data, real),
        "options": {
            **options.as_dict(),
            "image_root": _place(Path(root), real) if root else None,
        },
        "sampling": sampling,
    }
    folder.mkdir(parents=True, exist_ok=True)
    files = [
        (folder / "docs.jsonl", docs),
        (folder / "utils.py", _utils_source(settings).encode()),
        (folder / f"{benchmark}.yaml", _yaml(benchmark).encode()),
    ]
    record = {path.name: sha256_of(payload) for path, payload in files}
    write_together([*files, (folder / RECORD, json.dumps(record, indent=2).encode())])
    return folder


def _place(path: Path, folder: Path) -> dict[str, str]:
    """A file's place as the task records it: relative to the task's folder (found again when
    the folder moves with its data) and absolute (when the folder moves alone)."""
    absolute = path.resolve()
    return {
        "relative": Path(os.path.relpath(absolute, folder)).as_posix(),
        "absolute": str(absolute),
    }


def find(place: Any, folder: Path | None) -> str:
    """The path a recorded place names now: relative to the task's folder where that exists,
    else the absolute path (a plain string, as older exports wrote, as it is)."""
    if isinstance(place, str):
        return place
    if folder is not None and (folder / place["relative"]).exists():
        return str((folder / place["relative"]).resolve())
    return place["absolute"]


def foreign_files(folder: Path) -> list[str]:
    """The names in ``folder`` that an export did not write, or that changed since."""
    if not folder.is_dir():
        return []
    try:
        record = json.loads((folder / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        record = {}
    record = record if isinstance(record, dict) else {}
    return sorted(
        entry.name
        for entry in folder.iterdir()
        if entry.name != RECORD
        and not (
            entry.is_file()
            and not entry.is_symlink()
            and record.get(entry.name) == file_sha256(entry)
        )
    )


def _yaml(benchmark: str) -> str:
    metrics = "".join(
        f"  - metric: {metric_key(name)}\n"
        f"    aggregation: !function utils.{metric_key(name)}\n"
        "    higher_is_better: true\n"
        for name in api.HEADLINE_METRICS[benchmark]
    )
    return (
        f"# gavel's {benchmark} benchmark for lmms-eval (written by gavel export lmms-eval).\n"
        "# Prompts and media are gavel's; the metrics are gavel's scorer on the whole run.\n"
        f"task: {benchmark}\n"
        "dataset_path: json\n"
        "dataset_kwargs:\n"
        "  data_files:\n"
        "    test: docs.jsonl\n"  # lmms-eval reads it from the YAML's folder
        "test_split: test\n"
        "output_type: generate_until\n"
        "doc_to_visual: !function utils.doc_to_visual\n"
        "doc_to_text: !function utils.doc_to_text\n"
        "doc_to_target: id\n"
        "generation_kwargs:\n"
        f"  max_new_tokens: {MAX_NEW_TOKENS}\n"
        "  temperature: 0\n"
        "  do_sample: false\n"
        "process_results: !function utils.process_results\n"
        "metric_list:\n"
        f"{metrics}"
        "metadata:\n"
        "  - version: 1.0\n"
    )


def _utils_source(settings: dict[str, Any]) -> str:
    aggregations = "".join(
        f"{metric_key(name)} = task.aggregation({name!r})\n"
        for name in api.HEADLINE_METRICS[settings["benchmark"]]
    )
    return (
        f'"""lmms-eval functions of gavel\'s {settings["benchmark"]} task (written by gavel export '
        "lmms-eval).\n\nEach calls gavel (which must be importable where lmms-eval runs); the "
        'aggregations score\nthe whole run with gavel\'s scorer.\n"""\n\n'
        "from pathlib import Path\n\n"
        "from gavel.integrations.lmms_eval_task import GavelTask\n\n"
        f"task = GavelTask({pprint.pformat(settings, sort_dicts=False)}, Path(__file__).parent)\n\n"
        "doc_to_visual = task.doc_to_visual\n"
        "doc_to_text = task.doc_to_text\n"
        "process_results = task.process_results\n"
        f"{aggregations}"
    )


class GavelTask:
    """The functions an exported task's ``utils.py`` hands to lmms-eval."""

    def __init__(self, settings: dict[str, Any], folder: Path | None = None):
        self.benchmark = settings["benchmark"]
        self.folder = folder
        self.data = find(settings["data"], folder)
        options = dict(settings["options"])
        if options.get("image_root"):
            options["image_root"] = find(options["image_root"], folder)
        self.options = api.TaskOptions(**options)
        self.sampling = settings.get("sampling") or {}
        self.metrics = api.HEADLINE_METRICS[self.benchmark]

    def doc_to_visual(self, doc: dict[str, Any]) -> list[Any]:
        """The images gavel sends, as the pixels the model would see from ``gavel generate``:
        an image file as it is, a video as gavel's sampled frames encoded as gavel encodes
        them (JPEG at its quality) and decoded again, so lmms-eval's own (lossless) encoding of
        them keeps gavel's pixels."""
        from PIL import Image

        from gavel.media.pixels import apply_pixel_limit
        from gavel.models.openai_compat import VIDEO_SUFFIXES

        visuals: list[Any] = []
        for place in doc["media"]:
            path = find(place, self.folder)
            if Path(path).suffix.lower() in VIDEO_SUFFIXES:
                visuals.extend(self._sent_frames(Path(path)))
            else:
                apply_pixel_limit()
                with Image.open(path) as image:
                    visuals.append(image.convert("RGB"))
        return visuals

    @functools.cached_property
    def _builder(self) -> api.MessageBuilder:
        return api.MessageBuilder(**self.sampling)

    def _sent_frames(self, video: Path) -> list[Any]:
        """A video's frames as ``gavel generate`` sends them (its data URLs), decoded."""
        import base64
        import io

        from PIL import Image

        from gavel.models.base import Request

        parts, _ = self._builder.content(Request("frames", self.benchmark, "", images=(video,)))
        frames = []
        for part in parts:
            if part["type"] == "image_url":
                encoded = part["image_url"]["url"].split(",", 1)[1]
                with Image.open(io.BytesIO(base64.b64decode(encoded))) as frame:
                    frames.append(frame.convert("RGB"))
        return frames

    def doc_to_text(self, doc: dict[str, Any], lmms_eval_specific_kwargs: Any = None) -> str:
        return doc["prompt"]

    def process_results(self, doc: dict[str, Any], results: list[str], **_: Any) -> dict:
        """The answer for every metric (each aggregation scores the whole run)."""
        # A gavel predictions line: lmms-eval's sample log keeps it (gavel score reads it).
        item = {
            "id": doc["id"],
            "response": results[0] if results else None,
            "box_format": self.options.box_format,
        }
        return {metric_key(name): item for name in self.metrics}

    def aggregation(self, name: str):
        """The lmms-eval aggregation of gavel metric ``name`` (NaN when gavel reports none)."""

        def aggregate(items: list[dict[str, Any]]) -> float:
            value = self.score(json.dumps(items, sort_keys=True)).get(name)
            return math.nan if value is None else value

        aggregate.__name__ = metric_key(name)
        return aggregate

    @functools.lru_cache(maxsize=4)  # noqa: B019 - one task object per exported folder
    def score(self, items_json: str) -> dict[str, float]:
        """gavel's metrics of a run (computed once for all of the task's metrics)."""
        answers = [
            api.prediction(item["id"], item["response"], box_format=self.options.box_format)
            for item in json.loads(items_json)
        ]
        # The samples lmms-eval asked (all, or those of --limit N), as gavel score
        # --sample-id scores them: never the rest of the data counted as missing.
        selection = self._scorer.selection(answer.id for answer in answers)
        result, _ = api.evaluate(self.benchmark, self.data, answers, self.options, selection)
        return api.flat_metrics(result)

    @functools.cached_property
    def _scorer(self) -> api.SampleScorer:
        return api.SampleScorer(self.benchmark, self.data, self.options)
