"""How many requests a batching model's run sorts together before cutting them into batches.

Apart from the executors so that the plan, which decides it, knows none of them.
"""

from __future__ import annotations

from typing import Any

#: Requests sent to a Ray replica at a time (``run_ray``'s own default).
RAY_REQUESTS_PER_TASK = 32


def window_for(model: Any, executor: str) -> int:
    """Requests sorted together before they are cut into batches: the batched runner's window,
    or on Ray the requests one replica is sent at a time (at least the runner's default)."""
    from gavel.runner.batched import WINDOW_BATCHES

    window = WINDOW_BATCHES * model.batch_size
    return max(window, RAY_REQUESTS_PER_TASK) if executor == "ray" else window
