"""``gavel demo``: everything offline on built-in data, with the tables printed at the end."""

from __future__ import annotations

import time
from pathlib import Path

import click

from gavel.benchmarks.gavel import GavelSettings, build_requests, evaluate_files
from gavel.benchmarks.gavel_data import load_samples
from gavel.cli.score import write_run
from gavel.examples import example_dir
from gavel.io.files import atomic_write_bytes
from gavel.matching import policy_names
from gavel.models.scene.adapter import SceneModel
from gavel.prompts import load_template
from gavel.report.tables import gavel_table, render
from gavel.runner.local import run_model
from gavel.synth.gavel_set import generate_gavel


def score_photos(out: Path, settings: GavelSettings) -> list:
    """The shipped photos against answers written in five model families' output formats."""
    examples = example_dir("photos")
    runs = []
    for predictions in sorted((examples / "predictions").glob("*.jsonl")):
        result, scores = evaluate_files(examples / "gavel.jsonl", predictions, settings)
        write_run(out / predictions.stem / "results.json", result, scores)
        # The responses are hand-written in each family's output format, not real model outputs.
        runs.append((f"{predictions.stem} format (example)", result))
    return runs


def score_synthetic(out: Path, settings: GavelSettings, n: int, seed: int) -> list:
    """A fresh synthetic set, answered by the built-in scene model from pixels alone."""
    runs = []
    for difficulty in ("medium", "hard"):
        folder = out / difficulty
        data = generate_gavel(folder / "data", n, seed, difficulty)
        samples, _ = load_samples(data)
        requests = build_requests(samples, data.parent, load_template("gavel_v1"), "pixel")
        predictions = folder / "predictions.jsonl"
        run_model(SceneModel(), requests, predictions, total=len(samples))
        result, scores = evaluate_files(data, predictions, settings)
        write_run(folder / "results.json", result, scores)
        runs.append((f"scene model, synthetic {difficulty}", result))
    return runs


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
    type=click.Choice(policy_names()),
    default="union",
    show_default=True,
    help="Multi-box matching policy.",
)
@click.option(
    "--n",
    "count",
    type=click.IntRange(min=1),
    default=60,
    show_default=True,
    help="Synthetic samples per difficulty.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the synthetic sets.")
def demo(out: Path, match: str, count: int, seed: int) -> None:
    """Run gavel end to end, offline, in well under a minute.

    \b
    1. Real photos (public-domain scikit-image samples) with hand-annotated captions, scored
       against answers written in five model families' box syntaxes and conventions.
    2. Synthetic scenes with exact gold (medium and hard), answered by the built-in scene model
       from pixels alone, then scored.
    Tables are printed; data, predictions, results and per-sample scores go to --out.
    """
    started = time.perf_counter()
    settings = GavelSettings(match=match)
    photos = score_photos(out / "photos", settings)
    synthetic = score_synthetic(out / "synthetic", settings, count, seed)
    runs = photos + synthetic
    table = gavel_table(runs)
    atomic_write_bytes(out / "gavel-table.md", render(table, "markdown").encode())
    click.echo(render(table, "table"), nl=False)
    click.echo(f"everything is in {out}/ ({time.perf_counter() - started:.1f} s)")
