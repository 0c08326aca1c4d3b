"""``gavel synth``: write a synthetic diagnostic data set with exact ground truth."""

from __future__ import annotations

from pathlib import Path

import click

from gavel.benchmarks.registry import Options, benchmark_names, get_benchmark
from gavel.cli.options import FiniteFloat
from gavel.synth.scenes import DIFFICULTIES
from gavel.synth.vocabulary import GAVEL_CATEGORIES


def parse_weights(text: str | None) -> dict[str, float] | None:
    """``"Qty=2,Color=1"`` -> weights per category (unlisted categories get 0)."""
    if not text:
        return None
    weights = {}
    for part in text.split(","):
        name, _, value = part.partition("=")
        if name not in GAVEL_CATEGORIES:
            allowed = ", ".join(GAVEL_CATEGORIES)
            raise click.BadParameter(f"unknown category {name!r}; choose from {allowed}")
        try:
            weights[name] = float(value or 1)
        except ValueError:
            raise click.BadParameter(f"weight of {name} must be a number, got {value!r}") from None
    if not any(weights.values()):
        raise click.BadParameter("at least one category needs a positive weight")
    return weights


@click.command()
@click.option(
    "--benchmark", type=click.Choice(benchmark_names()), default="gavel", show_default=True
)
@click.option(
    "--n",
    "count",
    type=click.IntRange(min=1),
    default=100,
    show_default=True,
    help="Samples (VideoHallucer: pairs, spread over its categories).",
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Output folder.")
@click.option(
    "--difficulty",
    type=click.Choice(list(DIFFICULTIES)),
    default="medium",
    show_default=True,
    help="Object count, small objects, noise, blur, JPEG, "
    "close colours, clutter and occlusion grow with it.",
)
@click.option(
    "--clean-share",
    type=FiniteFloat(0, 1),
    default=None,
    help="Share of captions without an error [GAVEL 0.07, DetailVerifyBench 0.2].",
)
@click.option(
    "--categories",
    default=None,
    help="GAVEL category weights, e.g. 'Qty=2,Color=1' [default: all seven equally].",
)
def synth(benchmark: str, count: int, seed: int, out: Path, difficulty: str,
          clean_share: float | None, categories: str | None) -> None:  # fmt: skip
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

    options = Options(clean_share=clean_share, categories=parse_weights(categories))
    console = Console(stderr=True)
    with Progress(console=console, transient=True, disable=not console.is_terminal) as progress:
        task = progress.add_task(f"synthesizing {benchmark}", total=count)
        path = get_benchmark(benchmark).synth(
            out, count, seed, difficulty, options, lambda: progress.advance(task)
        )
    click.echo(f"wrote {count} samples to {path}")
