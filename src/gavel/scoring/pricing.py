"""What a judge costs: the dry run's estimate of its requests and the ``--max-cost`` budget
that stops it (docs/running.md, "Dry run and cost" and "Budgets"); the generation's half is
:mod:`gavel.execution.pricing`, whose upper bound of a batch request this shares.

Only an LLM judge is paid for: a judge without ``requests_for`` (offline, a plugin's) sends
nothing the dry run could count, and one without ``budget`` cannot be stopped by one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gavel.errors import ConfigError, UsageError
from gavel.execution.pricing import bound_cost


def is_batch(judge: Any) -> bool:
    """Whether an LLM judge sends its requests as a batch (``--judge-batch``): its prices are
    then the batch prices."""
    return getattr(judge, "batch", None) is not None


def counts_requests(judge: Any) -> bool:
    """Whether the dry run can count ``judge``'s requests (an LLM judge)."""
    return judge is not None and hasattr(judge, "requests_for")


def _judge_price(judge: Any, judge_price: str | None) -> Any:
    from gavel.cost.prices import resolve_price

    return resolve_price(judge.name, judge_price, "--judge-price", is_batch(judge))


def judge_sending(judge: Any, tokenizer: Path | None) -> Any:
    """How an LLM judge's requests go out (text only), as the dry run counts them."""
    from gavel.cost.estimate import Sending
    from gavel.cost.image_tokens import ESTIMATE
    from gavel.cost.tokens import counter_for

    counter = counter_for(judge.name, tokenizer, "--judge-tokenizer")
    return Sending(counter=counter, image_rule=ESTIMATE, max_tokens=judge.model.inner.max_tokens)


def judge_estimate(judge: Any, items: Any, judge_price: str | None, *,
                   tokenizer: Path | None = None, planned: int = 0,
                   planned_reply: float = 0.0) -> Any:  # fmt: skip
    """The dry run's estimate of an LLM judge over ``items`` (as scoring builds them), plus
    ``planned`` samples not answered yet whose answers are taken as ``planned_reply`` tokens
    long (``gavel run --dry-run``)."""
    from gavel.cost.estimate import estimate
    from gavel.judge.protocol import judge_messages
    from gavel.runner.cache import model_identity

    sending = judge_sending(judge, tokenizer)
    counter = sending.counter
    price = _judge_price(judge, judge_price)
    requests = judge.requests_for(items).values()
    identity = model_identity(judge.model)
    part = estimate("judge", judge.name, requests, sending, judge.replies, judge.cache,
                    identity, price)  # fmt: skip
    if planned:
        # Their prompts hold answers not written yet: the prompt without them, plus their length.
        texts = [m["content"] for m in judge_messages("", "", hallucinated=False)]
        per_request = counter.chat(texts) + round(planned_reply)
        part.requests += planned
        part.to_send += planned
        part.text_tokens += planned * per_request
        part.output_tokens += round(planned * part.output_per_request)
        part.notes.append(
            f"{planned} judge request(s) are for answers not generated yet: their prompts "
            f"counted with the model's expected answer length ({planned_reply:.0f} tokens)"
        )
        if price is not None:
            part.cost = price.cost(part.input_tokens, part.output_tokens)
    return part


def scored_items(spec: Any, data_file: Path, predictions: Path, run: Any,
                 typed: Any = list) -> list[Any]:  # fmt: skip
    """What the judge is asked about a predictions file, as scoring builds it; ``typed``
    takes the scores first (``gavel run`` refuses another benchmark's)."""
    from gavel.benchmarks.gavel.data import load_samples
    from gavel.judge.items import judge_items

    _, scores = spec.evaluate(data_file, predictions, run)
    samples, _ = load_samples(data_file, run.image_root)
    return judge_items(samples, typed(scores))


def planned_judge(judge: Any, generation: Any, *, benchmark: str, data_file: Path,
                  image_root: Path | None, predictions: Path, score_options: dict[str, Any],
                  judge_price: str | None, tokenizer: Path | None) -> Any:  # fmt: skip
    """The judge's part of ``gavel run --dry-run``: the answers already there as scoring
    reads them, and one request for each sample the generation (its estimate) will answer."""
    from gavel.benchmarks.registry import echo_filter, get_benchmark
    from gavel.benchmarks.spec import RunSettings
    from gavel.scoring.judging import gavel_scores

    items: list[Any] = []
    if predictions.is_file():
        bench = get_benchmark(benchmark)
        run = RunSettings(bench.values(score_options), image_root, resamples=0,
                          echo=echo_filter())  # fmt: skip
        items = scored_items(bench, data_file, predictions, run, gavel_scores)
    # Answers sent and answers the cache gives are both written, then judged.
    planned = generation.to_send + generation.cached
    return judge_estimate(judge, items, judge_price, tokenizer=tokenizer, planned=planned,
                          planned_reply=generation.output_per_request)  # fmt: skip


def nothing_to_send(configuration: dict[str, Any] | None, style: str) -> str:
    """The dry run's report of a scoring without an LLM judge (nothing sent, nothing paid)."""
    from gavel.cost.report import DryRunReport, configuration_section, render

    nothing = "dry run: no LLM judge, so scoring sends nothing and costs nothing"
    if configuration is None:
        return nothing + "\n"
    return render(DryRunReport([configuration_section(configuration)], [nothing]), style)


def judge_budget(judge: Any, *, max_cost: float | None, judge_price: str | None,
                 tokenizer: Path | None = None, spent_elsewhere: float = 0.0) -> None:  # fmt: skip
    """Give an LLM judge its ``max_cost`` budget (over its replies file); ``spent_elsewhere``:
    what the generation of the same run spent (counted in it)."""
    if max_cost is None:
        return
    if judge is None or not hasattr(judge, "budget"):
        raise UsageError("--max-cost: scoring costs nothing without an LLM judge (--judge)")
    from gavel.cost.budget import Budget

    price = _judge_price(judge, judge_price)
    if price is None:
        raise ConfigError(
            f"--max-cost needs the judge's price ({judge.name}): give --judge-price IN,OUT "
            "(USD per million input and output tokens)"
        )
    files = [(judge.replies, price)] if judge.replies is not None else []
    what = f"the judge {judge.name}"
    if spent_elsewhere:
        what = f"the run (${spent_elsewhere:.4f} by the model, the rest by {what})"
    judge.budget = Budget.over(max_cost, price, files, what)
    judge.budget.spent_before += spent_elsewhere
    if is_batch(judge):
        judge.budget.bound = bound_cost(
            judge_sending(judge, tokenizer), price, "--judge-max-tokens"
        )


def spent_by_judge(judge: Any, judge_price: str | None) -> float:
    """What the judge's replies file records as spent (an earlier run into the same folder):
    counted in the budget of the generation of ``gavel run``; 0 without a price."""
    if getattr(judge, "replies", None) is None:
        return 0.0
    from gavel.cost.ledger import read_usage

    price = _judge_price(judge, judge_price)
    return read_usage(judge.replies).cost(price) if price is not None else 0.0
