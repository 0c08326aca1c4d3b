"""``gavel.score``: score saved predictions against gold data, as ``gavel score``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gavel.errors import ConfigError, GavelError
from gavel.records import Result as ResultRecord
from gavel.records import Score
from gavel.scoring.settings import BOUNDS, CHOICES, ScoreSettings
from gavel.setting_checks import refuse_given

__all__ = [
    "BOUNDS",
    "CHOICES",
    "Result",
    "ScoreSettings",
    "score",
    "score_dry_run",
    "score_settings",
    "score_with",
]


@dataclass
class Result:
    """A scored run: what ``gavel score`` prints and writes, as Python values.

    ``record`` is the results.json record itself (:class:`gavel.records.Result`); ``scores``
    are the per-sample scores (results.scores.jsonl), in data order: for GAVEL a sequence kept
    in a temporary file whose items are decoded when read (``gavel.io.spool``). :meth:`table` prints what
    ``gavel score --format`` prints, :meth:`save` writes what ``gavel score --out`` writes.
    """

    record: ResultRecord
    scores: Sequence[Score]
    #: The row label of the table (``--name``, else the model, else the predictions' name).
    name: str
    #: The judge's ledger line, written with the run's files (an LLM judge only).
    ledger_entry: dict[str, Any] | None = field(default=None, repr=False)
    #: The table format ``table()`` uses when none is given (``--format``).
    format: str = "table"
    #: The files written (results.json, then the per-sample scores); empty until written.
    written: tuple[Path, ...] = ()
    #: Why the judging is not complete (the judge stopped: a budget, a failing server), with
    #: the exit status the command line gives it; None when it is. The files are written.
    incomplete: GavelError | None = field(default=None, repr=False)

    @property
    def benchmark(self) -> str:
        return self.record.benchmark

    @property
    def metrics(self) -> dict[str, Any]:
        """The headline metrics and breakdowns (results.json ``metrics``)."""
        return self.record.metrics

    @property
    def counts(self) -> dict[str, int]:
        """Outcome counts: ok, missing, model_error, unparseable, ... (results.json ``counts``)."""
        return self.record.counts

    @property
    def warnings(self) -> list[str]:
        return self.record.warnings

    def table(self, format: str | None = None) -> str:
        """The benchmark's table of this run in ``format`` (one of ``gavel score --format``'s:
        table, markdown, latex, csv, json), the text ``gavel score`` prints."""
        from gavel.benchmarks.registry import get_benchmark
        from gavel.errors import ConfigError
        from gavel.report.tables import FORMATS, render

        style = format or self.format
        if style not in FORMATS:
            raise ConfigError(
                f"unknown table format {style!r}; choose one of: {', '.join(FORMATS)}"
            )
        rows = [(self.name, self.record)]
        return render(get_benchmark(self.benchmark).table(rows), style, rows)

    def save(self, folder: str | Path) -> Path:
        """Write ``results.json`` and ``results.scores.jsonl`` into ``folder`` exactly as
        ``gavel score --out FOLDER/results.json`` does (one change: a failed write leaves
        every file as it was); returns the results.json path."""
        out = Path(folder) / "results.json"
        self._write(out)
        return out

    def _write(self, out: Path) -> None:
        from gavel.scoring.files import write_run

        per_sample = write_run(out, self.record, self.scores, self.ledger_entry)
        self.written = (out, per_sample)


#: ``gavel score`` flags the Python API does not take yet (the command line prints them).
_NOT_OFFERED = {name: getattr(ScoreSettings, name) for name in ("dry_run", "dry_run_format")}


def score(benchmark: str, *, data: str | Path, predictions: str | Path, judge: str | None = None,
          out: str | Path | None = None, **settings: Any) -> Result:  # fmt: skip
    """Score ``predictions`` against ``data`` exactly as ``gavel score`` does; the model is
    never needed again.

    ``judge``: ``--judge`` (GAVEL explanations: ``offline``, ``openai:MODEL``, a plugin's).
    ``out``: where ``--out`` writes results.json (its per-sample scores beside it); None
    writes nothing (:meth:`Result.save` can, later). ``settings`` are the other fields of
    :class:`~gavel.scoring.settings.ScoreSettings` (``bootstrap=0``, ``limit=20``,
    ``judge_concurrency=4``) and the benchmark's own options (``match="union"``), with
    ``gavel score``'s defaults and checks: a refused one is a
    :class:`~gavel.errors.ConfigError` naming it, in the command line's words. A judge that
    did not finish is raised (:class:`~gavel.errors.GavelError`) after the files are written.
    """
    refuse_given(settings, _NOT_OFFERED, "gavel score --dry-run")
    made, given = score_settings(benchmark, data=data, predictions=predictions, judge=judge,
                                 out=out, **settings)  # fmt: skip
    from gavel.benchmarks.registry import get_benchmark

    configuration = made.configuration(get_benchmark(benchmark), given)
    result = score_with(made, configuration=configuration)
    if result.incomplete is not None:
        raise result.incomplete
    return result


def score_settings(benchmark: str, **given: Any) -> tuple[ScoreSettings, set[str]]:
    """The :class:`ScoreSettings` of keyword settings (the benchmark's own options among them)
    and the names given a value; a setting ``gavel score`` does not take is refused naming
    it, or naming the benchmark it belongs to (``mode`` is DetailVerifyBench's)."""
    from dataclasses import fields

    from gavel.benchmarks.registry import benchmark_names, foreign_option, get_benchmark
    from gavel.setting_checks import check_choice

    check_choice("--benchmark", benchmark, benchmark_names())
    spec = get_benchmark(benchmark)
    own = {option.setting: option for option in spec.options_for("score")}
    names = {item.name for item in fields(ScoreSettings)} - {"options"}
    for name in given:
        if name not in names and name not in own:
            refusal = foreign_option(f"--{name.replace('_', '-')}", spec, ("score",))
            known = ", ".join(sorted(names | set(own)))
            raise ConfigError(
                refusal or f"{name!r} is not a setting of gavel score (its settings: {known})"
            )
    options = {name: value for name, value in given.items() if name in own}  # checked there
    kept = {name: value for name, value in given.items() if name in names}
    chosen = {name for name, value in given.items() if name not in _UNSET or value is not None}
    kept = {name: value for name, value in kept.items() if name in chosen}
    return ScoreSettings(benchmark=benchmark, **kept, options=options), chosen | {"benchmark"}


#: Keywords of :func:`score` that are given None when not given (their default).
_UNSET = ("judge", "out")


def score_with(settings: ScoreSettings, *, configuration: dict[str, Any] | None = None,
               judge: Any = None, spent_elsewhere: float = 0.0) -> Result:  # fmt: skip
    """Score as ``settings`` say and write ``settings.out`` when given: what ``gavel score``
    does, its printing aside. A judge that stops is no exception here: the result says so
    (:attr:`Result.incomplete`), so a caller can show the run before it reports the stop.

    ``configuration``: every setting's value and where it came from (``default``,
    ``config``, ``command line``, ``python``), recorded in the manifest. ``judge``: one
    already built from these settings (``gavel run`` builds it before generating, so a
    wrong judge setting costs no answers). ``spent_elsewhere``: USD the same run spent
    before (its generation), counted in ``max_cost``.
    """
    from contextlib import nullcontext

    from gavel.io.output_lock import exclusive
    from gavel.scoring.evaluate import run_name
    from gavel.scoring.pricing import judge_budget
    from gavel.scoring.run import plan_scoring, score_plan

    plan = plan_scoring(settings)
    # One writer of results.json and the files beside it (the judge's replies, its ledger),
    # from before the judge asks anything until they are written.
    with exclusive(plan.out) if plan.out is not None else nullcontext():
        if judge is None:
            judge = make_judge(settings)
        judge_budget(judge, max_cost=settings.max_cost, judge_price=settings.judge_price,
                     tokenizer=_path(settings.judge_tokenizer), spent_elsewhere=spent_elsewhere)  # fmt: skip
        record, scores, ledger_entry = score_plan(plan, judge, configuration)
        name = run_name(record, plan.predictions, settings.name)
        result = Result(record, scores, name, ledger_entry, settings.format)
        if plan.out is not None:
            result._write(plan.out)
    stopped = getattr(judge, "stopped", None)
    if stopped:  # everything is written; the judging is not complete
        result.incomplete = GavelError(f"the judge did not finish: {stopped}")
        result.incomplete.exit_code = getattr(judge, "exit_code", 2)  # type: ignore[attr-defined]
    return result


def score_dry_run(settings: ScoreSettings, configuration: dict[str, Any] | None = None) -> str:
    """``gavel score --dry-run``: the report of what the judge would be sent and its cost
    (scoring itself is free), with ``configuration`` (as :func:`score_with` records it) when
    given, in ``settings.dry_run_format``; nothing is sent or written."""
    from gavel.cost.report import dry_run_text
    from gavel.io.formats.inspect_log import reading_epoch
    from gavel.scoring.pricing import (
        counts_requests,
        judge_estimate,
        nothing_to_send,
        scored_items,
    )
    from gavel.scoring.run import plan_scoring

    plan = plan_scoring(settings)
    judge = make_judge(settings)
    style = settings.dry_run_format
    if not counts_requests(judge):
        return nothing_to_send(configuration, style)
    with reading_epoch(plan.epoch):
        items = scored_items(plan.spec, plan.data_file, plan.predictions, plan.run)
    part = judge_estimate(judge, items, settings.judge_price,
                          tokenizer=_path(settings.judge_tokenizer))  # fmt: skip
    return dry_run_text([part], configuration, style)


def _path(value: str | Path | None) -> Path | None:
    return Path(value) if value is not None else None


def make_judge(settings: ScoreSettings) -> Any:
    """The judge ``settings`` ask for, or None, as ``gavel score`` builds it: its batch
    settings given, its settings checked (before any scoring)."""
    from gavel.scoring.judging import judge_batch, judge_for, use_batch

    out = _path(settings.out)
    judging = {
        "judge_base_urls": tuple(settings.judge_base_url),
        "judge_api_key_env": settings.judge_api_key_env,
        "judge_concurrency": settings.judge_concurrency,
        "judge_max_tokens": settings.judge_max_tokens,
        "judge_temperature": settings.judge_temperature,
        "judge_extra_body": settings.judge_extra_body,
        "judge_retries": settings.judge_retries,
        "judge_cache": _path(settings.judge_cache),
        "no_judge_cache": settings.no_judge_cache,
        "judge_price": settings.judge_price,
        "judge_timeout": settings.judge_timeout,
        "no_judge_model_check": settings.no_judge_model_check,
        "judge_rpm": settings.judge_rpm,
        "judge_tpm": settings.judge_tpm,
    }
    batch = judge_batch(settings.judge, out, settings.judge_base_url, on=settings.judge_batch,
                        fallback=settings.judge_batch_fallback, rounds=settings.judge_batch_rounds,
                        poll=settings.judge_batch_poll)  # fmt: skip
    judge = judge_for(settings.benchmark, out, settings.judge, **judging)
    use_batch(judge, batch)
    return judge
