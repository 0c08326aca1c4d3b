"""Loading VideoHallucer annotation files (docs/videohallucer.md describes the layout).

The official release keeps one JSON file per category, ``<root>/<category>/<category>.json``,
each a list of pairs::

    {"basic":         {"video": "a.mp4", "question": "Is there a baby?", "answer": "yes"},
     "hallucination": {"video": "a.mp4", "question": "Is there a doll?", "answer": "no"},
     "type": "subject"}

A pair's id is ``{category}/{index}``, the index being its 0-based position in the file. Any
problem raises a :class:`~gavel.errors.DataError` naming the file, the line where the pair
starts and the field (``[12].basic.answer``).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from gavel.benchmarks.gavel.data import safe_relative_path
from gavel.errors import DataError
from gavel.io.jsonl import parse_json, surrogate_field
from gavel.io.reading import read_regular
from gavel.records import Sample

#: The five categories of the leaderboard, in its column order; ``metrics.overall`` is the
#: unweighted mean of their paired accuracies.
LEADERBOARD = (
    "object_relation",
    "temporal",
    "semantic_detail",
    "external_factual",
    "external_nonfactual",
)
#: Every category a folder may hold, in loading order (the last two are not on the leaderboard).
CATEGORIES = (*LEADERBOARD, "interaction", "fact_detect")
#: The short names upstream's scripts use for the categories (``qa_type``).
UPSTREAM_NAMES = {
    "object_relation": "obj_rel",
    "temporal": "temporal",
    "semantic_detail": "semantic",
    "external_factual": "fact",
    "external_nonfactual": "nonfact",
    "interaction": "interaction",
    "fact_detect": "factdet",
}
SIDES = ("basic", "hallucination")
ANSWERS = ("yes", "no")


class VideoHallucerQuestion(msgspec.Struct, kw_only=True, gc=False):
    """One side of a pair, as written in the file (``answer`` is checked after decoding)."""

    video: str
    question: str
    answer: str
    #: Present on the hallucinated side of ``external_factual``.
    explanation: str | None = None


class _RawPair(msgspec.Struct, kw_only=True, gc=False):
    basic: VideoHallucerQuestion
    hallucination: VideoHallucerQuestion
    type: str | None = None


class VideoHallucerPair(Sample, kw_only=True, gc=False):
    """A basic question and its hallucinated twin; ``id`` is ``{category}/{index}``."""

    index: int
    type: str | None = None
    basic: VideoHallucerQuestion
    hallucination: VideoHallucerQuestion

    def question_id(self, side: str) -> str:
        """The id of one question of the pair: ``{category}/{index}/{side}``."""
        return f"{self.id}/{side}"

    def side(self, side: str) -> VideoHallucerQuestion:
        return self.basic if side == "basic" else self.hallucination


@dataclass(frozen=True)
class AnnotationFile:
    category: str
    path: Path
    sha256: str
    pairs: int


@dataclass
class VideoHallucerData:
    """The loaded pairs, in category then file order, and the files they came from."""

    pairs: list[VideoHallucerPair]
    files: list[AnnotationFile] = field(default_factory=list)

    @property
    def sha256(self) -> str:
        """One hash of the data: the file's, or for several files the SHA-256 of their
        ``sha256sum``-style listing (``<sha256>  <category>\\n`` per file, in loading order)."""
        if len(self.files) == 1:
            return self.files[0].sha256
        listing = "".join(f"{f.sha256}  {f.category}\n" for f in self.files)
        return hashlib.sha256(listing.encode()).hexdigest()

    @property
    def categories(self) -> list[str]:
        return [f.category for f in self.files]


_DECODER = msgspec.json.Decoder(list[_RawPair])
_FIELD = re.compile(r"at `\$(?:\[(\d+)\])?([^`]*)`")
_MISSING = re.compile(r"missing required field `([^`]+)`")


def annotation_files(path: Path, category: str | None = None) -> list[tuple[str, Path]]:
    """``(category, file)`` for a single file, a category folder or a folder in the official
    layout (``<root>/<category>/<category>.json``, or ``<root>/<category>.json``).

    Only the canonical file of each category is read: ``fact_detect_yn.json`` and
    ``interaction/conflict.jsonl`` (a raw variant) are ignored.
    """
    path = Path(path)
    if path.is_file():
        name = category or path.stem
        if name not in CATEGORIES:
            raise DataError(
                path,
                None,
                None,
                f"cannot tell the category from the file name {path.name!r}; name the file "
                f"<category>.json with one of: {', '.join(CATEGORIES)}",
            )
        return [(name, path)]
    if not path.is_dir():
        raise DataError(path, None, None, "not found")
    if category is not None:
        raise DataError(path, None, None, "a category can only be given for a single file")
    found = []
    for name in CATEGORIES:
        for candidate in (path / name / f"{name}.json", path / f"{name}.json"):
            if candidate.is_file():
                found.append((name, candidate))
                break
    if not found and path.name in CATEGORIES and (path / f"{path.name}.json").is_file():
        found.append((path.name, path / f"{path.name}.json"))
    if not found:
        raise DataError(
            path,
            None,
            None,
            "no VideoHallucer annotation file found; expected <category>/<category>.json "
            f"for at least one of: {', '.join(CATEGORIES)}",
        )
    return found


def _pair_lines(text: str) -> list[int]:
    """The line on which each element of a top-level JSON array starts (only on errors)."""
    decoder = json.JSONDecoder()
    lines: list[int] = []
    pos = text.index("[") + 1
    ws = re.compile(r"[\s,]*")
    while True:
        pos = ws.match(text, pos).end()  # type: ignore[union-attr]
        if pos >= len(text) or text[pos] == "]":
            return lines
        lines.append(text.count("\n", 0, pos) + 1)
        try:
            _, pos = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError):
            return lines


def _locate(path: Path, raw: bytes, error: msgspec.ValidationError) -> DataError:
    message = str(error).split(" - at ")[0]
    match = _FIELD.search(str(error))
    index = int(match.group(1)) if match and match.group(1) is not None else None
    rest = match.group(2) if match else ""
    if missing := _MISSING.search(str(error)):
        rest = f"{rest}.{missing.group(1)}"
    if index is None:
        return DataError(path, None, rest.lstrip(".") or None, f"{message} (expected a JSON list)")
    return _pair_error(path, raw, index, f"[{index}]{rest}", message)


def _pair_error(path: Path, raw: bytes, index: int, field_name: str, message: str) -> DataError:
    try:
        lines = _pair_lines(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        lines = []
    line = lines[index] if index < len(lines) else None
    return DataError(path, line, field_name, f"pair {index}: {message}")


def _decode(path: Path, raw: bytes) -> list[_RawPair]:
    try:
        return _DECODER.decode(raw)
    except msgspec.ValidationError as error:
        raise _locate(path, raw, error) from None
    except msgspec.DecodeError:
        pass
    except RecursionError:
        raise DataError(path, None, None, "JSON nested too deeply") from None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as error:
        raise DataError(path, error.lineno, None, f"not valid JSON ({error.msg})") from None
    except (ValueError, UnicodeDecodeError, RecursionError):
        parse_json(raw, path)  # names the problem: not UTF-8, too deep, too many digits
        raise
    where = surrogate_field(value)
    if where is not None:
        match = re.match(r"\[(\d+)\]", where)
        message = "lone surrogate escape (not Unicode text)"
        if match:
            raise _pair_error(path, raw, int(match.group(1)), where, message)
        raise DataError(path, None, where or None, message)
    # Python's json accepted what msgspec refused (NaN, Infinity): still not valid here.
    raise DataError(path, None, None, "not valid JSON (non-standard value such as NaN)")


def _check(path: Path, raw: bytes, index: int, pair: _RawPair) -> None:
    for side in SIDES:
        question: VideoHallucerQuestion = getattr(pair, side)
        answer = question.answer.strip().lower()
        if answer not in ANSWERS:
            raise _pair_error(
                path,
                raw,
                index,
                f"[{index}].{side}.answer",
                f"answer must be 'yes' or 'no', got {question.answer!r}",
            )
        question.answer = answer
        if not question.question.strip():
            raise _pair_error(path, raw, index, f"[{index}].{side}.question", "empty question")
        video, error = safe_relative_path(question.video)
        if error or video is None:
            message = (error or "invalid video path").replace("image path", "video path")
            raise _pair_error(path, raw, index, f"[{index}].{side}.video", message)
        question.video = video


def load_file(path: Path, category: str) -> tuple[list[VideoHallucerPair], AnnotationFile]:
    """The pairs of one category file, validated."""
    try:
        raw = read_regular(path)
    except OSError as error:
        raise DataError(path, None, None, f"cannot read ({error.strerror})") from None
    decoded = _decode(path, raw)
    if not decoded:
        raise DataError(path, None, None, "no pairs in file")
    pairs = []
    for index, pair in enumerate(decoded):
        _check(path, raw, index, pair)
        pairs.append(
            VideoHallucerPair(
                id=f"{category}/{index}",
                category=category,
                index=index,
                type=pair.type,
                basic=pair.basic,
                hallucination=pair.hallucination,
            )
        )
    sha = hashlib.sha256(raw).hexdigest()
    return pairs, AnnotationFile(category, Path(path), sha, len(pairs))


def load_dataset(path: str | Path, category: str | None = None) -> VideoHallucerData:
    """Every category found at ``path`` (a file, a category folder or the release folder).

    ``category`` names the category of a single file whose name is not ``<category>.json``.
    """
    data = VideoHallucerData(pairs=[])
    for name, file in annotation_files(Path(path), category):
        pairs, info = load_file(file, name)
        data.pairs.extend(pairs)
        data.files.append(info)
    return data


def load_pairs(path: str | Path, category: str | None = None) -> list[VideoHallucerPair]:
    """The pairs at ``path`` (see :func:`load_dataset`)."""
    return load_dataset(path, category).pairs


def video_root(data: Path) -> Path:
    """The release folder (``<root>/<category>/videos/``) for a data path given as the release
    folder, a category folder, or a category's JSON file."""
    if data.is_file():
        return data.parent.parent
    if (data / f"{data.name}.json").is_file():
        return data.parent
    return data


def question_ids(pair: VideoHallucerPair) -> tuple[str, str]:
    """The prediction ids of a pair's two questions (basic, then hallucinated)."""
    return tuple(pair.question_id(side) for side in SIDES)  # type: ignore[return-value]
