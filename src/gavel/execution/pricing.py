"""What a generation costs: the dry run's estimate, the ``--max-cost`` budget, the runner's
price table (docs/running.md, "Dry run and cost" and "Budgets")."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from gavel.errors import ConfigError, GavelError, UsageError


def generation_sending(model: Any, preset: str | None, tokenizer: Path | None) -> Any:
    """How a generation's requests go out, as the dry run counts them."""
    from gavel.cost.estimate import Sending
    from gavel.cost.image_tokens import rule_for
    from gavel.cost.tokens import counter_for
    from gavel.media.sampling import FrameSampling

    return Sending(
        counter=counter_for(model.name, tokenizer, "--tokenizer"),
        image_rule=rule_for(preset, model.name),
        max_image_side=model.capabilities.max_image_side,
        sampling=getattr(model, "sampling", None) or FrameSampling(),
        max_tokens=getattr(model, "max_tokens", None),
    )


def generation_estimate(model: Any, preset: str | None, requests: Iterable[Any], out: Path,
                        cache: Path | None, *, price: str | None, tokenizer: Path | None,
                        batch: bool = False) -> Any:  # fmt: skip
    """The dry run's estimate of a generation: ``requests`` as planned (at the batch price
    with ``batch``)."""
    from gavel.cost.estimate import estimate
    from gavel.cost.prices import resolve_price
    from gavel.runner.cache import model_identity

    sending = generation_sending(model, preset, tokenizer)
    table = resolve_price(model.name, price, "--price", batch)
    identity = model_identity(model) if cache is not None else ""
    return estimate("model", model.name, requests, sending, out, cache, identity, table)


def bound_cost(sending: Any, price: Any, flag: str) -> Callable[[Any], float]:
    """Each request's upper-bound cost (a batch budget's): its input tokens as the dry run
    counts them, and ``max_tokens`` of reply."""
    from gavel.cost.estimate import input_tokens

    if not sending.max_tokens:
        raise ConfigError(f"--max-cost in batch mode needs a reply limit: give {flag}")
    count = input_tokens(sending)
    return lambda request: price.cost(count(request), sending.max_tokens)


def generation_budget(model: Any, out: Path, local_async: bool, *, max_cost: float | None,
                      price: str | None, tokenizer: Path | None, preset: str | None = None,
                      batch: bool = False, spent_elsewhere: float = 0.0) -> Any:  # fmt: skip
    """The ``--max-cost`` budget of a generation into ``out`` (None without one); with
    ``batch``, at the batch price and with each request's upper bound. ``spent_elsewhere``:
    what the judge of the same ``gavel run`` spent (counted in this budget)."""
    if max_cost is None:
        return None
    if not local_async:
        raise UsageError("--max-cost applies to served models (openai:) run by the local executor")
    from gavel.cost.budget import Budget
    from gavel.cost.prices import resolve_price

    table = resolve_price(model.name, price, "--price", batch)
    if table is None:
        raise ConfigError(
            f"--max-cost needs the price of {model.name}: give --price IN,OUT (USD per "
            "million input and output tokens)"
        )
    what = f"the model {model.name}"
    if spent_elsewhere:
        what = f"the run (${spent_elsewhere:.4f} by its judge before, the rest by {what})"
    budget = Budget.over(max_cost, table, [(out, table)], what)
    budget.spent_before += spent_elsewhere
    if batch:
        sending = generation_sending(model, preset, tokenizer)
        budget.bound = bound_cost(sending, table, "--max-tokens")
    return budget


def runner_prices(price: str | None, model: Any) -> dict[str, tuple[float, float]] | None:
    """The runner's price table for a ``--price`` given, so its summary states the cost."""
    if price is None:
        return None
    from gavel.cost.prices import parse_price

    return {model.name: parse_price(price, "--price").per_thousand()}


def stop_if_spent(budget: Any, out: Path) -> None:
    """After a run: the clear stop of a run that reached its budget (files already written)."""
    if budget is not None and budget.reached:
        raise GavelError(budget.message(out))


def spent_by_generation(price: str | None, spec: str, predictions: Path,
                        batch: bool = False) -> float:  # fmt: skip
    """What a finished generation's file records as spent (``gavel run``'s judge gets the
    rest of ``--max-cost``); ``batch``: it ran as batches."""
    from gavel.cost.ledger import read_usage
    from gavel.cost.prices import resolve_price

    table = resolve_price(spec.partition(":")[2] or spec, price, "--price", batch)
    return read_usage(predictions).cost(table) if table is not None else 0.0
