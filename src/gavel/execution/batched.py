"""A local model that answers a batch of requests per forward pass, one batch at a time."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gavel.errors import UsageError
from gavel.execution.notes import note

if TYPE_CHECKING:
    from gavel.execution.plan import RunPlan


class BatchedExecutor:
    """:func:`gavel.runner.batched.run_batched`: similar lengths batched together, each
    batch's answers written as it finishes (the model's own failure budget)."""

    def run(self, plan: RunPlan) -> Any:
        from gavel.runner.batched import run_batched

        s = plan.settings
        if plan.failure_limit is not None:
            raise UsageError(f"--max-failures does not apply to {s.model}: it answers in "
                             "batches, with its own failure budget")  # fmt: skip
        if s.concurrency is not None:
            note(f"note: --concurrency does not apply to {s.model}: it answers one batch "
                 "at a time (--batch-size)")  # fmt: skip
        return run_batched(plan.model, plan.prepared.requests, plan.out,
                           total=plan.prepared.total, progress=not s.no_progress)  # fmt: skip
