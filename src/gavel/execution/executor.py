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
``answered``, ``errors`` and ``describe()``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from gavel.execution.batch_api import BatchRequest
    from gavel.execution.plan import RunPlan
    from gavel.execution.settings import GenerateSettings

#: Requests sent to a Ray replica at a time (``run_ray``'s own default).
RAY_REQUESTS_PER_TASK = 32


class Executor(Protocol):
    """Runs a plan: sends its requests, writes its predictions file."""

    def run(self, plan: RunPlan) -> Any:
        """The run's summary (None: nothing was asked, as for a requests file only)."""
        ...


def choose(settings: GenerateSettings, batch: BatchRequest, batching: bool) -> Executor:
    """The executor the settings ask for: the batch API when its settings are given, Ray with
    ``executor="ray"``, a batching local model's own loop, else the async runner."""
    if batch.active:
        from gavel.execution.batch_api import BatchApiExecutor

        return BatchApiExecutor()
    if settings.executor == "ray":
        from gavel.execution.ray import RayExecutor

        return RayExecutor()
    if batching:
        from gavel.execution.batched import BatchedExecutor

        return BatchedExecutor()
    from gavel.execution.online import OnlineExecutor

    return OnlineExecutor()


def window_for(model: Any, executor: str) -> int:
    """Requests sorted together before they are cut into batches: the batched runner's window,
    or on Ray the requests one replica is sent at a time (at least the runner's default)."""
    from gavel.runner.batched import WINDOW_BATCHES

    window = WINDOW_BATCHES * model.batch_size
    return max(window, RAY_REQUESTS_PER_TASK) if executor == "ray" else window
