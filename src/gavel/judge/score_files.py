"""Reading one rater's per-sample explanation scores, whatever file they come in.

Agreement is measured between judges and people, and each writes scores its own way, so four
layouts are read, told apart by their content (not by the file name):

1. a ``results.json`` of ``gavel score --judge`` (or the run folder holding it): the scores are
   the ``judge_score`` of the per-sample file beside it, ``results.scores.jsonl``, and the
   judge's name (``metrics.explanation.judge.name``) labels the rater;
2. such a ``*.scores.jsonl`` file given directly;
3. JSONL of ``{"id": ..., "score": 1-5, "column": ...}`` (``column`` optional), as people
   annotating by hand or another tool would write it;
4. one JSON object mapping id -> score.

A sample may be present without a score: the judge gave no valid reply (``judge_error``), the
score is ``null``, or the model gave no answer (``not_answered``, scored 1 by rule, not by the
judge, so it says nothing about the judge and is not compared). Such samples are kept with
their reason, to be counted, never turned into a number. Anything else that is not an integer
from 1 to 5 is an error naming the file and line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gavel.errors import DataError
from gavel.io.jsonl import parse_json, refuse_non_finite, shown, surrogate_field
from gavel.io.reading import read_regular
from gavel.io.run_files import check_run_files, scores_path
from gavel.judge.items import JUDGE_ERROR, NOT_ANSWERED, OK, STATUSES
from gavel.metrics.agreement import SCALE
from gavel.records import CATEGORY_COLUMNS

#: What a file was read as (``ScoreFile.kind``).
RUN = "run"
SCORES = "scores"
RECORDS = "records"
MAPPING = "mapping"

#: Reasons a present sample has no score.
NO_SCORE = "no score"

#: Fields that only a per-sample line of ``gavel score`` has.
_SCORE_LINE_FIELDS = ("outcome", "verdict_true", "judge_score", "judge_status")


@dataclass
class ScoreFile:
    """One rater's scores: the file named, the file read, and each sample's score or reason."""

    path: Path
    #: The file the scores were read from (``results.scores.jsonl`` for a results.json).
    source: Path
    kind: str
    #: The rater's default name: the judge's name for a run, else the file name.
    label: str
    #: Samples with a score, in file order.
    scores: dict[str, int] = field(default_factory=dict)
    #: Samples present without a score, and why (``judge_error``, ``not_answered``, ...).
    unscored: dict[str, str] = field(default_factory=dict)
    #: Table 1 column of the samples whose file says it.
    columns: dict[str, str] = field(default_factory=dict)
    #: Line of ``source`` each sample is on (None for a JSON object the key was not found in).
    lines: dict[str, int | None] = field(default_factory=dict)

    @property
    def ids(self) -> list[str]:
        """Every sample present, scored or not, in file order."""
        return list(self.lines)


def read_scores(path: str | Path) -> ScoreFile:
    """Read a rater's scores from any of the four layouts (see the module docstring)."""
    path = Path(path)
    if path.is_dir():
        inside = path / "results.json"
        if not inside.is_file():
            raise DataError(path, None, None, "is a folder without results.json")
        path = inside
    text = _read_text(path)
    document, error = _whole_document(path, text)
    if error is None:
        if isinstance(document, dict) and "benchmark" in document and "metrics" in document:
            refuse_non_finite(document, path)  # as `gavel report` does
            return _read_run(path, document)
        if isinstance(document, dict) and _is_record(document):
            return _read_lines(path, path, text, label=_stem(path))
        if isinstance(document, dict):
            return _read_mapping(path, text, document)
        raise DataError(path, None, None, _LAYOUTS)
    if _first_line_parses(text) or error.msg == "Extra data":
        return _read_lines(path, path, text, label=_stem(path))
    raise DataError(path, error.lineno, None, f"not valid JSON ({error.msg}, column {error.colno})")


_LAYOUTS = (
    "expected a results.json of `gavel score --judge`, its .scores.jsonl, JSONL of "
    '{"id": ..., "score": 1-5}, or a JSON object mapping id to score'
)


def _read_text(path: Path) -> str:
    try:
        text = read_regular(path).decode("utf-8-sig")  # a BOM as the data readers take it
    except FileNotFoundError:
        raise DataError(path, None, None, "file not found") from None
    except UnicodeDecodeError as error:
        raise DataError(path, None, None, f"not UTF-8 text ({error.reason})") from None
    if not text.strip():
        raise DataError(path, None, None, "is empty")
    return text


def _whole_document(path: Path, text: str) -> tuple[Any, json.JSONDecodeError | None]:
    """The file as one JSON value, or the error (JSONL fails with "Extra data" on line 2)."""
    try:
        document = json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as error:
        return None, error
    except RecursionError:
        if "\n" in text.strip():  # JSONL: the line reader names the line
            return None, json.JSONDecodeError("Extra data", text, 0)
        raise DataError(path, 1, None, "JSON nested too deeply") from None
    except _DuplicateKey as error:
        if "\n" in text.strip() and _first_line_parses(text):
            # JSONL: the line reader reports the duplicate with its line.
            return None, json.JSONDecodeError("Extra data", text, 0)
        lines = _lines_of_key(text, error.key)
        where = lines[1] if len(lines) > 1 else None
        raise DataError(path, where, error.key, "given twice") from None
    except ValueError:  # an integer too long to convert: parse_json says so
        parse_json(text, path)
        raise
    if (surrogate := surrogate_field(document)) is not None:
        raise DataError(path, None, surrogate or None, "lone surrogate escape (not Unicode text)")
    return document, None


class _DuplicateKey(ValueError):
    def __init__(self, key: str):
        self.key = key
        super().__init__(key)


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A dict, refusing a key given twice: json would silently keep the last score."""
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKey(key)
        result[key] = value
    return result


def _first_line_parses(text: str) -> bool:
    """Does the first non-blank line stand alone as JSON? Then the file is JSONL, and a broken
    later line is reported by the line reader; otherwise it is a broken JSON document."""
    first = next(line for line in text.splitlines() if line.strip())
    try:
        json.loads(first)
    except RecursionError:
        return "\n" in text.strip()  # a deep first line: the line reader says so
    except ValueError:
        return False
    return True


def _is_record(value: dict[str, Any]) -> bool:
    """One line of JSONL (a file of a single record) rather than an id -> score mapping."""
    return isinstance(value.get("id"), str | int) and (
        "score" in value or any(name in value for name in _SCORE_LINE_FIELDS)
    )


def _stem(path: Path) -> str:
    """``human.jsonl`` -> ``human``; ``a/results.scores.jsonl`` -> ``results``."""
    name = path.name
    for suffix in (".scores.jsonl", ".jsonl", ".json"):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return path.stem or name


def _judge_name(result: dict[str, Any]) -> str | None:
    explanation = (result.get("metrics") or {}).get("explanation") or {}
    for judge in (explanation.get("judge"), (result.get("manifest") or {}).get("judge")):
        if isinstance(judge, dict) and isinstance(judge.get("name"), str) and judge["name"]:
            return judge["name"]
    return None


def _read_run(path: Path, result: dict[str, Any]) -> ScoreFile:
    benchmark = result.get("benchmark")
    if benchmark != "gavel":
        raise DataError(
            path, None, "benchmark", f"is a {benchmark!r} run; judge scores exist for GAVEL only"
        )
    metrics = result.get("metrics")
    if not isinstance(metrics, dict) or not metrics.get("explanation"):
        raise DataError(
            path, None, None, "was scored without --judge: it has no explanation scores"
        )
    source = scores_path(path)
    if not source.is_file():
        raise DataError(
            source, None, None, "per-sample scores not found (written by `gavel score --out`)"
        )
    check_run_files(path, result.get("files"))
    label = _judge_name(result) or path.parent.name or _stem(path)
    scores = _read_lines(path, source, _read_text(source), label=label)
    scores.kind = RUN
    return scores


def _label_of_scores(source: Path) -> str:
    """The judge named in the results.json beside a .scores.jsonl, else the file's name."""
    if source.name.endswith(".scores.jsonl"):
        results = source.with_name(source.name[: -len(".scores.jsonl")] + ".json")
        try:
            name = _judge_name(parse_json(read_regular(results), results))
        except (OSError, DataError, AttributeError):
            name = None
        if name:
            return name
    return _stem(source)


def _read_lines(path: Path, source: Path, text: str, *, label: str) -> ScoreFile:
    """JSONL: per-sample lines of ``gavel score`` or ``{"id", "score"}`` records, told apart by
    the first line; every later line must be of the same layout."""
    scores = ScoreFile(path=path, source=source, kind=RECORDS, label=label)
    judged = False
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        record = _object_line(source, number, line)
        if not scores.lines:
            _first_record_layout(scores, path, source, number, record)
        if scores.kind == SCORES:
            judged |= "judge_score" in record or "judge_status" in record
            score, reason = _score_line(source, number, record)
        else:
            score, reason = _record_line(source, number, record)
        sample = _sample_id(source, number, record)
        _add(scores, source, number, sample, score, reason, _column(source, number, record))
    if scores.kind == SCORES and not judged:
        raise DataError(
            source, None, None, "has no judge scores: the run was scored without --judge"
        )
    return scores


def _first_record_layout(
    scores: ScoreFile, path: Path, source: Path, number: int, record: dict[str, Any]
) -> None:
    """The first line decides the layout of the file: ``gavel score`` lines or records."""
    if any(name in record for name in _SCORE_LINE_FIELDS):
        scores.kind = SCORES
        if path == source:
            scores.label = _label_of_scores(source)
    elif "score" not in record:
        raise DataError(source, number, None, _LAYOUTS)


def _object_line(source: Path, number: int, line: str) -> dict[str, Any]:
    try:
        record = parse_json(line, source, number, object_pairs_hook=_no_duplicate_keys)
    except _DuplicateKey as error:
        raise DataError(source, number, error.key, "given twice on the line") from None
    if not isinstance(record, dict):
        raise DataError(source, number, None, f"not a JSON object; {_LAYOUTS}")
    return record


def _score_line(source: Path, number: int, record: dict[str, Any]) -> tuple[int | None, str]:
    """A ``gavel score`` line: ``judge_score`` unless the status says it is not the judge's."""
    status = record.get("judge_status")
    if status is not None and status not in STATUSES:
        raise DataError(
            source, number, "judge_status", f"unknown status {status!r} (one of {STATUSES})"
        )
    score = _check_score(source, number, "judge_score", record.get("judge_score"))
    if status == JUDGE_ERROR:
        return None, JUDGE_ERROR
    if status == NOT_ANSWERED:
        return None, NOT_ANSWERED
    if score is None:
        if status == OK:
            raise DataError(source, number, "judge_score", "missing, with judge_status 'ok'")
        return None, NO_SCORE
    return score, OK


def _record_line(source: Path, number: int, record: dict[str, Any]) -> tuple[int | None, str]:
    if "score" not in record:
        raise DataError(source, number, "score", "missing (an integer from 1 to 5, or null)")
    score = _check_score(source, number, "score", record["score"])
    return score, (OK if score is not None else NO_SCORE)


def _check_score(source: Path, number: int | None, name: str, value: Any) -> int | None:
    """An integer 1–5, or None for null; booleans, fractions and text are refused."""
    low, high = SCALE[0], SCALE[-1]
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise DataError(
            source,
            number,
            name,
            f"must be an integer from {low} to {high} (or null), got {shown(value)}",
        )
    return value


def _sample_id(source: Path, number: int, record: dict[str, Any]) -> str:
    value = record.get("id")
    if isinstance(value, bool) or not isinstance(value, str | int) or _too_long(value):
        problem = "missing" if value is None else f"must be a string, got {shown(value)}"
        raise DataError(source, number, "id", problem)
    return str(value)


def _too_long(value: Any) -> bool:
    return isinstance(value, int) and value.bit_length() > 64


def _column(source: Path, number: int | None, record: dict[str, Any]) -> str | None:
    value = record.get("column")
    if value is None:
        return None
    if not isinstance(value, str) or value not in CATEGORY_COLUMNS:
        raise DataError(
            source,
            number,
            "column",
            f"unknown column {shown(value)} (one of {', '.join(CATEGORY_COLUMNS)})",
        )
    return value


def _add(
    scores: ScoreFile,
    source: Path,
    number: int | None,
    sample: str,
    score: int | None,
    reason: str,
    column: str | None,
) -> None:
    if sample in scores.lines:
        earlier = scores.lines[sample]
        where = f" (first on line {earlier})" if earlier else ""
        raise DataError(source, number, "id", f"{json.dumps(sample)} given twice{where}")
    scores.lines[sample] = number
    if score is None:
        scores.unscored[sample] = reason
    else:
        scores.scores[sample] = score
    if column is not None:
        scores.columns[sample] = column


def _read_mapping(path: Path, text: str, document: dict[str, Any]) -> ScoreFile:
    scores = ScoreFile(path=path, source=path, kind=MAPPING, label=_stem(path))
    key_lines = _key_lines(text)
    for sample, value in document.items():
        number = key_lines.get(sample)
        score = _check_score(path, number, sample, value)
        _add(scores, path, number, sample, score, OK if score is not None else NO_SCORE, None)
    if not scores.lines:
        raise DataError(path, None, None, f"has no samples; {_LAYOUTS}")
    return scores


_KEY = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:')


def _key_lines(text: str) -> dict[str, int]:
    """The line each key of a flat JSON object is first on, in one pass over the text, so an
    error can point at it."""
    found: dict[str, int] = {}
    line, position = 1, 0
    for match in _KEY.finditer(text):
        line += text.count("\n", position, match.start())
        position = match.start()
        try:
            key = json.loads(f'"{match.group(1)}"')
        except json.JSONDecodeError:
            continue
        found.setdefault(key, line)
    return found


def _lines_of_key(text: str, key: str) -> list[int]:
    pattern = re.escape(json.dumps(key, ensure_ascii=False)) + r"\s*:"
    return [text.count("\n", 0, m.start()) + 1 for m in re.finditer(pattern, text)]
