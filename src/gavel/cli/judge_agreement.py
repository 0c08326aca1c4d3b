"""``gavel judge-agreement``: how far two judges (or a judge and people) agree, per category.

The numbers are :func:`gavel.api.judges.judge_agreement`'s (docs/judge-agreement.md explains
every rule); this command reads the flags, prints the warnings and the table, and writes the
files asked for.
"""

from __future__ import annotations

from pathlib import Path

import click

from gavel.api import judges
from gavel.api.judges import FORMATS


@click.command("judge-agreement")
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--judge",
    "judge_files",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Another judge's scores (repeatable); with two or more judges given this way, or "
    "three in all, their per-sample mean and majority are compared too.",
)
@click.option(
    "--label",
    "labels",
    multiple=True,
    help="Name of a judge, in order: FILES first, then --judge (repeatable). "
    "Default: the judge named in results.json, else the file name.",
)
@click.option(
    "--reference",
    "reference_path",
    type=click.Path(path_type=Path),
    help="Scores every judge (and the mean and majority) is compared with, e.g. people's.",
)
@click.option("--reference-label", help="Name of the reference (default: its file name).")
@click.option("--format", "style", type=click.Choice(FORMATS), default="table", show_default=True)
@click.option(
    "--out", type=click.Path(path_type=Path), help="Write every number as JSON to this file."
)
@click.option(
    "--plot",
    type=click.Path(path_type=Path),
    help="Write the 5x5 score confusion heatmap of every pair to this PNG file.",
)
def judge_agreement(
    files: tuple[Path, ...],
    judge_files: tuple[Path, ...],
    labels: tuple[str, ...],
    reference_path: Path | None,
    reference_label: str | None,
    style: str,
    out: Path | None,
    plot: Path | None,
) -> None:
    """Agreement between judges' per-sample scores: exact %, weighted kappa, Spearman.

    \b
    Each FILE (and --judge, --reference) is one rater's 1–5 scores: a results.json of
    `gavel score --judge` (its results.scores.jsonl is read), a .scores.jsonl, JSONL of
    {"id": ..., "score": 1-5, "column": ...}, or a JSON object of id -> score.
    Only samples in every file are compared; those without a score are left out pair by pair.
    """
    agreement = judges.judge_agreement(
        files,
        judges=judge_files,
        labels=labels,
        reference=reference_path,
        reference_label=reference_label,
    )
    for warning in agreement.warnings:
        click.echo(f"warning: {warning}", err=True)
    agreement.save(out, plot)
    click.echo(agreement.table(style), nl=False)
