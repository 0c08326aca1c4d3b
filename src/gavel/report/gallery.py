"""The per-sample views of the HTML report: what each gallery card shows, as plain JSON data.

The page's script renders a page of cards at a time from this data with ``textContent`` only,
so no text from a data file or a model is ever parsed as HTML. Images are written next to the
page as small JPEG thumbnails whose names are hashes of the source file (never derived from a
sample id or model text), and only files that lie inside the data file's folder are read.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISREG
from typing import Any

from gavel.errors import DataError, GavelError
from gavel.io.jsonl import parse_json
from gavel.io.reading import bounded_lines
from gavel.metrics.grounding import IOU_TOLERANCE
from gavel.records import Result

#: Longest side of an image thumbnail: sharper for small runs, lighter for large ones.
THUMB_SMALL_RUN = 640
THUMB_LARGE_RUN = 320
LARGE_RUN_IMAGES = 300
FRAME_SIDE = 192
#: At most this many distinct videos get frame thumbnails (decoding is the slow part).
MAX_VIDEOS = 200
FRAMES_PER_VIDEO = 4
#: Raw model responses are shown up to this many characters.
MAX_RESPONSE = 1500
THUMBS = "thumbs"
FRAMES = "frames"


@dataclass
class RunView:
    """One scored run as the report reads it."""

    name: str
    path: Path
    result: Result
    raw: dict[str, Any]
    scores: list[dict[str, Any]] | None
    notes: list[str] = field(default_factory=list)

    @property
    def folder(self) -> Path:
        return self.path.parent

    @property
    def benchmark(self) -> str:
        return self.result.benchmark

    def data_path(self) -> Path | None:
        return find_input(self.result.manifest.data_file, self.folder)

    def predictions_path(self) -> Path | None:
        return find_input(self.result.manifest.predictions_file, self.folder)


def find_input(recorded: str | None, folder: Path) -> Path | None:
    """A path recorded in a manifest: as written (absolute, or relative to the working folder),
    else relative to the run's folder; None when neither exists."""
    if not recorded:
        return None
    path = Path(recorded)
    if path.exists():
        return path
    if not path.is_absolute() and (folder / path).exists():
        return folder / path
    return None


def responses(path: Path | None) -> dict[str, str]:
    """Sample id -> the raw response (or the error) of a predictions file, shortened; lines that
    are not JSON objects are skipped (scoring reported them already)."""
    found: dict[str, str] = {}
    if path is None or not path.is_file():
        return found
    with path.open("rb") as handle:
        for line in bounded_lines(handle, path):
            try:
                record = parse_json(line, path)
            except DataError:  # too deep, a lone surrogate, not JSON: scoring refused it already
                continue
            if not isinstance(record, dict) or not isinstance(record.get("id"), str):
                continue
            text = record.get("response")
            if not isinstance(text, str):
                error = record.get("error")
                text = f"(model error) {error}" if isinstance(error, str) else None
            if text is not None:
                found[record["id"]] = shorten(text, MAX_RESPONSE)
    return found


def shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"… [{len(text) - limit} more characters]"


def _inside(path: Path, root: Path) -> bool:
    real_root = os.path.realpath(root)
    try:
        return os.path.commonpath([real_root, os.path.realpath(path)]) == real_root
    except ValueError:
        return False


def _key(path: Path, extra: str) -> str | None:
    """A name for what is made of the regular file at ``path`` (None: no such file; a FIFO
    or a device is none, as Pillow would block on one or read it without end)."""
    try:
        stat = path.stat()
    except OSError:
        return None
    if not S_ISREG(stat.st_mode):
        return None
    text = f"{os.path.realpath(path)}\0{stat.st_size}\0{stat.st_mtime_ns}\0{extra}"
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def write_thumbnail(source: Path, out: Path, side: int) -> str | None:
    """A JPEG thumbnail of ``source`` under ``out/thumbs/``; its path relative to ``out``, or
    None when the image cannot be read. An existing thumbnail of the same file is reused."""
    key = _key(source, f"thumb{side}")
    if key is None:
        return None
    relative = f"{THUMBS}/{key}.jpg"
    target = out / relative
    if target.is_file():
        return relative
    try:
        from PIL import Image

        from gavel.media.pixels import apply_pixel_limit

        apply_pixel_limit()  # a huge image gets no thumbnail (and no warning is printed)
        with Image.open(source) as image:
            image.draft("RGB", (side, side))  # JPEG: decode at a reduced scale, much faster
            rgb = image.convert("RGB")
            rgb.thumbnail((side, side))
            temp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
            rgb.save(temp, "JPEG", quality=82, optimize=True)
            os.replace(temp, target)
    except Exception:  # Pillow raises many types for unreadable files
        return None
    return relative


def write_thumbnails(sources: Iterable[Path], out: Path) -> dict[Path, str | None]:
    """Thumbnails of many images in parallel (Pillow decodes without holding the GIL)."""
    unique = list(dict.fromkeys(sources))
    if not unique:
        return {}
    (out / THUMBS).mkdir(parents=True, exist_ok=True)
    side = THUMB_SMALL_RUN if len(unique) <= LARGE_RUN_IMAGES else THUMB_LARGE_RUN
    workers = max(1, min(8, os.cpu_count() or 1))
    with ThreadPoolExecutor(workers) as pool:
        made = list(pool.map(lambda p: write_thumbnail(p, out, side), unique))
    return dict(zip(unique, made, strict=True))


def write_frames(video: Path, out: Path) -> list[str]:
    """Four evenly spaced frames of a video as small JPEGs under ``out/frames/``."""
    key = _key(video, f"frames{FRAMES_PER_VIDEO}x{FRAME_SIDE}")
    if key is None:
        return []
    names = [f"{FRAMES}/{key}-{i}.jpg" for i in range(FRAMES_PER_VIDEO)]
    if all((out / n).is_file() for n in names):
        return names
    from PIL import Image

    from gavel.media.frames import FrameSampling, sample_frames

    try:
        frames = sample_frames(video, FrameSampling(count=FRAMES_PER_VIDEO))
    except GavelError:
        return []
    (out / FRAMES).mkdir(parents=True, exist_ok=True)
    written = []
    for name, array in zip(names, frames.images, strict=False):
        image = Image.fromarray(array)
        image.thumbnail((FRAME_SIDE, FRAME_SIDE))
        image.save(out / name, "JPEG", quality=80)
        written.append(name)
    return written


def _boxes(values: Any) -> list[list[float]]:
    """Only four finite numbers per box pass; anything else in a score file is dropped."""
    boxes = []
    for box in values or []:
        if isinstance(box, list | tuple) and len(box) == 4:
            try:
                numbers = [float(v) for v in box]
            except (TypeError, ValueError):
                continue
            if all(math.isfinite(v) for v in numbers):
                boxes.append([round(v, 2) for v in numbers])
    return boxes


def _number(value: Any, digits: int = 4) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return round(float(value), digits)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


# --- GAVEL ----------------------------------------------------------------------------------

#: The gallery's outcome filter values, in the order they are offered.
GAVEL_OUTCOMES = ("hit", "miss", "unparseable", "error", "missing", "skipped")


def gavel_outcome(score: dict[str, Any]) -> str:
    """``hit``: an answer that counts as right: IoU >= 0.5 (A@0.5) for a sample with gold
    boxes, the right verdict for one without; ``miss``: a parsed answer that does not;
    ``error``: a model or judge error; else the score's own outcome."""
    outcome = score.get("outcome")
    if outcome in ("model_error", "judge_error"):
        return "error"
    if outcome != "ok":
        return str(outcome) if outcome in GAVEL_OUTCOMES else "error"
    if score.get("n_gold_boxes"):
        iou = _number(score.get("iou"), 12)
        return "hit" if iou is not None and iou >= 0.5 - IOU_TOLERANCE else "miss"
    return "hit" if score.get("verdict_pred") == score.get("verdict_true") else "miss"


def _load_gavel_data(
    path: Path, image_root: str | Path | None = None
) -> tuple[list[Any], Path, str | None, str | None]:
    """(samples, image root, sha256, problem) of a GAVEL data file read with ``image_root``
    (see :func:`chosen_image_root`), else the data file's folder."""
    from gavel.benchmarks.gavel.data import load_samples

    try:
        samples, loader = load_samples(path, image_root)
    except GavelError as error:
        return [], path.parent, None, f"data file could not be read: {error}"
    return samples, loader.image_root, loader.sha256, None


def chosen_image_root(
    data: Path, recorded: Any, given: Path | None
) -> tuple[Path | None, str | None]:
    """The folder GAVEL images are read from, and a note when a recorded one is not used.

    A results file is data: the ``image_root`` it records is followed only when it lies inside
    the data file's folder. Anywhere else is read only when the user names it (``given``), so
    a results file from elsewhere cannot make the report read, say, a home folder.
    """
    if given is not None:
        return given, None
    if not isinstance(recorded, str) or not recorded:
        return None, None
    folder = data.parent
    candidate = Path(recorded) if Path(recorded).is_absolute() else Path.cwd() / recorded
    if _inside(candidate, folder):
        return candidate, None
    return None, (
        f"the run was scored with images from {recorded!r}, outside the data file's folder; "
        "images are shown only from there unless `gavel report --image-root` names the folder"
    )


def gavel_gallery(
    runs: list[RunView], out: Path, *, image_root: Path | None = None
) -> dict[str, Any]:
    """One card per (sample, run): sample fields once in ``samples``, answers in ``items``.
    ``image_root``: the folder the user named for the images (see chosen_image_root)."""
    samples: list[dict[str, Any]] = []
    items: list[dict[str, Any]] = []
    notes: list[str] = []
    by_data: dict[str, list[tuple[int, RunView]]] = {}
    for number, run in enumerate(runs):
        if run.scores is None:
            notes.append(f"{run.name}: no per-sample scores, so no gallery cards")
            continue
        data = run.data_path()
        key = str(data.resolve()) if data else f"missing:{run.result.manifest.data_file}"
        by_data.setdefault(key, []).append((number, run))
    images: list[Path] = []
    image_of: list[Path | None] = []
    for key, group in by_data.items():
        loaded: list[Any] = []
        root = Path(".")
        if not key.startswith("missing:"):
            recorded = group[0][1].result.manifest.settings.get("image_root")
            chosen, note = chosen_image_root(Path(key), recorded, image_root)
            if note:
                notes.append(note)
            loaded, root, sha, problem = _load_gavel_data(Path(key), chosen)
            if problem:
                notes.append(problem)
            expected = group[0][1].result.manifest.data_sha256
            if sha and expected and sha != expected:
                notes.append(
                    f"{key}: the data file changed since it was scored (SHA-256 differs); "
                    "captions and gold boxes shown are the file's current ones"
                )
        else:
            notes.append(
                f"data file {key.removeprefix('missing:')!r} not found: "
                "cards show the scores without image, caption or gold boxes"
            )
        index_of: dict[str, int] = {}
        for sample in loaded:
            path = root / sample.image
            image = path if path.is_file() and _inside(path, root) else None
            index_of[sample.id] = len(samples)
            samples.append(
                {
                    "id": sample.id,
                    "w": sample.width,
                    "h": sample.height,
                    "cap": sample.caption,
                    "ex": sample.explanation,
                    "c": sample.column,
                    "g": _boxes(sample.boxes),
                    "img": None,
                }
            )
            image_of.append(image)
            if image is not None:
                images.append(image)
        per_run = [
            ({str(s.get("id")): s for s in run.scores or []}, responses(run.predictions_path()))
            for _, run in group
        ]
        order = list(index_of)
        for scores, _ in per_run:  # ids scored but not in the (current) data, at the end
            order += [i for i in scores if i not in index_of]
        for sample_id in dict.fromkeys(order):
            if sample_id not in index_of:
                index_of[sample_id] = len(samples)
                samples.append(
                    {"id": sample_id, "w": 0, "h": 0, "cap": None, "ex": None, "c": None, "g": []}
                )
                image_of.append(None)
            sample_index = index_of[sample_id]
            for (number, _), (scores, said) in zip(group, per_run, strict=True):
                score = scores.get(sample_id)
                if score is None:
                    continue
                column = samples[sample_index]["c"] or _text(score.get("column"))
                samples[sample_index]["c"] = column
                items.append(
                    {
                        "s": sample_index,
                        "r": number,
                        "c": column,
                        "o": gavel_outcome(score),
                        "oc": _text(score.get("outcome")),
                        "iou": _number(score.get("iou")),
                        "vt": score.get("verdict_true"),
                        "vp": score.get("verdict_pred"),
                        "p": _boxes(score.get("pred_boxes")),
                        "bs": _text(score.get("box_status")),
                        "ax": _text(score.get("explanation")),
                        "js": _judge_text(score),
                        "d": _text(score.get("detail")),
                        "raw": said.get(sample_id),
                    }
                )
    thumbs = write_thumbnails(images, out)
    for sample, image in zip(samples, image_of, strict=True):
        sample["img"] = thumbs.get(image) if image is not None else None
        if image is not None and sample["img"] is None:
            sample["bad"] = True
    return {
        "kind": "gavel",
        "runs": [run.name for run in runs],
        "samples": samples,
        "items": items,
        "notes": notes,
    }


def _judge_text(score: dict[str, Any]) -> str | None:
    """The explanation judge's verdict on one sample, as shown on its card."""
    status = score.get("judge_status")
    if status is None:
        return None
    if status == "judge_error":
        return "judge_error (no valid reply; not in the means)"
    value = score.get("judge_score")
    text = f"{value}/5 (= {20 * value})" if isinstance(value, int) else "–"
    if status == "not_answered":
        return text + " · the model gave no answer"
    reason = _text(score.get("judge_reason"))
    return text + (f" · {reason}" if reason else "")


# --- DetailVerifyBench ----------------------------------------------------------------------

#: Token classes: 0 clean, 1 both (hit), 2 gold only (missed), 3 predicted only (false alarm).
TOKEN_CLASSES = ("", "tp", "fn", "fp")


def caption_segments(
    caption: str, gold: Iterable[int], pred: Iterable[int] | None
) -> list[list[Any]]:
    """The caption cut into ``[text, class]`` runs: each token takes its class from the gold
    and predicted flags (token indices, :data:`gavel.metrics.tokens.TOKEN_PATTERN` tokens);
    text between two tokens takes what both sides share, so a flagged phrase stays one run."""
    from gavel.metrics.tokens import TOKEN_PATTERN

    gold_set, pred_set = set(gold), set(pred or ())
    pieces: list[tuple[str, int]] = []
    position = 0
    previous = 0
    for index, match in enumerate(TOKEN_PATTERN.finditer(caption)):
        bits = (index in gold_set) | ((index in pred_set) << 1)
        if match.start() > position:
            pieces.append((caption[position : match.start()], previous & bits))
        pieces.append((match.group(), bits))
        previous = bits
        position = match.end()
    if position < len(caption):
        pieces.append((caption[position:], 0))
    # bits: 1 gold, 2 predicted -> class: 3 both -> 1 (tp), 1 -> 2 (fn), 2 -> 3 (fp)
    to_class = {0: 0, 3: 1, 1: 2, 2: 3}
    merged: list[list[Any]] = []
    for text, bits in pieces:
        cls = to_class[bits]
        if merged and merged[-1][1] == cls:
            merged[-1][0] += text
        else:
            merged.append([text, cls])
    return merged


def _load_dvb(path: Path) -> tuple[dict[str, Any], str | None]:
    from gavel.benchmarks.detailverify.data import read_samples

    try:
        samples, _ = read_samples(path)
    except GavelError as error:
        return {}, f"data file could not be read: {error}"
    return {s.id: s for s in samples}, None


def detailverify_gallery(runs: list[RunView], out: Path) -> dict[str, Any]:
    """One card per (sample, run): the caption with gold and predicted tokens highlighted.

    The caption's tokens line up with the gold flags when the caption is the gold text without
    tags (always for modified samples), and with the predicted flags when the answer was
    faithful (the answer without tags has exactly the caption's tokens), as the scorer checks.
    Where a side does not line up, its highlights are left out, a note says so, and the raw
    answer is shown as text.
    """
    from gavel.benchmarks.detailverify.data import DetailVerifySample
    from gavel.metrics.tokens import TOKEN_PATTERN, mark_positions

    items: list[dict[str, Any]] = []
    notes: list[str] = []
    cache: dict[str, tuple[dict[str, Any], str | None]] = {}
    for number, run in enumerate(runs):
        if run.scores is None:
            notes.append(f"{run.name}: no per-sample scores, so no cards")
            continue
        data = run.data_path()
        if data is None:
            notes.append(f"{run.name}: data file not found; only the raw answers are shown")
            samples: dict[str, Any] = {}
        else:
            key = str(data.resolve())
            if key not in cache:
                cache[key] = _load_dvb(data)
            samples, problem = cache[key]
            if problem:
                notes.append(f"{run.name}: {problem}")
        said = responses(run.predictions_path())
        for score in run.scores:
            sample_id = str(score.get("id"))
            sample: DetailVerifySample | None = samples.get(sample_id)
            item: dict[str, Any] = {
                "id": sample_id,
                "r": number,
                "c": _text(score.get("domain")) or "–",
                "o": _text(score.get("outcome")) or "–",
                "v": _text(score.get("validity")),
                "t": [_number(v) for v in score.get("token") or []] or None,
                "gold_n": len(score.get("gold_flags") or []),
                "pred_n": len(score.get("pred_flags") or []),
                "raw": said.get(sample_id),
                "d": _text(score.get("detail")),
                "seg": None,
                "warn": [],
            }
            if sample is not None:
                gold_tokens = mark_positions(sample.tagged, sample.labels).tokens
                caption_tokens = TOKEN_PATTERN.findall(sample.caption)
                gold = score.get("gold_flags") or []
                pred = score.get("pred_flags") if score.get("pred_tokens") else None
                if gold_tokens != caption_tokens:
                    item["warn"].append(
                        "the gold tags belong to another text than the caption shown "
                        "(unmodified sample): gold highlights left out; gold text below"
                    )
                    item["gold_text"] = sample.tagged
                    gold = []
                if pred is not None and score.get("faithful") is False:
                    item["warn"].append(
                        "the answer changed the caption's words: predicted highlights left "
                        "out; the raw answer is below"
                    )
                    pred = None
                item["seg"] = caption_segments(sample.caption, gold, pred)
                item["labels"] = [[t, list(c)] for t, c in sample.labels][:50]
            if not item["warn"]:
                del item["warn"]
            items.append(item)
    return {
        "kind": "detailverify",
        "runs": [run.name for run in runs],
        "items": items,
        "notes": notes,
        "classes": list(TOKEN_CLASSES),
    }


# --- VideoHallucer --------------------------------------------------------------------------


def _vh_outcome(sides: list[dict[str, Any]]) -> str:
    if len(sides) == 2 and all(s.get("correct") for s in sides):
        return "pair right"
    for side in sides:
        if side.get("outcome") in ("missing", "model_error", "unparseable"):
            return {"model_error": "error"}.get(side["outcome"], side["outcome"])
    return "pair wrong"


#: How many answers each answer rule could not read are quoted in the gallery's notes.
UNREAD_EXAMPLES = 3
UNREAD_TEXT = 160


def _unread_label(sides: list[dict[str, Any]]) -> str:
    """Which rules could not read some answer of a pair (the ``u`` filter of the cards)."""
    rules = sorted({rule for side in sides for rule in side.get("u", {})})
    if not rules:
        return "read by both rules"
    return "unread: " + (" and ".join(rules) if len(rules) > 1 else rules[0])


def unread_notes(name: str, scores: list[dict[str, Any]], said: dict[str, str]) -> list[str]:
    """Per answer rule: how many answers it could not read, why, and a few of them quoted, so
    a reader sees what the chosen rule's number stands on."""
    notes = []
    for rule in ("official", "strict"):
        unread = [s for s in scores if isinstance(s.get("unread"), dict) and rule in s["unread"]]
        if not unread:
            continue
        reasons: dict[str, int] = {}
        for score in unread:
            reason = str(score["unread"][rule])
            reasons[reason] = reasons.get(reason, 0) + 1
        why = ", ".join(f"{reason} {count}" for reason, count in sorted(reasons.items()))
        quoted = "; ".join(
            f"{score.get('id')}: “{shorten(said.get(str(score.get('id')), ''), UNREAD_TEXT)}”"
            for score in unread[:UNREAD_EXAMPLES]
        )
        notes.append(
            f"{name}: the {rule} rule could not read {len(unread)} of {len(scores)} answers "
            f"({why}); e.g. {quoted}"
        )
    return notes


def videohallucer_gallery(runs: list[RunView], out: Path) -> dict[str, Any]:
    """One card per (pair, run): both questions, the gold answers, the model's answers, and four
    frames of each video when the video files are found (for the first :data:`MAX_VIDEOS`)."""
    from gavel.benchmarks.videohallucer.data import load_dataset, video_root
    from gavel.benchmarks.videohallucer.prompt import video_path

    items: list[dict[str, Any]] = []
    notes: list[str] = []
    frames: dict[Path, list[str]] = {}
    skipped_videos = 0
    for number, run in enumerate(runs):
        if run.scores is None:
            notes.append(f"{run.name}: no per-sample scores, so no cards")
            continue
        data = run.data_path()
        pairs: dict[str, Any] = {}
        root = None
        if data is None:
            notes.append(f"{run.name}: data folder not found; no questions or frames")
        else:
            try:
                pairs = {p.id: p for p in load_dataset(data).pairs}
                root = video_root(data)
            except GavelError as error:
                notes.append(f"{run.name}: data could not be read: {error}")
        hallucination_video = run.result.manifest.settings.get("hallucination_video", "own")
        if hallucination_video not in ("own", "basic"):
            hallucination_video = "own"
        said = responses(run.predictions_path())
        notes.extend(unread_notes(run.name, run.scores, said))
        grouped: dict[str, list[dict[str, Any]]] = {}
        for score in run.scores:
            grouped.setdefault(str(score.get("pair")), []).append(score)
        for pair_id, sides in grouped.items():
            pair = pairs.get(pair_id)
            rows = []
            for score in sorted(sides, key=lambda s: s.get("side") != "basic"):
                side = _text(score.get("side")) or "?"
                row: dict[str, Any] = {
                    "side": side,
                    "q": None,
                    "gold": _text(score.get("gold")),
                    "ans": _text(score.get("answer")),
                    "ok": bool(score.get("correct")),
                    "oc": _text(score.get("outcome")),
                    "raw": said.get(str(score.get("id"))),
                    "fr": [],
                    "u": {
                        str(rule): str(why)
                        for rule, why in (score.get("unread") or {}).items()
                        if rule in ("official", "strict")
                    }
                    if isinstance(score.get("unread"), dict)
                    else {},
                }
                if pair is not None and root is not None and side in ("basic", "hallucination"):
                    row["q"] = pair.side(side).question
                    video = video_path(pair, side, root, hallucination_video=hallucination_video)
                    if video.is_file() and _inside(video, root):
                        if video not in frames:
                            if len(frames) < MAX_VIDEOS:
                                frames[video] = write_frames(video, out)
                            else:
                                skipped_videos += 1
                        row["fr"] = frames.get(video, [])
                rows.append(row)
            items.append(
                {
                    "id": pair_id,
                    "r": number,
                    "c": _text(sides[0].get("category")) or "–",
                    "t": _text(sides[0].get("type")),
                    "o": _vh_outcome(sides),
                    "u": _unread_label(rows),
                    "sides": rows,
                }
            )
    if skipped_videos:
        notes.append(f"frames are shown for the first {MAX_VIDEOS} videos only")
    return {
        "kind": "videohallucer",
        "runs": [run.name for run in runs],
        "items": items,
        "notes": notes,
    }
