"""``gavel.run``: generate, then score, into one run folder, as ``gavel run``.

A run is a generation (:class:`~gavel.execution.settings.GenerateSettings`) and a scoring
(:class:`~gavel.scoring.settings.ScoreSettings`) of its predictions; :func:`run_with` does
both in the order that keeps a mistake cheap, and ``gavel run`` and :func:`run` only build
the two settings (from flags, from keywords).
"""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from gavel.api.generation import GenerateSettings
from gavel.api.scoring import Result, ScoreSettings
from gavel.setting_checks import refuse_given

__all__ = ["run", "run_with"]

#: ``gavel run`` flags the Python API does not take yet: the dry run that prints the estimate.
_NOT_OFFERED = {name: getattr(GenerateSettings, name) for name in ("dry_run", "dry_run_format")}
#: What the selection of a run is: both steps take the same (``gavel run`` has one of each).
_SELECTION = ("limit", "sample_id", "shuffle", "seed", "image_root")


def _scoring_only() -> tuple[str, ...]:
    """The settings of a run that only its scoring takes: the table's, the bootstrap's and the
    judge's (its budget and dry run are the run's, its data and selection the generation's)."""
    return tuple(
        item.name
        for item in fields(ScoreSettings)
        if item.name in ("format", "name", "bootstrap")
        or item.name.startswith(("judge", "no_judge"))
    )


def run_with(generation: GenerateSettings, scoring: ScoreSettings,
             configuration: dict[str, Any] | None = None) -> Result | str:  # fmt: skip
    """Generate as ``generation`` says, then score its predictions as ``scoring`` says: what
    ``gavel run`` does, its printing aside.

    The run's one budget and its dry run are ``generation``'s (``max_cost``, ``dry_run``,
    ``dry_run_format``): the budget covers the model and the judge together, and a dry run
    returns the report of both estimates (the text ``gavel run --dry-run`` prints), sending
    and writing nothing. The judge is built (its settings checked) before any answer is asked
    for. Samples that failed are scored (``model_error``), every file written, and the failure
    is then the result's :attr:`~Result.incomplete` (unless the judge stopped, which is).
    ``configuration``: every setting's value and where it came from, recorded in both
    manifests.
    """
    from gavel.api.generation import SamplesFailed, generate_with, spent_by
    from gavel.api.scoring import make_judge, score_with
    from gavel.execution.settings import checked
    from gavel.io.output_lock import exclusive
    from gavel.scoring import pricing

    generation = checked(generation)  # each value as its flag takes it; out and model given
    assert generation.out is not None and generation.model is not None
    judge = make_judge(scoring)  # before any answer: a wrong judge setting costs none
    if generation.dry_run:
        return _dry_run(generation, scoring, judge, configuration)
    # The predictions stay locked while they are scored: a second run into the folder must
    # not rewrite them (asking failed samples again) under this one's scoring.
    with exclusive(generation.out):
        spent_before = 0.0  # by the judge of an earlier run into the same folder
        if generation.max_cost is not None:
            spent_before = pricing.spent_by_judge(judge, scoring.judge_price)
        failed = None
        try:
            generate_with(generation, configuration, spent_elsewhere=spent_before)
        except SamplesFailed as error:  # scored all the same (model_error); the result says so
            failed = error
        spent = spent_by(Path(generation.out), generation.model, generation.price,
                         generation.batch)  # fmt: skip
        paid = generation.max_cost if hasattr(judge, "budget") else None  # an LLM judge only
        scoring = replace(scoring, max_cost=paid, dry_run=False)
        result = score_with(scoring, configuration=configuration, judge=judge,
                            spent_elsewhere=spent)  # fmt: skip
    if result.incomplete is None:
        result.incomplete = failed
    return result


def _dry_run(generation: GenerateSettings, scoring: ScoreSettings, judge: Any,
             configuration: dict[str, Any] | None) -> str:  # fmt: skip
    """``gavel run --dry-run``: the generation's estimate and the judge's, in one report."""
    from gavel.api.generation import generate_with
    from gavel.benchmarks.registry import get_benchmark
    from gavel.scoring import pricing
    from gavel.scoring.run import benchmark_values

    estimate = generate_with(generation, configuration).estimate
    assert generation.data is not None and generation.out is not None  # checked
    tokenizer = scoring.judge_tokenizer
    parts = [estimate]
    if pricing.counts_requests(judge):
        spec = get_benchmark(generation.benchmark)
        parts.append(pricing.planned_judge(
            judge, estimate, benchmark=generation.benchmark, data_file=Path(generation.data),
            image_root=generation.image_root, predictions=Path(generation.out),
            score_options=benchmark_values(spec, scoring.options),
            judge_price=scoring.judge_price,
            tokenizer=Path(tokenizer) if tokenizer is not None else None,
        ))  # fmt: skip
    from gavel.cost.report import dry_run_text

    return dry_run_text(parts, configuration, generation.dry_run_format)


def run(benchmark: str, *, data: str | Path, model: str, out: str | Path,
        judge: str | None = None, **settings: Any) -> Result:  # fmt: skip
    """Ask ``model`` (as :func:`gavel.generate`), then score (as :func:`gavel.score`), into the
    run folder ``out``: predictions.jsonl, predictions.manifest.json, results.json and
    results.scores.jsonl, exactly as ``gavel run --out OUT`` writes them.

    ``settings`` are ``gavel run``'s flags by name, with its defaults and checks; each goes
    to the step that takes it (the selection to both; ``max_cost`` is one budget for the
    model and the judge). A judge is built, and its settings checked, before any answer is
    asked for. Calling again resumes the generation and scores again. Samples that failed
    are scored (``model_error``), the files written, and then the failure is raised
    (:class:`~gavel.errors.GavelError`), as the command's exit 2.
    """
    from gavel.api.generation import settings_from
    from gavel.api.scoring import score_settings
    from gavel.execution.settings import checked

    refuse_given(settings, _NOT_OFFERED, "gavel run")
    to_generate, to_score = _split(benchmark, settings)
    folder = Path(out)
    given = {"data": data, "model": model, "out": folder / "predictions.jsonl", **to_generate}
    generation = checked(settings_from(benchmark, given))  # as its manifest records it
    selection = {name: getattr(generation, name) for name in _SELECTION}
    scoring, _ = score_settings(benchmark, data=data, predictions=generation.out,
                                out=folder / "results.json", judge=judge, **selection,
                                **to_score)  # fmt: skip
    chosen = {"benchmark", "data", "model", "out", *settings} | ({"judge"} if judge else set())
    configuration = _configuration(generation, scoring, folder, chosen)
    result = run_with(generation, scoring, configuration)
    assert isinstance(result, Result)  # no dry run here
    if result.incomplete is not None:
        raise result.incomplete
    return result


def _split(benchmark: str, settings: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Keyword settings of a run as the generation's and the scoring's (the benchmark's own
    to the steps that declare them); one neither takes is refused naming it, or naming the
    benchmark it belongs to."""
    from gavel.benchmarks.registry import benchmark_names, foreign_option, get_benchmark
    from gavel.errors import ConfigError
    from gavel.execution.settings import SETTINGS
    from gavel.execution.settings import flag as flag_of
    from gavel.setting_checks import check_choice

    check_choice(flag_of("benchmark"), benchmark, benchmark_names())
    spec = get_benchmark(benchmark)
    generated = {*SETTINGS} - {"options"}
    generated |= {o.flag[2:].replace("-", "_") for o in spec.options_for("generate")}
    scored = {*_scoring_only(), *(o.setting for o in spec.options_for("score"))}
    for name in settings:
        if name not in generated and name not in scored:
            refusal = foreign_option(f"--{name.replace('_', '-')}", spec, ("generate", "score"))
            known = ", ".join(sorted(generated | scored))
            raise ConfigError(
                refusal or f"{name!r} is not a setting of gavel run (its settings: {known})"
            )
    to_generate = {name: value for name, value in settings.items() if name in generated}
    return to_generate, {name: value for name, value in settings.items() if name in scored}


def _configuration(generation: GenerateSettings, scoring: ScoreSettings, folder: Path,
                   chosen: set[str]) -> dict[str, Any]:  # fmt: skip
    """The manifest's record of a run given from Python, as ``gavel run`` records its flags:
    the generation's settings, the scoring's that only it takes, and the run folder."""
    from gavel.benchmarks.registry import get_benchmark
    from gavel.execution.settings import configuration
    from gavel.scoring.settings import flag
    from gavel.setting_checks import plain

    spec = get_benchmark(generation.benchmark)
    record = configuration(generation, chosen)
    scored = scoring.configuration(spec, chosen)
    keys = [flag(name)[2:] for name in _scoring_only()]
    keys += [option.flag[2:] for option in spec.options_for("score")]
    record |= {key: scored[key] for key in keys}
    record.pop("out")
    record["out"] = {"value": plain(folder), "from": "python"}
    return record
