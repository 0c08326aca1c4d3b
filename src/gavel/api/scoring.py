"""``gavel.score``: score saved predictions against gold data, as ``gavel score``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gavel.api.settings import command_context, command_values, refuse_given
from gavel.records import Result as ResultRecord
from gavel.records import Score


@dataclass
class Result:
    """A scored run: what ``gavel score`` prints and writes, as Python values.

    ``record`` is the results.json record itself (:class:`gavel.records.Result`); ``scores``
    are the per-sample scores (results.scores.jsonl). :meth:`table` prints what
    ``gavel score --format`` prints, :meth:`save` writes what ``gavel score --out`` writes.
    """

    record: ResultRecord
    scores: list[Score]
    #: The row label of the table (``--name``, else the model, else the predictions' name).
    name: str
    #: The judge's ledger line, written with the run's files (an LLM judge only).
    ledger_entry: dict[str, Any] | None = field(default=None, repr=False)
    #: The table format ``table()`` uses when none is given (``--format``).
    format: str = "table"

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
        write_run(out, self)
        return out


#: ``gavel score`` flags the Python API does not take yet (the command line prints them).
_NOT_OFFERED = ("dry_run", "dry_run_format")


def score(benchmark: str, *, data: str | Path, predictions: str | Path, judge: str | None = None,
          out: str | Path | None = None, **settings: Any) -> Result:  # fmt: skip
    """Score ``predictions`` against ``data`` exactly as ``gavel score`` does; the model is
    never needed again.

    ``judge``: ``--judge`` (GAVEL explanations: ``offline``, ``openai:MODEL``, a plugin's).
    ``out``: where ``--out`` writes results.json (its per-sample scores beside it); None
    writes nothing (:meth:`Result.save` can, later). ``settings`` are the other flags of
    ``gavel score`` by name (``bootstrap=0``, ``limit=20``, ``judge_concurrency=4``, the
    benchmark's own such as ``match="union"``), with the same defaults and checks.
    Raises :class:`~gavel.errors.GavelError` with the command line's message.
    """
    import click

    from gavel.cli.score import score as command

    refuse_given(settings, _NOT_OFFERED, "gavel score --dry-run")
    ctx = command_context(command, benchmark)
    given: dict[str, Any] = {"benchmark": benchmark, "data": data, "predictions": predictions}
    given |= {name: value for name, value in (("judge", judge), ("out", out)) if value is not None}
    values = command_values(ctx, {**given, **settings})
    try:
        with ctx:
            return _score(values)
    except click.ClickException as error:
        from gavel.errors import ConfigError

        raise ConfigError(error.format_message()) from None


def _score(values: dict[str, Any], judge: Any = None) -> Result:
    """The body of ``gavel score`` on checked values (click's parameter names), returning the
    run instead of printing it. ``judge``: one already built from these values (``gavel run``
    builds it before generating, so a wrong judge flag costs no answers)."""
    import click

    from gavel.benchmarks.registry import get_benchmark
    from gavel.benchmarks.spec import RunSettings
    from gavel.cli import cost
    from gavel.cli.benchmark_flags import benchmark_values, make_selection
    from gavel.cli.score import evaluate_run, run_name
    from gavel.errors import GavelError
    from gavel.io.formats.inspect_log import is_inspect_log
    from gavel.sources import resolve_data

    benchmark, predictions, out = values.pop("benchmark"), values.pop("predictions"), values["out"]
    epoch, style, name = values.pop("epoch"), values.pop("style"), values.pop("name")
    if epoch is not None and not is_inspect_log(predictions):
        raise click.UsageError(f"--epoch chooses an epoch of an inspect .eval log: {predictions}")
    data_file, image_root, data_source = resolve_data(
        benchmark, values.pop("data_file"), values.pop("image_root")
    )
    spec = get_benchmark(benchmark)
    flags = {k: v for k, v in values.items() if k not in (*cost.NAMES, "out")}
    bench_values = benchmark_values(spec, "score", flags)
    resamples, seed = flags.pop("resamples"), flags.pop("seed")
    selection = make_selection(
        flags.pop("limit"), flags.pop("sample_ids"), flags.pop("shuffle"), seed
    )
    run = RunSettings(bench_values, image_root, resamples, seed, selection)
    if judge is None:
        judge = make_judge(benchmark, out, flags)
    costs = cost.CostFlags(**{n: values[n] for n in cost.COMMAND_FLAGS["score"]})
    cost.judge_budget(costs, judge, flags.get("judge_price"))
    record, scores, ledger_entry = evaluate_run(
        spec, data_file, predictions, run, epoch, data_source, judge, image_root, out
    )
    result = Result(record, scores, run_name(record, predictions, name), ledger_entry, style)
    if out is not None:
        write_run(out, result)
    stopped = getattr(judge, "stopped", None)
    if stopped:  # everything is written; the judging is not complete
        raise GavelError(f"the judge did not finish: {stopped}")
    return result


def make_judge(benchmark: str, out: Path | None, flags: dict[str, Any]) -> Any:
    """The judge the judge settings among ``flags`` ask for (taken out of them), or None,
    as ``gavel score`` builds it: its batch settings given, its flags checked."""
    from gavel.cli.batch_options import take_judge_flags, use_batch
    from gavel.cli.score import judge_for

    judge_spec = flags.pop("judge_spec")
    judge_batch = take_judge_flags(flags, judge_spec, out)
    judge = judge_for(benchmark, out, judge_spec, **flags)
    use_batch(judge, judge_batch)
    return judge


def write_run(out: Path, result: Result) -> None:
    """The run's files at ``out`` (a results.json path), as ``gavel score --out`` writes."""
    from gavel.cli.score import write_run as write

    write(out, result.record, result.scores, result.ledger_entry)
