"""The four ways of running a plan, behind one interface, and which one a plan takes.

- :class:`~gavel.execution.online.OnlineExecutor`: this process sends the requests with
  bounded async concurrency (``gavel.runner.async_runner``);
- :class:`~gavel.execution.batched.BatchedExecutor`: a local model that answers a batch per
  forward pass (``gavel.runner.batched``);
- :class:`~gavel.execution.ray.RayExecutor`: samples sharded over Ray actors, each holding a
  model replica (``gavel.runner.ray_executor``);
- :class:`~gavel.execution.batch_api.BatchApiExecutor`: one OpenAI Batch (or a requests file
  for ``vllm run-batch``, or merging its output) (``gavel.batch``).

Each writes the predictions file of the plan, resuming it, and returns a summary with
``answered``, ``errors`` and ``describe()``. The plan knows no executor: it says what it
needs (the batch settings, ``executor``, whether the model batches), and :func:`run` chooses
and runs one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from gavel.execution.plan import RunPlan


class Executor(Protocol):
    """Runs a plan: sends its requests, writes its predictions file."""

    def run(self, plan: RunPlan) -> Any:
        """The run's summary (None: nothing was asked, as for a requests file only)."""
        ...


def choose(plan: RunPlan) -> Executor:
    """The executor a plan asks for: the batch API when its settings are given, Ray with
    ``executor="ray"``, a batching local model's own loop, else the async runner."""
    if plan.batch.active:
        from gavel.execution.batch_api import BatchApiExecutor

        return BatchApiExecutor()
    if plan.settings.executor == "ray":
        from gavel.execution.ray import RayExecutor

        return RayExecutor()
    if plan.batching:
        from gavel.execution.batched import BatchedExecutor

        return BatchedExecutor()
    from gavel.execution.online import OnlineExecutor

    return OnlineExecutor()


def run(plan: RunPlan) -> Any:
    """Send the plan's requests, as the executor it asks for does; its summary (None: nothing
    was asked, a requests file only)."""
    return choose(plan).run(plan)
