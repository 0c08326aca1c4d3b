"""The formats a predictions file may come in, each with how to tell it and how to read it.

:class:`gavel.io.predictions.PredictionReader` reads whatever :func:`lines_of` gives: pairs of
``(line number, predictions line as JSON bytes)`` and the file's ``sha256``. A format names
itself, says from the path whether a file is one of its own, and reads it as those lines, so
another framework's log is scored like a predictions file without ``gavel.io`` knowing the
framework. The formats are asked in order; the last one, plain JSONL, takes every file (it
reads lmms-eval sample logs in place too, telling them by their first line).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from gavel.io.formats.inspect_log import InspectLogLines, is_inspect_log
from gavel.io.formats.lmms_eval_log import SampleLogLines, is_sample_log


class PredictionLines(Protocol):
    """Numbered predictions lines of one file, and the file's hash once read."""

    def __iter__(self) -> Iterator[tuple[int, bytes]]: ...

    @property
    def sha256(self) -> str: ...


@dataclass(frozen=True)
class PredictionFormat:
    """One format of predictions file: ``detects(path)`` tells it, ``lines(path)`` reads it."""

    name: str
    detects: Callable[[Path], bool]
    lines: Callable[[Path], PredictionLines]
    #: Whether a file of this format holds its predictions lines as they are, one a line, so
    #: that a piece of it cut at line starts can be read alone (by another process).
    in_place: Callable[[Path], bool] = lambda path: False


def _any_file(path: Path) -> bool:
    return True


#: Every known format, asked in order (a new one goes before plain JSONL, which takes any file).
FORMATS: list[PredictionFormat] = [
    PredictionFormat("inspect", is_inspect_log, InspectLogLines),
    PredictionFormat("jsonl", _any_file, SampleLogLines, lambda path: not is_sample_log(path)),
]


def format_of(path: Path) -> PredictionFormat:
    """The first format that says ``path`` is one of its own."""
    return next(form for form in FORMATS if form.detects(path))


def read_in_place(path: Path) -> bool:
    """Whether ``path``'s lines are its predictions lines as they are (a plain predictions
    file, not another framework's log): pieces of it can be read apart."""
    return format_of(path).in_place(path)


def lines_of(path: Path) -> PredictionLines:
    """``path`` read as numbered predictions lines, by the format it is in."""
    return format_of(path).lines(path)
