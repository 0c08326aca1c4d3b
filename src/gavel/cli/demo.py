"""``gavel demo``: score the built-in examples offline and show the tables."""

from __future__ import annotations

import time
from pathlib import Path

import click

from gavel.benchmarks.gavel import GavelSettings, evaluate_files
from gavel.cli.score import write_run
from gavel.examples import example_dir
from gavel.io.files import atomic_write_bytes
from gavel.matching import policy_names
from gavel.report.tables import gavel_table, render


@click.command()
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=Path("gavel-demo"),
    show_default=True,
    help="Folder for the results of the demo.",
)
@click.option(
    "--match",
    type=click.Choice(policy_names()),
    default="union",
    show_default=True,
    help="Multi-box matching policy.",
)
def demo(out: Path, match: str) -> None:
    """Score five model families' answers on real photos, offline, and print Table 1.

    The photos ship with gavel (public-domain images from scikit-image's sample data) with
    hand-written captions, gold boxes, and responses in each family's own box syntax and
    coordinate convention, so the demo exercises the real parsers and metrics end to end.
    """
    started = time.perf_counter()
    examples = example_dir("photos")
    settings = GavelSettings(match=match)
    runs = []
    for predictions in sorted((examples / "predictions").glob("*.jsonl")):
        result, scores = evaluate_files(examples / "gavel.jsonl", predictions, settings)
        # The responses are hand-written in each family's output format, not real model outputs.
        label = f"{predictions.stem} format (example)"
        write_run(out / predictions.stem / "results.json", result, scores)
        runs.append((label, result))
    table = gavel_table(runs)
    atomic_write_bytes(out / "table.md", render(table, "markdown").encode())
    click.echo(render(table, "table"), nl=False)
    click.echo(f"data: {examples / 'gavel.jsonl'}")
    click.echo(f"results for {len(runs)} models in {out}/ ({time.perf_counter() - started:.1f} s)")
