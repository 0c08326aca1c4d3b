"""``gavel.run``: generate, then score, into one run folder, as ``gavel run``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gavel.api.scoring import Result
from gavel.api.settings import command_context, command_values, refuse_given

#: ``gavel run`` flags the Python API does not take yet: one cost budget shared by the
#: generation and the judge, and the dry run that prints the estimate.
_NOT_OFFERED = ("dry_run", "dry_run_format", "max_cost")
#: The parameters of the judge among ``gavel run``'s score settings (its batch ones too).
_JUDGE_SETTINGS = ("judge_", "no_judge_", "batch_judge")


def run(benchmark: str, *, data: str | Path, model: str, out: str | Path,
        judge: str | None = None, **settings: Any) -> Result:  # fmt: skip
    """Ask ``model`` (as :func:`gavel.generate`), then score (as :func:`gavel.score`), into the
    run folder ``out``: predictions.jsonl, predictions.manifest.json, results.json and
    results.scores.jsonl, exactly as ``gavel run --out OUT`` writes them.

    ``settings`` are ``gavel run``'s flags by name, with its defaults and checks; each goes
    to the step that takes it (``limit`` and ``seed`` to both). A judge is built, and its
    flags checked, before any answer is asked for. Calling again resumes the generation and
    scores again. Samples that failed are scored (``model_error``), the files written, and
    then the failure is raised (:class:`~gavel.errors.GavelError`), as the command's exit 2.
    """
    from gavel.api.generation import SamplesFailed, from_parameters, generate_with
    from gavel.api.scoring import make_judge, score_with
    from gavel.benchmarks.registry import get_benchmark
    from gavel.cli import cost
    from gavel.cli.config_file import resolved
    from gavel.cli.run import SCORE_OPTIONS, _for
    from gavel.cli.run import run as command
    from gavel.cli.score import score as score_command
    from gavel.cli.score import settings_from_flags

    refuse_given(settings, _NOT_OFFERED, "gavel run")
    ctx = command_context(command, benchmark)
    given = {"benchmark": benchmark, "data": data, "model": model, "out": out}
    values = command_values(ctx, {**given, **({"judge": judge} if judge else {}), **settings})
    folder: Path = values.pop("out")
    flags = cost.pop_cost_flags(values)
    scoring = {name: values.pop(name) for name in SCORE_OPTIONS}
    bench = get_benchmark(benchmark)
    own = {o.name: values.pop(o.name) for o in bench.options if o.name in values}
    predictions, results = folder / "predictions.jsonl", folder / "results.json"
    judging = {k: v for k, v in scoring.items() if k.startswith(_JUDGE_SETTINGS)}
    judge_settings = {"benchmark": benchmark, "data_file": data, "predictions": predictions,
                      "out": results, **judging}  # fmt: skip
    with ctx:  # the judge first: a wrong judge flag costs no answer
        made = make_judge(settings_from_flags(judge_settings))
    generating = {**values, **_for(bench, "generate", own), "out": predictions}
    generating |= {n: getattr(flags, n) for n in cost.COMMAND_FLAGS["generate"]}
    failed = None
    try:
        with ctx:  # the configuration ``command_values`` recorded
            generate_with(from_parameters(generating), resolved())
    except SamplesFailed as error:  # scored all the same (model_error); raised after
        failed = error
    score_ctx = command_context(score_command, benchmark, ctx)
    scored = command_values(
        score_ctx, {"benchmark": benchmark, "data": data, "predictions": predictions}
    )
    selection = {name: values[name] for name in ("limit", "sample_ids", "shuffle", "seed")}
    scored |= {"data_file": values["data_file"], "image_root": values["image_root"], "out": results}
    scored |= {**selection, **scoring, **_for(bench, "score", own)}
    scored |= {n: getattr(flags, n) for n in cost.COMMAND_FLAGS["score"]}
    with score_ctx:
        result = score_with(settings_from_flags(scored), configuration=resolved(), judge=made)
    if result.incomplete is not None:
        raise result.incomplete
    if failed is not None:
        raise failed
    return result
