"""``gavel demo``: everything offline on built-in data, with the tables printed at the end."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from gavel.benchmarks.gavel.scoring import GavelSettings, evaluate_files
from gavel.benchmarks.registry import get_benchmark
from gavel.benchmarks.spec import RunSettings
from gavel.cli.options import seed_type
from gavel.errors import GavelError
from gavel.examples import example_dir
from gavel.io.files import atomic_write_bytes
from gavel.matching_names import POLICY_NAMES
from gavel.models.scene.adapter import SceneModel
from gavel.records import Result, Score
from gavel.report.html import write_report
from gavel.report.tables import render
from gavel.runner.local import run_model
from gavel.scoring.files import write_run
from gavel.scoring.judging import gavel_scores

if TYPE_CHECKING:
    from gavel.judge.apply import Judge

#: (benchmark, difficulty, share of --n) for the synthetic runs.
SYNTHETIC_RUNS = (
    ("gavel", "medium", 1.0),
    ("gavel", "hard", 1.0),
    ("detailverify", "medium", 0.5),
    ("detailverify", "hard", 0.5),
    ("videohallucer", "medium", 0.25),
    ("videohallucer", "hard", 0.25),
)


def offline_judge() -> Judge | None:
    """The offline proxy judge, or None (with a note) when the judge extra is not installed."""
    from gavel.judge.apply import load_judge

    try:
        return load_judge("offline")
    except GavelError as error:
        click.echo(f"note: no explanation column ({error})", err=True)
        return None


def judge_explanations(
    judge: Judge | None, data: Path, result: Result, scores: Sequence[Score]
) -> None:
    """Add the offline judge's explanation scores to a scored GAVEL run."""
    if judge is None:
        return
    from gavel.benchmarks.gavel.data import load_samples
    from gavel.judge.apply import judge_result

    samples, _ = load_samples(data)
    judge_result(result, samples, gavel_scores(scores), judge)


def score_photos(out: Path, match: str, judge: Judge | None = None) -> list[tuple[str, Result]]:
    """The shipped photos against answers written in five model families' output formats."""
    examples = example_dir("photos")
    runs = []
    for predictions in sorted((examples / "predictions").glob("*.jsonl")):
        result, scores = evaluate_files(
            examples / "gavel.jsonl", predictions, GavelSettings(match=match)
        )
        judge_explanations(judge, examples / "gavel.jsonl", result, scores)
        write_run(out / predictions.stem / "results.json", result, scores)
        # The responses are hand-written in each family's output format, not real model outputs.
        runs.append((f"{predictions.stem} format (example)", result))
    return runs


def score_synthetic(
    out: Path,
    benchmark: str,
    difficulty: str,
    n: int,
    seed: int,
    match: str,
    judge: Judge | None = None,
) -> tuple[str, Result]:
    """A fresh synthetic set, answered by the built-in scene model from pixels alone, scored."""
    spec = get_benchmark(benchmark)
    # --match is GAVEL's option; the other benchmarks score as they always do.
    run = RunSettings({"match": match} if spec.declares("match") else {})
    folder = out / benchmark / difficulty
    data = spec.synth(folder / "data", n, seed, difficulty, run, None)
    model = SceneModel()
    prepared = spec.prepare(data, model, run)
    predictions = folder / "predictions.jsonl"
    run_model(model, prepared.requests, predictions, total=prepared.total)
    result, scores = spec.evaluate(data, predictions, run)
    if benchmark == "gavel":
        judge_explanations(judge, data, result, scores)
    write_run(folder / "results.json", result, scores)
    return f"scene model, synthetic {difficulty}", result


@click.command()
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=Path("gavel-demo"),
    show_default=True,
    help="Folder for everything the demo makes.",
)
@click.option(
    "--match",
    type=click.Choice(POLICY_NAMES),
    default="union",
    show_default=True,
    help="GAVEL multi-box matching policy.",
)
@click.option(
    "--n",
    "count",
    type=click.IntRange(min=4),
    default=40,
    show_default=True,
    help="Synthetic GAVEL samples per difficulty (DetailVerifyBench gets half as "
    "many, VideoHallucer a quarter as many pairs).",
)
@click.option(
    "--seed", type=seed_type(), default=0, show_default=True, help="Seed of the synthetic sets."
)
def demo(out: Path, match: str, count: int, seed: int) -> None:  # fmt: skip
    """Run gavel end to end, offline, in well under a minute, and print three tables.

    \b
    1. GAVEL on real photos (public-domain scikit-image samples) with hand-annotated
       captions, scored against answers written in five model families' box syntaxes.
    2. GAVEL, DetailVerifyBench and VideoHallucer on fresh synthetic data with exact gold
       (medium and hard), answered by the built-in scene model from pixels alone.
    GAVEL explanations are scored by the offline proxy judge (embedding similarity, labelled
    proxy; needs the judge extra), not by the paper's LLM judge, which needs an API.
    Data, predictions, results, per-sample scores and an HTML report go to --out.
    """
    started = time.perf_counter()
    judge = offline_judge()
    runs: dict[str, list[tuple[str, Result]]] = {
        "gavel": score_photos(out / "photos", match, judge)
    }
    for benchmark, difficulty, share in SYNTHETIC_RUNS:
        n = max(3, round(count * share))
        runs.setdefault(benchmark, []).append(
            score_synthetic(out / "synthetic", benchmark, difficulty, n, seed, match, judge)
        )
    for benchmark, results in runs.items():
        table = get_benchmark(benchmark).table(results)
        atomic_write_bytes(out / f"{benchmark}-table.md", render(table, "markdown").encode())
        click.echo(render(table, "table"), nl=False)
    page = write_report(sorted(out.rglob("results.json")), out / "report", title="gavel demo")
    click.echo(f"report: {page}")
    click.echo(f"everything is in {out}/ ({time.perf_counter() - started:.1f} s)")
