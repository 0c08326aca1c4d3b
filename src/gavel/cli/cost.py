"""The cost flags of ``gavel generate``, ``gavel score`` and ``gavel run``: ``--dry-run`` and
``--max-cost`` (docs/running.md, "Dry run and cost" and "Budgets").

:func:`cost_options` declares them all on a command with one decorator line and hands their
values to the command body through :func:`cost_flags`, so the commands' own signatures (which
other options keep growing) do not change. The bodies call the few functions below.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import click

from gavel.cli.options import bound_type
from gavel.errors import ConfigError
from gavel.execution.pricing import bound_cost
from gavel.execution.settings import bound

_FLAGS = "gavel.cost.flags"


@dataclass(frozen=True)
class CostFlags:
    dry_run: bool = False
    dry_run_format: str = "table"
    price: str | None = None
    tokenizer: Path | None = None
    judge_tokenizer: Path | None = None
    max_cost: float | None = None
    #: Spent by the generation of the same ``gavel run`` (counted in the judge's budget).
    spent_elsewhere: float = 0.0


NAMES = tuple(f.name for f in fields(CostFlags))


def _option(name: str) -> Any:
    declared = {
        "dry_run": click.option(
            "--dry-run", is_flag=True,
            help="Print the requests to send, how many the cache and the resume file answer, "
            "the tokens and the cost, and exit; nothing is sent.",
        ),
        "dry_run_format": click.option(
            "--dry-run-format", type=click.Choice(["table", "json"]), default="table",
            show_default=True, help="How --dry-run prints its report.",
        ),
        "price": click.option(
            "--price", default=None, metavar="IN,OUT",
            help="The model's prices in USD per million input and output tokens, e.g. 2.5,10 "
            "[default: a small built-in table, approximate].",
        ),
        "tokenizer": click.option(
            "--tokenizer", type=click.Path(path_type=Path), default=None,
            help="A local tokenizer folder of the model, to count --dry-run's tokens exactly "
            "[default: tiktoken's cached encoding, else an estimate].",
        ),
        "judge_tokenizer": click.option(
            "--judge-tokenizer", type=click.Path(path_type=Path), default=None,
            help="A local tokenizer folder of the LLM judge, for --dry-run.",
        ),
        "max_cost": click.option(
            "--max-cost", type=bound_type(bound("max_cost")), default=None, metavar="USD",
            help="Stop sending once the run's recorded usage costs this much (earlier runs "
            "into the same files included); everything answered is kept.",
        ),
    }  # fmt: skip
    return declared[name]


#: The flags each command takes.
COMMAND_FLAGS = {
    "generate": ("dry_run", "dry_run_format", "price", "tokenizer", "max_cost"),
    "score": ("dry_run", "dry_run_format", "judge_tokenizer", "max_cost"),
}


def cost_options(command: str):
    """Declare the cost flags of ``command`` ("generate" or "score") and pass their values to
    the body through :func:`cost_flags`."""
    names = COMMAND_FLAGS[command]

    def decorate(function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            given = {name: kwargs.pop(name) for name in NAMES if name in kwargs}
            click.get_current_context().meta[_FLAGS] = CostFlags(**given)
            return function(*args, **kwargs)

        for name in reversed(names):
            wrapper = _option(name)(wrapper)
        return wrapper

    return decorate


def cost_flags() -> CostFlags:
    """The cost flags of the command running now."""
    return click.get_current_context().meta.get(_FLAGS, CostFlags())


def pop_cost_flags(kwargs: dict[str, Any]) -> CostFlags:
    """The cost flags among a command's parameters, taken out of them (``gavel run``)."""
    return CostFlags(**{name: kwargs.pop(name) for name in NAMES if name in kwargs})


# --- the dry run ----------------------------------------------------------------------------


def show_dry_run(parts: list, style: str) -> None:
    """Print the report of ``parts`` (estimates) with the run's resolved configuration."""
    from gavel.cli.config_file import resolved
    from gavel.cost.report import build_report, render

    click.echo(render(build_report(parts, resolved()), style), nl=False)


def _judge_sending(flags: CostFlags, judge):
    """How an LLM judge's requests go out (text only), as the dry run counts them."""
    from gavel.cost.estimate import Sending
    from gavel.cost.image_tokens import ESTIMATE
    from gavel.cost.tokens import counter_for

    counter = counter_for(judge.name, flags.judge_tokenizer, "--judge-tokenizer")
    return Sending(counter=counter, image_rule=ESTIMATE, max_tokens=judge.model.inner.max_tokens)


def judge_estimate(flags: CostFlags, judge, items, judge_price: str | None,
                   planned: int = 0, planned_reply: float = 0.0):  # fmt: skip
    """The dry run's estimate of an LLM judge over ``items`` (as scoring builds them), plus
    ``planned`` samples not answered yet whose answers are taken as ``planned_reply`` tokens
    long (``gavel run --dry-run``)."""
    from gavel.cost.estimate import estimate
    from gavel.cost.prices import resolve_price
    from gavel.judge.protocol import judge_messages
    from gavel.runner.cache import model_identity

    sending = _judge_sending(flags, judge)
    counter = sending.counter
    price = resolve_price(judge.name, judge_price, "--judge-price", _batch(judge))
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


def score_dry_run(flags: CostFlags, judge, benchmark, data_file: Path, predictions: Path,
                  run, judge_price: str | None) -> None:  # fmt: skip
    """``gavel score --dry-run``: what the judge would be sent (scoring itself is free)."""
    from gavel.benchmarks.gavel.data import load_samples
    from gavel.judge.items import judge_items

    if judge is None or not hasattr(judge, "requests_for"):
        from gavel.cli.config_file import resolved
        from gavel.cost.report import DryRunReport, configuration_section, render

        nothing = "dry run: no LLM judge, so scoring sends nothing and costs nothing"
        configuration = resolved()
        if configuration is None:
            click.echo(nothing)
        else:
            report = DryRunReport([configuration_section(configuration)], [nothing])
            click.echo(render(report, flags.dry_run_format), nl=False)
        return
    _, scores = benchmark.evaluate(data_file, predictions, run)
    samples, _ = load_samples(data_file, run.image_root)
    items = judge_items(samples, scores)
    show_dry_run([judge_estimate(flags, judge, items, judge_price)], flags.dry_run_format)


def run_dry_run(flags: CostFlags, generation, predictions: Path, generating: dict[str, Any],
                judge, scoring: dict[str, Any], score_values: dict[str, Any]) -> None:  # fmt: skip
    """``gavel run --dry-run``: the generation's estimate (``generation``) and the judge's,
    in one report."""
    parts: list = [generation]
    if judge is not None and hasattr(judge, "requests_for"):
        parts.append(
            _planned_judge(flags, judge, generating, predictions, scoring, score_values, parts[0])
        )
    show_dry_run(parts, flags.dry_run_format)


def _planned_judge(flags, judge, generating, predictions, scoring, score_values, generation):
    """The judge's part of ``gavel run --dry-run``: the answers already there as scoring
    reads them, and one request for each sample the generation will answer."""
    from gavel.benchmarks.gavel.data import load_samples
    from gavel.benchmarks.registry import get_benchmark
    from gavel.benchmarks.spec import RunSettings
    from gavel.judge.items import judge_items
    from gavel.scoring.judging import gavel_scores

    data, image_root = generating["data_file"], generating["image_root"]
    items = []
    if predictions.is_file():
        bench = get_benchmark(generating["benchmark"])
        run = RunSettings(bench.values(score_values), image_root, resamples=0)
        _, scores = bench.evaluate(data, predictions, run)
        samples, _ = load_samples(data, image_root)
        items = judge_items(samples, gavel_scores(scores))
    # Answers sent and answers the cache gives are both written, then judged.
    planned = generation.to_send + generation.cached
    return judge_estimate(flags, judge, items, scoring.get("judge_price"), planned=planned,
                          planned_reply=generation.output_per_request)  # fmt: skip


# --- the budget -----------------------------------------------------------------------------


def _batch(judge) -> bool:
    """Whether an LLM judge sends its requests as a batch (``--judge-batch``)."""
    return getattr(judge, "batch", None) is not None


def judge_budget(flags: CostFlags, judge, judge_price: str | None) -> None:
    """Give an LLM judge its ``--max-cost`` budget (over its replies file)."""
    if flags.max_cost is None:
        return
    if judge is None or not hasattr(judge, "budget"):
        raise click.UsageError("--max-cost: scoring costs nothing without an LLM judge (--judge)")
    from gavel.cost.budget import Budget
    from gavel.cost.prices import resolve_price

    price = resolve_price(judge.name, judge_price, "--judge-price", _batch(judge))
    if price is None:
        raise ConfigError(
            f"--max-cost needs the judge's price ({judge.name}): give --judge-price IN,OUT "
            "(USD per million input and output tokens)"
        )
    files = [(judge.replies, price)] if judge.replies is not None else []
    what = f"the judge {judge.name}"
    if flags.spent_elsewhere:
        what = f"the run (${flags.spent_elsewhere:.4f} by the model, the rest by {what})"
    judge.budget = Budget.over(flags.max_cost, price, files, what)
    judge.budget.spent_before += flags.spent_elsewhere
    if _batch(judge):
        judge.budget.bound = bound_cost(_judge_sending(flags, judge), price, "--judge-max-tokens")


def for_generate(flags: CostFlags, judge=None, judge_price: str | None = None) -> dict[str, Any]:
    """The cost flags ``gavel run`` passes on to its generation; its budget counts what the
    run's judge already spent in an earlier run into the same folder."""
    spent = 0.0
    if flags.max_cost is not None and getattr(judge, "replies", None) is not None:
        from gavel.cost.ledger import read_usage
        from gavel.cost.prices import resolve_price

        price = resolve_price(judge.name, judge_price, "--judge-price", _batch(judge))
        spent = read_usage(judge.replies).cost(price) if price is not None else 0.0
    given = {n: getattr(flags, n) for n in COMMAND_FLAGS["generate"]}
    return given | ({"spent_elsewhere": spent} if spent else {})


def for_score(flags: CostFlags, spent: float, judge) -> dict[str, Any]:
    """The cost flags ``gavel run`` passes on to its scoring: one budget for both, so the
    judge's counts what the generation (``spent``) used; only an LLM judge is paid for."""
    paid = flags.max_cost is not None and hasattr(judge, "budget")
    chosen = replace(flags, max_cost=flags.max_cost if paid else None, spent_elsewhere=spent)
    return {n: getattr(chosen, n) for n in (*COMMAND_FLAGS["score"], "spent_elsewhere")}
