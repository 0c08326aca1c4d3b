"""Scoring a run's chunks in worker processes, when it is large and there are CPUs for it.

Reading an answer (its verdict, explanation and boxes) is per-sample Python, 10 to 100 µs a
reply, and is most of the time of scoring a large run of raw replies. It is done in processes
forked after the data was read, which share the data's columns with this one without copying
them: either chunks of predictions read here, in order (:meth:`Workers.submit`), or pieces of
the predictions file that each worker reads itself (``.prediction_pieces``). Their scores come
back in the order they were sent. A sample's score depends on that sample alone, so the
results are the same, bit for bit, with any number of workers.

``GAVEL_SCORE_WORKERS`` sets the number (1: none); by default a run of
:data:`PARALLEL_FROM` samples or more uses every CPU this process may run on, up to
:data:`MAX_WORKERS`. Workers need ``fork`` (Linux; not macOS or Windows, where scoring stays
in one process).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Sequence
from multiprocessing.pool import AsyncResult, Pool
from types import TracebackType
from typing import Any, NamedTuple

import msgspec

from gavel.benchmarks.gavel.chunks import score_chunk
from gavel.benchmarks.gavel.gold import GoldColumns
from gavel.benchmarks.gavel.scorer import GavelScorer, GavelSettings
from gavel.errors import ConfigError
from gavel.records import Prediction

#: The environment variable that sets the number of worker processes.
ENV = "GAVEL_SCORE_WORKERS"
#: Samples from which a run is scored in workers by default: below, starting them costs
#: more than they save.
PARALLEL_FROM = 20_000
MAX_WORKERS = 8

_CHUNK_TYPE = list[Prediction | None]


class Forked(NamedTuple):
    """What a forked worker scores with: set here just before the fork, inherited by the
    children (the data's columns shared with the parent, not copied)."""

    gold: GoldColumns
    settings: GavelSettings
    #: Each data position's slot among the scored samples (-1: not scored).
    slot_of: Sequence[int]


_FORKED: Forked | None = None
_SCORER: GavelScorer | None = None


def worker_count(samples: int) -> int:
    """The workers a run of ``samples`` gets (1: it is scored in this process)."""
    given = os.environ.get(ENV, "").strip()
    if given:
        try:
            count = int(given)
        except ValueError:
            raise ConfigError(f"{ENV} must be a whole number of processes, got {given!r}") from None
        if not 1 <= count <= 256:
            raise ConfigError(f"{ENV} must lie between 1 and 256, got {count}")
    else:
        count = min(_usable_cpus(), MAX_WORKERS) if samples >= PARALLEL_FROM else 1
    return count if "fork" in multiprocessing.get_all_start_methods() else 1


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on every system
        return os.cpu_count() or 1


class Workers:
    """``count`` forked processes scoring chunks (none when ``count`` is 1: :attr:`running`
    is False and the caller scores in this process). Leaving the block stops them, once the
    chunks already sent are done."""

    def __init__(self, count: int, gold: GoldColumns, settings: GavelSettings,
                 slot_of: Sequence[int] = ()):  # fmt: skip
        self.in_flight = 2 * count  # chunks sent ahead: enough to keep every worker busy
        self._pool: Pool | None = None
        self._encode = msgspec.msgpack.Encoder().encode
        if count > 1:
            global _FORKED
            _FORKED = Forked(gold, settings, slot_of)
            context = multiprocessing.get_context("fork")
            self._pool = context.Pool(count, initializer=ignore_interrupts)

    @property
    def running(self) -> bool:
        return self._pool is not None

    def submit(self, positions: list[int], predictions: list[Prediction | None]) -> AsyncResult:
        """Score a chunk in a worker; ``.get()`` gives its ChunkScores."""
        assert self._pool is not None
        return self._pool.apply_async(_score, (positions, self._encode(predictions)))

    def apply(self, function: Callable[..., Any], arguments: tuple) -> AsyncResult:
        """Run ``function(*arguments)`` in a worker (a module-level function, which may call
        :func:`forked` for the data and a scorer); ``.get()`` gives what it returns."""
        assert self._pool is not None
        return self._pool.apply_async(function, arguments)

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:  # fmt: skip
        global _FORKED
        _FORKED = None
        if self._pool is not None:
            # Closed and joined even after an error or Ctrl-C (the workers ignore it), never
            # terminated: terminate() may wait forever when it kills a worker that holds the
            # pool's task queue lock (CPython gh-96995). What is left to wait for is the few
            # chunks sent ahead (:attr:`in_flight`), each a fraction of a second.
            self._pool.close()
            self._pool.join()
            self._pool = None


def ignore_interrupts() -> None:
    """In a new worker: Ctrl-C is the parent's to handle (it stops the workers)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def forked() -> tuple[Forked, GavelScorer]:
    """In a worker: what it was forked with, and its scorer (made once per worker)."""
    global _SCORER
    assert _FORKED is not None, "called outside a scoring worker"
    if _SCORER is None:
        _SCORER = GavelScorer(_FORKED.settings)
    return _FORKED, _SCORER


def _score(positions: list[int], payload: bytes) -> Any:
    state, scorer = forked()
    predictions = msgspec.msgpack.decode(payload, type=_CHUNK_TYPE)
    return score_chunk(scorer, state.gold, positions, predictions)
