"""``--max-cost``: stop sending once the ledger has reached a spending limit.

The limit covers everything the run's files record as paid (:mod:`gavel.cost.ledger`), earlier
runs into the same files included, so rerunning with the same limit sends nothing more and a
higher one goes on from where it stopped. The budget works on the stream of requests the
runner pulls from: once the spend reaches the limit no further request is handed out, the
requests in flight (at most ``--concurrency``) finish and are written, and the run ends as a
finished run does, its files valid and resumable. The caller then reports the stop. So the
spend may pass the limit by what the requests in flight cost, never by more.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gavel.cost.ledger import read_usage
from gavel.cost.prices import Price
from gavel.models.base import Request


@dataclass
class Budget:
    """A spending limit in USD for one model's requests, ``spent_before`` already used."""

    max_cost: float
    price: Price
    spent_before: float = 0.0
    #: Whose requests (for the message): "the model gpt-4o", "the judge gpt-5".
    what: str = "the run"
    #: Set once the limit held back a request.
    reached: bool = False
    #: The runner's live summary (tokens received so far this run).
    summary: Any = None
    #: Ids already answered in the files: handed out whatever the spend (the runner skips
    #: them), so a run whose every sample is answered never reads as stopped.
    done: frozenset[str] = frozenset()

    @classmethod
    def over(cls, max_cost: float, price: Price, files: Iterable[tuple[Path, Price]],
             what: str) -> Budget:  # fmt: skip
        """A budget whose earlier spend is what ``files`` record, each at its price."""
        usages = [(read_usage(path), at) for path, at in files]
        before = sum(usage.cost(at) for usage, at in usages)
        done = frozenset().union(*(usage.answered for usage, _ in usages))
        return cls(max_cost, price, before, what, done=done)

    def spent(self) -> float:
        now = self.summary
        this_run = 0.0 if now is None else self.price.cost(now.prompt_tokens,
                                                           now.completion_tokens)  # fmt: skip
        return self.spent_before + this_run

    def limit(self, requests: Iterable[Request], summary: Any) -> Iterator[Request]:
        """``requests`` until the spend reaches the limit (``summary``: the runner's, filled in
        as answers arrive)."""
        self.summary = summary
        for request in requests:
            if request.sample_id not in self.done and self.spent() >= self.max_cost:
                self.reached = True
                return
            yield request

    def message(self, out: Path) -> str:
        return (
            f"stopped: {self.what} spent ${self.spent():.4f} (at {self.price.source}), which "
            f"reached --max-cost ${self.max_cost:g}. Everything answered is kept in {out}; rerun "
            "with a higher --max-cost to continue (answered samples are not asked again)."
        )
