"""gavel's benchmarks as lmms-eval tasks: ``gavel export lmms-eval DIR``, then
``lmms-eval --include_path DIR --tasks gavel_gavel``.

:func:`export_task` writes one folder per benchmark under ``DIR``: the task's YAML, its
``utils.py`` and ``docs.jsonl`` (one document per request, with gavel's prompt and the place of
its image or video). lmms-eval loads the documents with ``datasets``' JSON reader (no Hub),
asks the model with gavel's prompt, and hands the answers to ``utils.py``, whose functions are
the ones below: the images (a video as gavel's sampled frames), the prompt, and aggregations
that score the whole run with gavel's own scorer, so each lmms-eval metric is the number
``gavel score`` gives on the same answers.

A task is named ``gavel_BENCHMARK`` in a folder named ``BENCHMARK``: lmms-eval reads a lone
``--tasks NAME`` as a folder of YAML files when ``./NAME/`` exists, so no task may be named
like a folder an export writes (or like gavel's data folders, ``gavel synth`` writes
``videohallucer/``).

GAVEL's prompt asks for boxes in the model's convention, and lmms-eval runs many models: the
YAML's ``lmms_eval_specific_kwargs`` (lmms-eval's per-model settings, handed to
``doc_to_text`` for the ``--model`` given) holds each known model's convention, and for
Qwen2.5-VL's ``resized-pixel`` the image window that lmms-eval's model resizes within.

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
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from gavel.api import tasks as api
from gavel.errors import ConfigError, GavelError
from gavel.integrations.lmms_eval_hub import MEDIUM, HubRows, documents, hub_rows
from gavel.io.files import write_together
from gavel.io.run_files import file_sha256, sha256_of
from gavel.parsing.conventions import (
    QWEN25_MAX_PIXELS,
    QWEN25_MIN_PIXELS,
    get_convention,
    qwen_smart_resize,
)

#: Tokens lmms-eval lets a model write per answer (``gavel generate``'s default).
MAX_NEW_TOKENS = 1024
#: What an export wrote into its folder: file name -> SHA-256.
RECORD = ".gavel-export.json"

#: lmms-eval's own models whose box convention gavel knows: lmms-eval's ``--model`` name ->
#: gavel's preset of that family (``gavel list presets``). Other models (``openai``,
#: ``vllm``, ...) serve any family: they get the export's ``--box-format``.
MODEL_PRESETS = {
    "qwen2_5_vl": "qwen2.5-vl",
    "qwen3_vl": "qwen3-vl",
    "internvl_hf": "internvl3.5",
    "gemini": "gemini",
}
#: The image window (pixels) each model resizes within, where its boxes depend on it: lmms-eval
#: 0.7.3's ``qwen2_5_vl`` defaults ``min_pixels=256*28*28`` and ``max_pixels=1605632``, not the
#: Qwen2.5-VL processor's 3,136 to 12,845,056 (the window ``resized-pixel`` assumes otherwise).
MODEL_WINDOWS = {"qwen2_5_vl": (256 * 28 * 28, 1_605_632)}

#: The numbers lmms-eval reports for each benchmark (flat names as ``gavel.api.tasks.flat_metrics`` gives).
HEADLINE_METRICS = {
    "gavel": (
        "verification.accuracy",
        "verification.f1",
        "grounding.A@0.3",
        "grounding.A@0.5",
        "grounding.A@0.7",
    ),
    "detailverify": (
        "token.precision",
        "token.recall",
        "token.f1",
        "sentence.f1",
        "response.f1",
    ),
    "videohallucer": ("overall", "overall_basic", "overall_hallucination"),
}


def task_name(benchmark: str) -> str:
    """The lmms-eval task of a benchmark: ``gavel_BENCHMARK``, never the name of its folder."""
    return f"gavel_{benchmark}"


@dataclass(frozen=True)
class Asked:
    """The box convention a model was asked for, and the image window it resizes within
    (``resized-pixel`` only: its boxes are pixels of the resized image)."""

    box_format: str
    min_pixels: int | None = None
    max_pixels: int | None = None

    @classmethod
    def of(cls, box_format: str, window: tuple[int, int] | None = None) -> Asked:
        """The convention with its window: ``resized-pixel`` without one gets the Qwen2.5-VL
        processor's (what a server such as vLLM resizes within)."""
        if box_format == "resized-pixel" and window is None:
            window = (QWEN25_MIN_PIXELS, QWEN25_MAX_PIXELS)
        if box_format != "resized-pixel":
            window = None
        return cls(box_format, *(window or (None, None)))

    def kwargs(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


def model_settings(box_format: str) -> dict[str, dict[str, Any]]:
    """The YAML's ``lmms_eval_specific_kwargs``: ``default`` (the export's convention), then
    each model of :data:`MODEL_PRESETS` with its preset's convention (and window)."""
    settings = {"default": Asked.of(box_format).kwargs()}
    for model, preset in MODEL_PRESETS.items():
        settings[model] = Asked.of(api.family(preset).box_format, MODEL_WINDOWS.get(model)).kwargs()
    return settings


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
    hub_dataset: str | None = None,
) -> Path:
    """Write ``out/<benchmark>/`` (YAML, utils.py, docs.jsonl) and return that folder; a folder
    holding files this export did not write is refused unless ``force``.

    ``hub_dataset`` (``""`` for ``hf:`` data's own name, ``OWNER/NAME[@REV]`` for a Parquet
    dataset folder pushed there) makes the YAML name the Hub dataset, as lmms-eval's own tasks
    do: lmms-eval loads its rows with ``datasets`` (:mod:`.lmms_eval_hub`), no docs.jsonl.

    ``data`` is what ``gavel score --data`` takes. ``hf:`` data is recorded as the dataset at
    the commit read, each image by its place in the dataset, so the task finds them through
    the Hugging Face cache (or the Hub) wherever it runs; Parquet data is read from gavel's
    data cache, where it is materialized once."""
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
    local, options, hub = api.resolve_source(benchmark, str(data), options)
    rows = None
    if hub_dataset is not None:
        hub, rows = _hub_rows(benchmark, str(data), hub, hub_dataset)
    data = local.resolve()
    if options.image_root:
        options = api.TaskOptions(
            **{**options.as_dict(), "image_root": str(Path(options.image_root).resolve())}
        )
    sampling = {"frames": frames, "fps": fps, "max_frames": max_frames}
    described = api.describe_sampling(frames, fps, max_frames)  # checks the sampling flags
    requests = api.load_requests(benchmark, data, options, described)
    real = folder.resolve()  # the relative places are computed from its real path
    root = options.image_root
    if hub:  # the dataset's own places: the cache that holds it differs between machines
        place: Any = functools.partial(_in_dataset, base=media_base(data, root))
        recorded, root_place = {"hub": hub}, None
    else:
        place = functools.partial(_place, folder=real)
        recorded, root_place = _place(data, real), _place(Path(root), real) if root else None
    docs = b"".join(
        json.dumps(
            {"id": r.sample_id, "prompt": r.prompt, "media": [place(Path(p)) for p in r.images]}
        ).encode()
        + b"\n"
        for r in requests
    )
    settings = {
        "benchmark": benchmark,
        "data": recorded,
        "options": {**options.as_dict(), "image_root": root_place},
        "sampling": sampling,
    }
    if rows is not None:
        settings["rows"] = "hub"
    folder.mkdir(parents=True, exist_ok=True)
    files = [
        (folder / "utils.py", _utils_source(settings).encode()),
        (
            folder / f"{task_name(benchmark)}.yaml",
            _yaml(benchmark, options.box_format, rows).encode(),
        ),
    ]
    if rows is None:
        files.insert(0, (folder / "docs.jsonl", docs))
    # An earlier export's own files, unchanged, that this one no longer writes (an older
    # gavel's YAML, which lmms-eval would load as a second task); changed ones are the user's.
    written = {path.name for path, _ in files}
    stale = [entry for entry in _own_files(folder) if entry.name not in written]
    record = {path.name: sha256_of(payload) for path, payload in files}
    write_together([*files, (folder / RECORD, json.dumps(record, indent=2).encode())])
    for entry in stale:
        entry.unlink(missing_ok=True)
    return folder


def _hub_rows(benchmark: str, data: str, hub: str | None, name: str) -> tuple[str, HubRows]:
    """The ``hf:`` spec the task reads gold data from, and where lmms-eval loads the rows:
    ``hf:`` data at the commit read; a Parquet dataset folder as the repository ``name``
    (``OWNER/NAME[@REV]``) it is pushed to, with the folder's own config and split."""
    from gavel.sources import resolve_data
    from gavel.sources.spec import HUB_PREFIX, ParquetSpec, parse, parse_hub

    spec = parse(data)
    if hub is not None:
        if name:
            raise GavelError(f"--hub-dataset {name}: {data} names its dataset already; give "
                             "--hub-dataset alone")  # fmt: skip
    elif isinstance(spec, ParquetSpec) and spec.path.is_dir():
        if not name:
            raise GavelError(f"--hub-dataset: {data} is a Parquet folder; name the Hub "
                             "repository it is pushed to: --hub-dataset OWNER/NAME[@REVISION]")  # fmt: skip
        try:
            hub = str(parse_hub(HUB_PREFIX + name))
        except ConfigError:
            raise ConfigError(f"--hub-dataset {name!r}: expected OWNER/NAME[@REVISION], the "
                              "repository the folder is pushed to") from None  # fmt: skip
    else:
        raise GavelError(f"--hub-dataset: {data} is not Hub data (hf:OWNER/NAME) nor a Parquet "
                         "dataset folder (gavel data convert)")  # fmt: skip
    source = resolve_data(benchmark, data).source or {}
    rows = hub_rows(benchmark, hub, source)
    if source.get("split") and ":" not in hub[len(HUB_PREFIX) :]:
        hub = f"{hub}:{source['split']}"  # the same split however the Hub copy's card orders them
    return hub, rows


def media_base(data: Path, image_root: str | None) -> Path:
    """The folder a dataset's media places are relative to: its image root, else the data's
    own folder."""
    if image_root:
        return Path(image_root)
    return data if data.is_dir() else data.parent


def _place(path: Path, folder: Path) -> dict[str, str]:
    """A file's place as the task records it: relative to the task's folder (found again when
    the folder moves with its data) and absolute (when the folder moves alone)."""
    absolute = path.resolve()
    return {
        "relative": Path(os.path.relpath(absolute, folder)).as_posix(),
        "absolute": str(absolute),
    }


def _in_dataset(path: Path, base: Path) -> dict[str, str]:
    """A medium's place in a Hub dataset: relative to the dataset's media folder."""
    return {"data": Path(os.path.relpath(path.resolve(), base.resolve())).as_posix()}


def find(place: Any, folder: Path | None) -> str:
    """The path a recorded place names now: relative to the task's folder where that exists,
    else the absolute path (a plain string, as older exports wrote, as it is)."""
    if isinstance(place, str):
        return place
    if folder is not None and (folder / place["relative"]).exists():
        return str((folder / place["relative"]).resolve())
    return place["absolute"]


def _record(folder: Path) -> dict[str, str]:
    """What the last export into ``folder`` wrote (file name -> SHA-256); empty if none."""
    try:
        record = json.loads((folder / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def _own_files(folder: Path) -> list[Path]:
    """The files in ``folder`` an export wrote and nobody changed since."""
    if not folder.is_dir():
        return []
    record = _record(folder)
    return [
        entry
        for entry in folder.iterdir()
        if entry.name != RECORD
        and entry.is_file()
        and not entry.is_symlink()
        and record.get(entry.name) == file_sha256(entry)
    ]


def foreign_files(folder: Path) -> list[str]:
    """The names in ``folder`` that an export did not write, or that changed since."""
    if not folder.is_dir():
        return []
    own = {entry.name for entry in _own_files(folder)}
    return sorted(entry.name for entry in folder.iterdir() if entry.name not in own | {RECORD})


def _yaml(benchmark: str, box_format: str, rows: HubRows | None = None) -> str:
    per_model = ""
    if benchmark == "gavel":  # the only benchmark whose prompt and scoring have boxes
        per_model = "lmms_eval_specific_kwargs:\n" + "".join(
            f"  {model}:\n" + "".join(f"    {key}: {value}\n" for key, value in entry.items())
            for model, entry in model_settings(box_format).items()
        )
    metrics = "".join(
        f"  - metric: {metric_key(name)}\n"
        f"    aggregation: !function utils.{metric_key(name)}\n"
        "    higher_is_better: true\n"
        for name in HEADLINE_METRICS[benchmark]
    )
    return (
        f"# gavel's {benchmark} benchmark for lmms-eval (written by gavel export lmms-eval).\n"
        "# Prompts and media are gavel's; the metrics are gavel's scorer on the whole run.\n"
        f"task: {task_name(benchmark)}\n"
        f"{rows.yaml() if rows else _DOCS_YAML}"
        "output_type: generate_until\n"
        "doc_to_visual: !function utils.doc_to_visual\n"
        "doc_to_text: !function utils.doc_to_text\n"
        "doc_to_target: id\n"
        "generation_kwargs:\n"
        f"  max_new_tokens: {MAX_NEW_TOKENS}\n"
        "  temperature: 0\n"
        "  do_sample: false\n"
        "process_results: !function utils.process_results\n"
        f"{per_model}"
        "metric_list:\n"
        f"{metrics}"
        "metadata:\n"
        "  - version: 1.0\n"
    )


#: The dataset of a task with its documents beside it (read from the YAML's folder).
_DOCS_YAML = (
    "dataset_path: json\ndataset_kwargs:\n  data_files:\n    test: docs.jsonl\ntest_split: test\n"
)


def _utils_source(settings: dict[str, Any]) -> str:
    aggregations = "".join(
        f"{metric_key(name)} = task.aggregation({name!r})\n"
        for name in HEADLINE_METRICS[settings["benchmark"]]
    )
    return (
        f'"""lmms-eval functions of gavel\'s {settings["benchmark"]} task (written by gavel export '
        "lmms-eval).\n\nEach calls gavel (which must be importable where lmms-eval runs); the "
        'aggregations score\nthe whole run with gavel\'s scorer.\n"""\n\n'
        "from pathlib import Path\n\n"
        "from gavel.integrations.lmms_eval_task import GavelTask\n\n"
        f"task = GavelTask.shared({pprint.pformat(settings, sort_dicts=False)}, Path(__file__).parent)\n\n"
        "doc_to_visual = task.doc_to_visual\n"
        f"{'process_docs = task.process_docs' + chr(10) if settings.get('rows') else ''}"
        "doc_to_text = task.doc_to_text\n"
        "process_results = task.process_results\n"
        f"{aggregations}"
    )


#: The task object of each exported folder in this process (:meth:`GavelTask.shared`).
_SHARED: dict[tuple[str, str], GavelTask] = {}


class GavelTask:
    """The functions an exported task's ``utils.py`` hands to lmms-eval."""

    @classmethod
    def shared(cls, settings: dict[str, Any], folder: Path | None = None) -> GavelTask:
        """The one task object of an exported folder in this process. lmms-eval executes
        ``utils.py`` anew for each ``!function`` of the YAML, and its functions share what
        they learn: ``process_results`` keeps the convention ``doc_to_text`` asked for, and
        the aggregations score the run once."""
        key = (json.dumps(settings, sort_keys=True), str(folder))
        if key not in _SHARED:
            _SHARED[key] = cls(settings, folder)
        return _SHARED[key]

    def __init__(self, settings: dict[str, Any], folder: Path | None = None):
        self.benchmark = settings["benchmark"]
        self.folder = folder
        self._settings = settings
        self.sampling = settings.get("sampling") or {}
        self.metrics = HEADLINE_METRICS[self.benchmark]
        #: The convention each document's prompt asked for (lmms-eval hands the model's
        #: settings to doc_to_text only; process_results reads them back from here).
        self._asked: dict[str, Asked] = {}

    @functools.cached_property
    def _located(self) -> tuple[str, api.TaskOptions, Path | None]:
        """The data, the options and the folder of the dataset's media places, found where
        the task runs (a Hub dataset through the Hugging Face cache), once it is first used."""
        options = dict(self._settings["options"])
        data = self._settings["data"]
        if isinstance(data, dict) and "hub" in data:
            path, resolved = api.resolve_data(
                self.benchmark, data["hub"], api.TaskOptions(**{**options, "image_root": None})
            )
            return str(path), resolved, media_base(path, resolved.image_root)
        if options.get("image_root"):
            options["image_root"] = find(options["image_root"], self.folder)
        return find(data, self.folder), api.TaskOptions(**options), None

    @property
    def data(self) -> str:
        return self._located[0]

    @property
    def options(self) -> api.TaskOptions:
        return self._located[1]

    def _media(self, place: Any) -> str:
        if isinstance(place, dict) and "data" in place:
            return str(self._located[2] / place["data"])
        return find(place, self.folder)

    def doc_to_visual(
        self, doc: dict[str, Any], lmms_eval_specific_kwargs: Any = None
    ) -> list[Any]:
        """The images gavel sends, as the pixels the model would see from ``gavel generate``:
        an image file as it is, a video as gavel's sampled frames encoded as gavel encodes
        them (JPEG at its quality) and decoded again, so lmms-eval's own (lossless) encoding of
        them keeps gavel's pixels.

        lmms-eval hands it the model's settings too (a function of two parameters), where the
        model is asked, so the answer's convention is known even for a request whose prompt
        came from lmms-eval's request cache (``doc_to_text`` not called)."""
        from PIL import Image

        if lmms_eval_specific_kwargs is not None:
            self._asked[doc["id"]] = self.asked(lmms_eval_specific_kwargs)

        from gavel.media.kinds import VIDEO_SUFFIXES
        from gavel.media.pixels import apply_pixel_limit

        if "media" not in doc:  # a row of the Hub dataset (process_docs)
            return self._row_visuals(doc)
        visuals: list[Any] = []
        for place in doc["media"]:
            path = self._media(place)
            if Path(path).suffix.lower() in VIDEO_SUFFIXES:
                visuals.extend(self._sent_frames(Path(path)))
            else:
                apply_pixel_limit()
                with Image.open(path) as image:
                    visuals.append(image.convert("RGB"))
        return visuals

    def process_docs(self, dataset: Any) -> Any:
        """lmms-eval's ``process_docs`` of a task naming its Hub dataset: one document per
        question, with gavel's sample id (:func:`.lmms_eval_hub.documents`)."""
        return documents(
            self.benchmark, dataset, list(self._requests), self._settings["data"]["hub"]
        )

    @functools.cached_property
    def _requests(self) -> dict[str, Any]:
        """gavel's requests of the task's data by sample id, in the export's convention."""
        return {r.sample_id: r for r in api.load_requests(self.benchmark, self.data, self.options)}

    def _row_visuals(self, doc: dict[str, Any]) -> list[Any]:
        """A Hub row's medium as the model gets it: the row's image, or the row's video as
        gavel's sampled frames; a row without the bytes (an image the dataset keeps as a file
        of its repository), gavel's copy of that sample's medium."""
        from gavel.integrations.lmms_eval_hub import open_image, video_file

        cell = doc.get(MEDIUM[self.benchmark])
        if self.benchmark == "videohallucer":
            video = video_file(cell) or self._requests[doc["id"]].images[0]
            return self._sent_frames(Path(video))
        image = open_image(cell)
        if image is None:
            image = open_image({"bytes": Path(self._requests[doc["id"]].images[0]).read_bytes()})
        return [image]

    def _first_image(self, doc: dict[str, Any]) -> str | None:
        """The path of a document's first image (a Hub row's: gavel's copy of it)."""
        if "media" not in doc:
            return str(self._requests[doc["id"]].images[0])
        return self._media(doc["media"][0]) if doc["media"] else None

    @functools.cached_property
    def _builder(self) -> api.MessageBuilder:
        return api.MessageBuilder(**self.sampling)

    def _sent_frames(self, video: Path) -> list[Any]:
        """A video's frames as ``gavel generate`` sends them (its data URLs), decoded."""
        import base64
        import io

        from PIL import Image

        from gavel.requests import Request

        parts, _ = self._builder.content(Request("frames", self.benchmark, "", images=(video,)))
        frames = []
        for part in parts:
            if part["type"] == "image_url":
                encoded = part["image_url"]["url"].split(",", 1)[1]
                with Image.open(io.BytesIO(base64.b64decode(encoded))) as frame:
                    frames.append(frame.convert("RGB"))
        return frames

    def asked(self, lmms_eval_specific_kwargs: Any = None) -> Asked:
        """The convention of the model lmms-eval runs (its entry of the YAML's
        ``lmms_eval_specific_kwargs``); the export's own without one."""
        given = lmms_eval_specific_kwargs if isinstance(lmms_eval_specific_kwargs, dict) else {}
        if self.benchmark != "gavel" or not given.get("box_format"):
            return Asked.of(self.options.box_format)
        get_convention(given["box_format"])  # an unknown name is refused, naming the known
        window = None
        if given.get("min_pixels") or given.get("max_pixels"):
            window = (
                int(given.get("min_pixels") or QWEN25_MIN_PIXELS),
                int(given.get("max_pixels") or QWEN25_MAX_PIXELS),
            )
        return Asked.of(given["box_format"], window)

    def doc_to_text(self, doc: dict[str, Any], lmms_eval_specific_kwargs: Any = None) -> str:
        """gavel's prompt, asking for boxes in the convention of the model lmms-eval runs."""
        asked = self.asked(lmms_eval_specific_kwargs)
        self._asked[doc["id"]] = asked
        if asked.box_format == self.options.box_format and "prompt" in doc:
            return doc["prompt"]
        return self._prompts(asked.box_format)[doc["id"]]

    @functools.lru_cache(maxsize=8)  # noqa: B019 - one task object per exported folder
    def _prompts(self, box_format: str) -> dict[str, str]:
        """Each document's prompt asking for ``box_format`` (gavel's loader builds them)."""
        options = replace(self.options, box_format=box_format)
        return {
            r.sample_id: r.prompt for r in api.load_requests(self.benchmark, self.data, options)
        }

    def process_results(self, doc: dict[str, Any], results: list[str], **_: Any) -> dict:
        """The answer for every metric (each aggregation scores the whole run)."""
        asked = self._asked.get(doc["id"]) or Asked.of(self.options.box_format)
        # A gavel predictions line: lmms-eval's sample log keeps it (gavel score reads it).
        item: dict[str, Any] = {
            "id": doc["id"],
            "response": results[0] if results else None,
            "box_format": asked.box_format,
        }
        first = self._first_image(doc) if asked.min_pixels and asked.max_pixels else None
        if first and asked.min_pixels and asked.max_pixels:
            # resized-pixel: the model's boxes are pixels of the image resized in its window.
            from PIL import Image

            with Image.open(first) as image:
                width, height = image.size
            item["input_size"] = list(
                qwen_smart_resize(
                    width, height, min_pixels=asked.min_pixels, max_pixels=asked.max_pixels
                )
            )
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
        """gavel's metrics of a run (computed once for all of the task's metrics); each item is
        a predictions line with the convention its prompt asked for."""
        answers = [
            api.prediction_from_dict({"box_format": self.options.box_format, **item})
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
