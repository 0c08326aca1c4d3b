"""``gavel compare A/results.json B/results.json``: does A beat B on the same samples?"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import click

from gavel.cli.options import bootstrap_type, seed_type
from gavel.report.compare import compare_runs
from gavel.report.tables import render
from gavel.tables import Table


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
    type=click.Choice(["table", "markdown", "csv", "latex", "json"]),
    default="table",
    show_default=True,
)
def compare(first: Path, second: Path, resamples: int, seed: int, style: str) -> None:
    """Paired bootstrap (every metric) and McNemar's exact test (right/wrong metrics).

    Needs the per-sample scores that `gavel score --out` writes beside each results.json.
    A − B > 0 favours the first run; p-values are two-sided.
    """
    benchmark, comparisons, warnings = compare_runs(first, second, resamples=resamples, seed=seed)
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
    if style == "json":
        click.echo(
            json.dumps(
                {"benchmark": benchmark, "comparisons": [asdict(c) for c in comparisons]}, indent=2
            )
        )
        return
    rows = []
    for c in comparisons:
        discordant = f"{c.discordant[0]}/{c.discordant[1]}" if c.discordant else "–"
        mcnemar = f"{c.p_mcnemar:.3g}" if c.p_mcnemar is not None else "–"
        rows.append([
            c.metric, f"{c.a:.1f}", f"{c.b:.1f}", f"{c.difference:+.1f}",
            f"[{c.interval[0]:+.1f}, {c.interval[1]:+.1f}]",
            f"{c.p_bootstrap:.3g}" if c.p_bootstrap > 0 else f"<{1 / resamples:.1g}",
            discordant, mcnemar, str(c.n),
        ])  # fmt: skip
    table = Table(
        f"{benchmark}: {first} (A) vs {second} (B)",
        [
            "Metric",
            "A",
            "B",
            "A−B",
            "95% CI",
            "p (bootstrap)",
            "A only / B only",
            "p (McNemar)",
            "n",
        ],
        rows,
        [f"paired percentile bootstrap, {resamples} resamples, seed {seed}; McNemar exact"],
    )
    click.echo(render(table, style), nl=False)
