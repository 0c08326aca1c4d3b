"""The async online runner: this process sends the requests, a bounded number at a time."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gavel.execution.plan import RunPlan


class OnlineExecutor:
    """:func:`gavel.runner.async_runner.run_sync` over the plan's requests, with its answer
    cache, ``max_cost`` budget and failure budget."""

    def run(self, plan: RunPlan) -> Any:
        from gavel.execution.cache import ready
        from gavel.runner.async_runner import AsyncRunSummary, run_sync
        from gavel.runner.defaults import concurrency_for

        s = plan.settings
        live = AsyncRunSummary(model=plan.model.name)  # a max_cost budget reads its tokens
        requests = plan.prepared.requests
        return run_sync(
            plan.model,
            plan.budget.limit(requests, live) if plan.budget else requests,
            plan.out,
            summary=live,
            concurrency=concurrency_for(str(s.model), s.concurrency),
            total=plan.prepared.total,
            progress=not s.no_progress,
            cache=ready(plan.cache),
            prices=plan.prices,
            max_failures=plan.failure_limit,
        )
