"""``gavel demo`` as a function: everything offline on built-in data, each benchmark's table
written and returned as the command prints it."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gavel.benchmarks.gavel.scoring import GavelSettings, evaluate_files
from gavel.benchmarks.registry import echo_filter, get_benchmark
from gavel.benchmarks.spec import RunSettings
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
from gavel.setting_checks import as_path

if TYPE_CHECKING:
    from gavel.judge.apply import Judge

__all__ = ["POLICY_NAMES", "SYNTHETIC_RUNS", "Demo", "demo", "offline_judge", "score_photos",
           "score_synthetic"]  # fmt: skip

#: (benchmark, difficulty, share of --n) for the synthetic runs.
SYNTHETIC_RUNS = (
    ("gavel", "medium", 1.0),
    ("gavel", "hard", 1.0),
    ("detailverify", "medium", 0.5),
    ("detailverify", "hard", 0.5),
    ("videohallucer", "medium", 0.25),
    ("videohallucer", "hard", 0.25),
)


def offline_judge(note: Callable[[str], None] | None = None) -> Judge | None:
    """The offline proxy judge, or None when the judge extra is not installed (``note`` is
    then told why, as ``gavel demo`` prints it)."""
    from gavel.judge.apply import load_judge

    try:
        return load_judge("offline")
    except GavelError as error:
        if note is not None:
            note(f"note: no explanation column ({error})")
        return None


def judge_explanations(
    judge: Judge | None, data: Path, result: Result, scores: Sequence[Score]
) -> Sequence[Score]:
    """Add the offline judge's explanation scores to a scored GAVEL run: its scores with the
    judge's fields."""
    if judge is None:
        return scores
    from gavel.benchmarks.gavel.data import load_samples
    from gavel.scoring.judging import judge_scores

    samples, _ = load_samples(data)
    return judge_scores(result, samples, gavel_scores(scores), judge)


def score_photos(out: Path, match: str, judge: Judge | None = None) -> list[tuple[str, Result]]:
    """The shipped photos against answers written in five model families' output formats."""
    examples = example_dir("photos")
    runs = []
    for predictions in sorted((examples / "predictions").glob("*.jsonl")):
        result, scores = evaluate_files(
            examples / "gavel.jsonl", predictions, GavelSettings(match=match, echo=echo_filter())
        )
        judged = judge_explanations(judge, examples / "gavel.jsonl", result, scores)
        write_run(out / predictions.stem / "results.json", result, judged)
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
    run = RunSettings({"match": match} if spec.declares("match") else {}, echo=echo_filter())
    folder = out / benchmark / difficulty
    data = spec.synth(folder / "data", n, seed, difficulty, run, None)
    model = SceneModel()
    prepared = spec.prepare(data, model, run)
    predictions = folder / "predictions.jsonl"
    run_model(model, prepared.requests, predictions, total=prepared.total)
    result, scores = spec.evaluate(data, predictions, run)
    if benchmark == "gavel":
        scores = judge_explanations(judge, data, result, scores)
    write_run(folder / "results.json", result, scores)
    return f"scene model, synthetic {difficulty}", result


@dataclass(frozen=True)
class Demo:
    """What a demo made: each benchmark's table as the terminal shows it, the report page,
    and the seconds it all took."""

    tables: tuple[str, ...]
    report: Path
    seconds: float


def demo(out: str | Path, match: str = "union", count: int = 40, seed: int = 0,
         note: Callable[[str], None] | None = None) -> Demo:  # fmt: skip
    """Run gavel end to end, offline, into the folder ``out``: the shipped photos against
    five model families' answer formats, then fresh synthetic sets of every benchmark
    (medium and hard; ``count`` GAVEL samples per difficulty, DetailVerifyBench half as many,
    VideoHallucer a quarter as many pairs) answered by the scene model; GAVEL explanations
    by the offline proxy judge when installed (``note`` is told when not). ``match``: GAVEL's
    multi-box matching policy. Data, predictions, results, per-sample scores, each
    benchmark's Markdown table and an HTML report are written under ``out``."""
    started = time.perf_counter()
    out = as_path("--out", out)
    judge = offline_judge(note)
    runs: dict[str, list[tuple[str, Result]]] = {
        "gavel": score_photos(out / "photos", match, judge)
    }
    for benchmark, difficulty, share in SYNTHETIC_RUNS:
        n = max(3, round(count * share))
        runs.setdefault(benchmark, []).append(
            score_synthetic(out / "synthetic", benchmark, difficulty, n, seed, match, judge)
        )
    tables = []
    for benchmark, results in runs.items():
        table = get_benchmark(benchmark).table(results)
        atomic_write_bytes(out / f"{benchmark}-table.md", render(table, "markdown").encode())
        tables.append(render(table, "table"))
    page = write_report(sorted(out.rglob("results.json")), out / "report", title="gavel demo")
    return Demo(tuple(tables), page, time.perf_counter() - started)
