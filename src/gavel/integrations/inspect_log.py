"""An inspect_ai ``.eval`` log read as a gavel predictions file.

``gavel score --predictions LOG.eval`` scores the answers of an ``inspect eval gavel/...`` run
(or of any inspect task whose sample ids are the data's ids). Each sample becomes the line
``gavel generate`` would have written: the raw completion verbatim, the model, the token
counts, the server's stop reason, and (for gavel's tasks, which keep the line in their score's
metadata) the box convention and the size of the image as sent. A sample inspect could not
answer becomes a ``model_error`` line with inspect's message.

The log is read with inspect_ai's own log API, so every log format and version it reads works.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from gavel.errors import DataError, GavelError

#: What marks a predictions path as an inspect log.
SUFFIX = ".eval"
#: Where gavel's inspect tasks keep each answer's predictions line (inspect_tasks.py).
PREDICTION_KEY = "gavel_prediction"


def is_inspect_log(path: Path) -> bool:
    return path.suffix == SUFFIX


class InspectLogLines:
    """Iterates ``(sample number, predictions line as JSON bytes)`` for each sample of a log,
    as :class:`gavel.io.jsonl.HashingReader` does for a JSONL file; ``sha256`` is the log
    file's."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._sha256: str | None = None

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        encoder = msgspec.json.Encoder()
        for number, line in enumerate(predictions_of(self.path), start=1):
            yield number, encoder.encode(line)
        self._sha256 = _file_sha256(self.path)

    @property
    def sha256(self) -> str:
        if self._sha256 is None:
            self._sha256 = _file_sha256(self.path)
        return self._sha256


def finish_reason(stop_reason: str | None) -> str | None:
    """inspect's stop reason in the server's words (``length``: cut off by the token limit),
    which is what gavel's answer readers look for."""
    if stop_reason in ("max_tokens", "model_length"):
        return "length"
    return stop_reason


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def predictions_of(path: Path) -> list[dict[str, Any]]:
    """One predictions line (a dict) per sample of the log, in the log's order."""
    if not path.is_file():
        raise DataError(path, None, None, "file not found" if not path.exists() else "not a file")
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise GavelError(
            f"{path}: reading an inspect .eval log needs inspect_ai: "
            "pip install 'gavel-eval[inspect]'"
        ) from None
    try:
        log = read_eval_log(str(path))
    except Exception as error:  # inspect's reader raises many kinds for a damaged file
        raise DataError(path, None, None, f"not a readable inspect log: {error}") from None
    model = log.eval.model
    return [_line(sample, model) for sample in log.samples or []]


def _line(sample: Any, model: str | None) -> dict[str, Any]:
    for score in (sample.scores or {}).values():
        kept = (score.metadata or {}).get(PREDICTION_KEY)
        if isinstance(kept, dict):
            return kept
    line: dict[str, Any] = {"id": str(sample.id), "model": model}
    if sample.error is not None:
        line["error"] = sample.error.message
        return line
    output = sample.output
    line["response"] = output.completion
    if output.stop_reason:
        line["finish_reason"] = finish_reason(output.stop_reason)
    if output.usage is not None:
        line["prompt_tokens"] = output.usage.input_tokens
        line["completion_tokens"] = output.usage.output_tokens
    return line
