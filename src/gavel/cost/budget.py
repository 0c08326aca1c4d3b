"""``--max-cost``: stop sending once the ledger has reached a spending limit.

The limit covers everything the run's files record as paid (:mod:`gavel.cost.ledger`), earlier
runs into the same files included, so rerunning with the same limit sends nothing more and a
higher one goes on from where it stopped. The budget works on the stream of requests the
runner pulls from: once the spend reaches the limit no further request is handed out, the
requests in flight (at most ``--concurrency``) finish and are written, and the run ends as a
finished run does, its files valid and resumable. The caller then reports the stop. So the
spend may pass the limit by what the requests in flight cost, never by more.

A batch is paid for as a whole once created, so in batch mode the budget works before: every
request's upper-bound cost (``bound``: the dry run's input tokens, and ``max_tokens`` of reply,
at the batch price) is known, a batch holds only the requests whose bounds fit what is left
(:meth:`Budget.fitting`), and the rest wait for a later round, which the spend actually
reported then may leave room for. The spend never passes the limit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gavel.cost.ledger import read_usage
from gavel.cost.prices import Price
from gavel.requests import Request


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
    #: In batch mode: the most one request can cost (its prompt and ``max_tokens`` of reply).
    bound: Callable[[Request], float] | None = None
    #: The bound of the first request :meth:`fitting` held back.
    next_bound: float = 0.0

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

    def fitting(self, requests: Iterable[Request]) -> list[Request]:
        """The requests, in order, whose upper-bound costs together fit what is left (up to
        the first that does not); sets :attr:`reached` when one is held back."""
        assert self.bound is not None, "a batch budget needs each request's bound"
        left = self.max_cost - self.spent()
        chosen = []
        for request in requests:
            cost = self.bound(request)
            if cost > left:
                self.reached = True
                self.next_bound = cost
                break
            left -= cost
            chosen.append(request)
        return chosen

    def batch_message(self, out: Path, held: int) -> str:
        """The stop of a batch run that holds ``held`` requests back."""
        spent = self.spent()
        return (
            f"stopped: {self.what} spent ${spent:.4f} of --max-cost ${self.max_cost:g} (at "
            f"{self.price.source}); ${max(self.max_cost - spent, 0):.4f} remains, and the next "
            f"request may cost up to ${self.next_bound:.4f} (its prompt and "
            f"max_tokens of reply), so {held} request(s) were not sent. Everything answered is "
            f"kept in {out}; rerun with a higher --max-cost to continue."
        )

    def message(self, out: Path) -> str:
        return (
            f"stopped: {self.what} spent ${self.spent():.4f} (at {self.price.source}), which "
            f"reached --max-cost ${self.max_cost:g}. Everything answered is kept in {out}; rerun "
            "with a higher --max-cost to continue (answered samples are not asked again)."
        )
