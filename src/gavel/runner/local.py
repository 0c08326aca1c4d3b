"""The in-process runner: append-only predictions, resumable after any crash.

Each answer is appended as one JSON line and flushed before the next request, so a crash loses
at most the request in flight. On start the file is read back: ids already answered are
skipped, and a last line cut short by a crash is removed, so rerunning the same command
resumes without sending a completed request again and without duplicating a line.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import msgspec

from gavel.io.files import AppendFile
from gavel.io.output_lock import writes_output
from gavel.io.predictions import PredictionReader
from gavel.manifest import redact_userinfo
from gavel.records import Prediction
from gavel.requests import Model, Request


@dataclass
class RunSummary:
    requested: int = 0
    skipped: int = 0
    answered: int = 0
    errors: int = 0
    seconds: float = 0.0


def repair_tail(path: Path) -> None:
    """Drop a final line that a crash cut short (no trailing newline)."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb+") as handle:
        handle.seek(-1, os.SEEK_END)
        if handle.read(1) == b"\n":
            return
        handle.seek(0)
        data = handle.read()
        handle.truncate(data.rfind(b"\n") + 1)


def completed_ids(path: Path) -> set[str]:
    repair_tail(path)
    if not path.exists():
        return set()
    return {p.id for p in PredictionReader(path)}


@writes_output("out")
def run_model(
    model: Model,
    requests: Iterable[Request],
    out: Path,
    *,
    total: int | None = None,
    progress: bool = True,
) -> RunSummary:
    """Answer every request not already in ``out``; returns what was done."""
    out.parent.mkdir(parents=True, exist_ok=True)
    done = completed_ids(out)
    summary = RunSummary()
    encoder = msgspec.json.Encoder()
    started = time.perf_counter()
    bar = _progress(total, progress)
    with AppendFile(out) as handle, bar:
        task = bar.add_task(model.name, total=total)
        for request in requests:
            summary.requested += 1
            if request.sample_id in done:
                summary.skipped += 1
                bar.advance(task)
                continue
            prediction = _ask(model, request)
            summary.errors += prediction.error is not None
            summary.answered += 1
            handle.write(encoder.encode(prediction) + b"\n")
            handle.flush()
            done.add(request.sample_id)
            bar.advance(task)
        handle.sync()
    summary.seconds = time.perf_counter() - started
    return summary


def _ask(model: Model, request: Request) -> Prediction:
    started = time.perf_counter()
    try:
        answer = model.answer(request)
    except Exception as error:  # a failed call is recorded, never fatal to the run
        return Prediction(
            id=request.sample_id,
            model=model.name,
            error=redact_userinfo(f"{type(error).__name__}: {error}"),
        )
    return Prediction(
        id=request.sample_id,
        response=answer.text,
        box_format=model.capabilities.box_format,
        model=model.name,
        sent_size=list(answer.sent_size) if answer.sent_size else None,
        input_size=list(answer.input_size) if answer.input_size else None,
        latency_s=round(time.perf_counter() - started, 4),
        prompt_tokens=answer.usage.get("prompt_tokens"),
        completion_tokens=answer.usage.get("completion_tokens"),
        finish_reason=answer.finish_reason,
    )


def _progress(total: int | None, enabled: bool):
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    console = Console(stderr=True)
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=not enabled or not console.is_terminal,
        transient=True,
    )
