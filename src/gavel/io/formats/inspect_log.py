"""An inspect_ai ``.eval`` log read as a gavel predictions file.

``gavel score --predictions LOG.eval`` scores the answers of an ``inspect eval gavel/...`` run
(or of any inspect task whose sample ids are the data's ids). Each sample becomes the line
``gavel generate`` would have written: the raw completion verbatim, the model, the token
counts, the server's stop reason, and (for gavel's tasks, which keep the line in their score's
metadata) the box convention and the size of the image as sent. A sample inspect could not
answer becomes a ``model_error`` line with inspect's message.

A log of ``inspect eval --epochs N`` has N answers per sample, and a gavel benchmark scores one:
it is refused unless one epoch is chosen (``gavel score --epoch K``; :func:`reading_epoch`).

The log is read with inspect_ai's own log API, so every log format and version it reads works.
A log is a ZIP archive, so before inspect reads it its members are inflated once, counting, up
to :func:`max_log_bytes` in all (a 1 MB log can inflate to gigabytes); the ZIP reader stops
each member at its declared size and checks its CRC, so a member that lies about its size is
refused too.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import msgspec

from gavel.errors import DataError, GavelError
from gavel.io.jsonl import shown, surrogate_field
from gavel.io.run_files import file_sha256

#: What marks a predictions path as an inspect log.
SUFFIX = ".eval"
#: Where gavel's inspect tasks keep each answer's predictions line (gavel.integrations.inspect_tasks).
PREDICTION_KEY = "gavel_prediction"
#: The environment variable setting the most a log may inflate to, in MiB, and its default.
MAX_LOG_MIB_VARIABLE = "GAVEL_MAX_LOG_MIB"
MAX_LOG_MIB = 512


def max_log_bytes() -> int:
    """What a log's members may inflate to in all (``GAVEL_MAX_LOG_MIB``, default 512 MiB)."""
    value = os.environ.get(MAX_LOG_MIB_VARIABLE, "").strip()
    if not value:
        return MAX_LOG_MIB << 20
    if not value.isdigit() or int(value) < 1:
        raise GavelError(f"{MAX_LOG_MIB_VARIABLE}={value!r}: expected a whole number of MiB")
    return int(value) << 20


#: The epoch to read of a multi-epoch log. The benchmarks open their predictions file
#: themselves, and the epoch is a matter of reading a log, not of any benchmark, so the command
#: sets it around the scoring rather than through every benchmark's settings.
_EPOCH: ContextVar[int | None] = ContextVar("gavel_inspect_epoch", default=None)


def is_inspect_log(path: Path) -> bool:
    return path.suffix == SUFFIX


@contextmanager
def reading_epoch(epoch: int | None) -> Iterator[None]:
    """Logs read inside take the answers of this epoch (1 is the first); None: all, and a log
    with several epochs is refused."""
    token = _EPOCH.set(epoch)
    try:
        yield
    finally:
        _EPOCH.reset(token)


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
        self._sha256 = file_sha256(self.path)

    @property
    def sha256(self) -> str:
        if self._sha256 is None:
            self._sha256 = file_sha256(self.path)
        return self._sha256


def finish_reason(stop_reason: str | None) -> str | None:
    """inspect's stop reason in the server's words (``length``: cut off by the token limit),
    which is what gavel's answer readers look for."""
    if stop_reason in ("max_tokens", "model_length"):
        return "length"
    return stop_reason


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
    _check_inflated_size(path)  # after the import: inspect teaches zipfile its zstd members
    try:
        log = read_eval_log(str(path))
    except Exception as error:  # inspect's reader raises many kinds for a damaged file
        raise DataError(
            path, None, None, f"not a readable inspect log: {_one_line(error)}"
        ) from None
    model = log.eval.model
    lines = [_line(sample, model) for sample in _of_epoch(path, log.samples or [])]
    for number, line in enumerate(lines, start=1):
        where = surrogate_field(line)
        if where is not None:  # no predictions line can hold it: it cannot even be encoded
            raise DataError(
                path, None, where or None,
                f"sample {number} ({shown(line.get('id'))}): lone surrogate (not Unicode text)",
            )  # fmt: skip
    return lines


def _check_inflated_size(path: Path) -> None:
    """Refuse a log whose members inflate beyond :func:`max_log_bytes`, reading each through
    :mod:`zipfile` (which stops at the declared size and checks the CRC) without keeping it."""
    limit = max_log_bytes()
    refusal = (
        f"inflates to more than {limit >> 20} MiB (set {MAX_LOG_MIB_VARIABLE} to read a larger log)"
    )
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            if sum(member.file_size for member in members) > limit:
                raise DataError(path, None, None, refusal)
            for member in members:
                try:
                    handle = archive.open(member)
                except NotImplementedError:  # a method zipfile lacks: the declared size stands
                    continue
                with handle:
                    while handle.read(1 << 20):
                        pass
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError) as error:
        raise DataError(path, None, None, f"not a readable inspect log: {error}") from None
    except OSError as error:
        raise DataError(path, None, None, f"cannot read ({error.strerror or error})") from None


def _of_epoch(path: Path, samples: list[Any]) -> list[Any]:
    """The samples of the epoch asked for (:func:`reading_epoch`); all of a one-epoch log."""
    epochs = max((sample.epoch for sample in samples), default=1)
    epoch = _EPOCH.get()
    if epoch is None:
        if epochs > 1:
            raise DataError(
                path, None, None,
                f"the log has {epochs} epochs (inspect eval --epochs {epochs}): {epochs} answers "
                "per sample, and gavel scores one; choose the epoch to score with --epoch N "
                f"(1 to {epochs})",
            )  # fmt: skip
        return samples
    if not 1 <= epoch <= epochs:
        raise DataError(
            path, None, None, f"--epoch {epoch}: the log has {epochs} epoch(s), 1 to {epochs}"
        )
    return [sample for sample in samples if sample.epoch == epoch]


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


def _one_line(error: Exception) -> str:
    """The reader's reason on one line: a validation error's lines joined, its links dropped
    (pydantic appends "For further information visit ..." to each)."""
    parts = [line.strip() for line in str(error).splitlines()]
    return "; ".join(part for part in parts if part and not part.startswith("For further"))
