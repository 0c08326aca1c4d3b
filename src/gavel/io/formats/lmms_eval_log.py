"""An lmms-eval sample log (``--log_samples``: ``*_samples_TASK.jsonl``) read as predictions.

``gavel score --predictions out/.../TIMESTAMP_samples_gavel.jsonl`` scores the answers of a run
of a task that ``gavel export lmms-eval`` wrote: each of its lines holds, under every metric's
name, the item the task's ``process_results`` kept (the document's id, the raw answer and the
box convention of the export), which is a gavel predictions line as it is. A file whose first
line is no such sample (a predictions file) passes through unchanged, so the reader stands in
front of every JSONL file at no cost.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gavel.errors import DataError
from gavel.io.jsonl import HashingReader
from gavel.io.reading import bounded_lines, open_regular

#: What every lmms-eval sample line has and a predictions line has not.
_MARKERS = (b'"doc_id"', b'"filtered_resps"')


def is_sample_log(path: Path) -> bool:
    """Whether ``path`` starts with an lmms-eval sample line (False for a file that cannot be
    read: its reader names the problem)."""
    try:
        with open_regular(path) as handle:
            first = next((line for line in bounded_lines(handle, path) if line.strip()), b"")
    except (OSError, DataError):
        return False
    return _is_sample_line(first)


def _is_sample_line(line: bytes) -> bool:
    return all(marker in line for marker in _MARKERS)


class SampleLogLines:
    """Iterates ``(line number, predictions line)`` of a JSONL file, each lmms-eval sample line
    replaced by the predictions line its metrics hold; ``sha256`` is the file's."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lines = HashingReader(self.path)

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        lines = iter(self._lines)
        for number, line in lines:  # the first line tells a sample log from a predictions file
            if not _is_sample_line(line):
                yield number, line
                yield from lines  # a predictions file: read as it is, at the reader's speed
                return
            yield number, self._prediction(number, line)
            for number, line in lines:
                yield number, self._prediction(number, line)

    def _prediction(self, number: int, line: bytes) -> bytes:
        try:
            sample: Any = json.loads(line)
        except ValueError:
            return line  # not JSON: the predictions reader names the line's error
        if not isinstance(sample, dict) or "id" in sample:
            return line
        for value in sample.values():
            if isinstance(value, dict) and "id" in value and "response" in value:
                return json.dumps(value).encode()
        raise DataError(
            self.path, number, None,
            "an lmms-eval sample without a gavel answer (its metrics hold no item with id and "
            "response): score the samples of a task written by gavel export lmms-eval",
        )  # fmt: skip

    @property
    def sha256(self) -> str:
        return self._lines.sha256
