"""The batch API: the requests sent as one OpenAI Batch (half price, up to 24 h), or written as
a requests file for ``vllm run-batch``, or that file's output merged (docs/running.md#batch-apis).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gavel.execution.notes import note

if TYPE_CHECKING:
    from gavel.execution.plan import RunPlan


class BatchApiExecutor:
    """:mod:`gavel.batch.runner`: one batch, waited for and merged (rerunning resumes it and
    never sends twice); or the requests file only, or its output merged."""

    def run(self, plan: RunPlan) -> Any:
        """The summary of the batch run (or the merge); None after writing a requests file
        only (nothing is recorded then). ``plan.budget``: at the batch price."""
        from gavel.batch import runner
        from gavel.execution.cache import ready
        from gavel.runner.cache import default_cache
        from gavel.runner.defaults import REMOTE_CONCURRENCY

        s, batch, model, requests, out = (plan.settings, plan.batch, plan.model,
                                          plan.prepared.requests, plan.out)  # fmt: skip
        cache = ready(None if s.no_cache else (s.cache or default_cache()))
        if batch.requests_only is not None:
            count = runner.write_requests_only(model, requests, out, batch.requests_only, cache)
            if not count:
                note(f"nothing to write: every sample is answered in {out} (or by the "
                     "answer cache)")  # fmt: skip
                return None
            note(
                f"wrote {count} requests to {batch.requests_only} (nothing sent). Run them "
                f"with: vllm run-batch -i {batch.requests_only} -o OUTPUT.jsonl --model "
                f"{model.name}, then the same command with --from-batch-output OUTPUT.jsonl "
                "instead of --batch-requests-only"
            )
            return None
        if batch.from_output is not None:
            return runner.merge_output(model, requests, out, batch.from_output, cache)
        return runner.run_batch(model, requests, out, cache=cache, settings=batch.settings,
                                progress=not s.no_progress,
                                online={"concurrency": s.concurrency or REMOTE_CONCURRENCY}, budget=plan.budget,
                                prices=plan.prices)  # fmt: skip
