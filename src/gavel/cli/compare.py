"""``gavel compare A/results.json B/results.json``: does A beat B on the same samples?"""

from __future__ import annotations

from pathlib import Path

import click

from gavel.api.reports import COMPARE_FORMATS
from gavel.api.reports import compare as compare_runs
from gavel.cli.options import bootstrap_type, seed_type


@click.command()
@click.argument("first", type=click.Path(path_type=Path))
@click.argument("second", type=click.Path(path_type=Path))
@click.option(
    "--bootstrap",
    "resamples",
    type=bootstrap_type(100),
    default=2000,
    show_default=True,
    help="Paired bootstrap resamples.",
)
@click.option("--seed", type=seed_type(), default=0, show_default=True)
@click.option(
    "--format",
    "style",
    type=click.Choice(list(COMPARE_FORMATS)),
    default="table",
    show_default=True,
)
def compare(first: Path, second: Path, resamples: int, seed: int, style: str) -> None:
    """Paired bootstrap (every metric) and McNemar's exact test (right/wrong metrics).

    Needs the per-sample scores that `gavel score --out` writes beside each results.json.
    A − B > 0 favours the first run; p-values are two-sided.
    """
    compared = compare_runs(first, second, resamples=resamples, seed=seed, format=style)
    for warning in compared.warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(compared.text, nl=False)
