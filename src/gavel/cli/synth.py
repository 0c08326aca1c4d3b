"""``gavel synth``: write a synthetic diagnostic data set with exact ground truth."""

from __future__ import annotations

from pathlib import Path

import click

from gavel.api import synthesis
from gavel.api.benchmarks import benchmark_names
from gavel.api.synthesis import BOUNDS, difficulties
from gavel.cli.benchmark_flags import BenchmarkCommand
from gavel.cli.options import bound_type


@click.command(cls=BenchmarkCommand, benchmark_commands=("synth",))
@click.option(
    "--benchmark", type=click.Choice(benchmark_names()), default="gavel", show_default=True
)
@click.option(
    "--n",
    "count",
    type=bound_type(BOUNDS["n"]),
    default=100,
    show_default=True,
    help="Samples (VideoHallucer: pairs, spread over its categories).",
)
@click.option("--seed", type=bound_type(BOUNDS["seed"]), default=0, show_default=True)
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Output folder.")
@click.option(
    "--difficulty",
    type=click.Choice(difficulties()),
    default="medium",
    show_default=True,
    help="Object count, small objects, noise, blur, JPEG, "
    "close colours, clutter and occlusion grow with it.",
)
def synth(benchmark: str, count: int, seed: int, out: Path, difficulty: str,
          **options: object) -> None:  # fmt: skip
    """Procedural data in each benchmark's own format, with exact ground truth.

    \b
    gavel          one-sentence captions of shape scenes with one injected error
                   (Obj, Color, Qty, Loc, Size, Attr, State) or none; exact boxes
    detailverify   150+ word descriptions with hallucinated words tagged (real_test layout)
    videohallucer  short videos with paired yes/no questions (object relation, temporal,
                   semantic detail), in the official folder layout
    The same arguments always give byte-identical files.
    """
    from rich.console import Console
    from rich.progress import Progress

    console = Console(stderr=True)
    with Progress(console=console, transient=True, disable=not console.is_terminal) as progress:
        task = progress.add_task(f"synthesizing {benchmark}", total=count)
        settings = synthesis.from_parameters({"benchmark": benchmark, "count": count,
                                              "seed": seed, "out": out,
                                              "difficulty": difficulty, **options})  # fmt: skip
        path = synthesis.synthesize_with(settings, progress=lambda: progress.advance(task))
    click.echo(f"wrote {count} samples to {path}")
