"""``gavel report RUN... --out DIR``: one self-contained HTML page comparing runs."""

from __future__ import annotations

from pathlib import Path

import click

from gavel.api.reports import report as write_report
from gavel.cli.options import folder_path


@click.command()
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Folder for the page.")
@click.option("--title", default=None, help="Page title.")
@click.option(
    "--page-size",
    type=click.IntRange(min=1),
    default=100,
    show_default=True,
    help="Gallery cards per page.",
)
@click.option(
    "--image-root",
    type=folder_path(file_okay=False, exists=True),
    default=None,
    help="GAVEL: folder the images are read from [default: the data file's folder; an "
    "--image-root recorded by `gavel score` only when it lies inside that folder].",
)
def report(
    runs: tuple[Path, ...], out: Path, title: str | None, page_size: int, image_root: Path | None
) -> None:
    """Tables, plots and a filterable sample gallery for one or more runs (results.json files,
    run folders, or folders holding run folders; any of the three benchmarks). The page opens
    from disk with no network."""
    page = write_report(runs, out, title=title, page_size=page_size, image_root=image_root)
    click.echo(f"report written to {page}")
