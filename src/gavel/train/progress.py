"""Training progress: a rich bar on a terminal, plain log lines elsewhere (cluster job logs).

Only the main process reports; the others stay silent so a multi-GPU log is not N copies.
"""

from __future__ import annotations

import sys
import time
from typing import Any


class TrainProgress:
    """``step(loss, lr, samples)`` after each optimizer step; a context manager."""

    def __init__(
        self, total: int, start: int, *, enabled: bool, log_every: int = 10, stream: Any = None
    ):
        from rich.console import Console

        self.total = total
        self.step_count = start
        self.start = start
        self.log_every = max(1, log_every)
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.began = time.perf_counter()
        self.samples = 0
        console = Console(file=self.stream)
        self.bar = None
        if enabled and console.is_terminal:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.bar = Progress(
                TextColumn("training"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[status]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=console,
                transient=False,
            )
            self.task = self.bar.add_task("training", total=total, completed=start, status="")

    def __enter__(self) -> TrainProgress:
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def rate(self) -> float:
        elapsed = time.perf_counter() - self.began
        return self.samples / elapsed if elapsed > 0 else 0.0

    def step(self, loss: float, lr: float, samples: int) -> None:
        self.step_count += 1
        self.samples += samples
        status = f"loss {loss:.4f}  lr {lr:.2e}  {self.rate():.2f} samples/s"
        if self.bar is not None:
            self.bar.update(self.task, completed=self.step_count, status=status)
        elif self.enabled and (
            self.step_count % self.log_every == 0 or self.step_count in (self.start + 1, self.total)
        ):
            print(f"step {self.step_count}/{self.total}  {status}", file=self.stream, flush=True)

    def note(self, message: str) -> None:
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.console.print(message)
        else:
            print(message, file=self.stream, flush=True)
