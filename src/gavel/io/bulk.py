"""Building many small records at once without the cyclic garbage collector in the way.

Reading a 100,000-line file makes hundreds of thousands of lists and records that live until the
run ends. Every few hundred allocations Python's cyclic collector wakes up and, more and more
often as they pile up, walks all of them again, finding nothing: the records hold no cycles and
are freed by reference counting. Pausing the collector while they are built took a fifth off
scoring 100,000 GAVEL predictions (bench/score_100k.py).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block (if it was on); restore it after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
