"""``gavel data validate|stats|split|convert``: check, describe, split and convert GAVEL data."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from gavel.api import data as api
from gavel.cli.options import LocalPath, data_path, folder_path, seed_type, split_name


@click.group()
def data() -> None:
    """Check, describe and split data files."""


@data.command()
@click.argument("file", type=data_path())
@click.option(
    "--image-root",
    type=folder_path(),
    default=None,
    help="Folder the image paths are relative to [default: the file's folder].",
)
@click.option(
    "--max-errors",
    type=click.IntRange(min=1),
    default=50,
    show_default=True,
    help="Stop after this many problems.",
)
def validate(file: Path, image_root: Path | None, max_errors: int) -> None:
    """Check every line of a GAVEL data file; list each problem with its line and field.

    Exits 1 when any problem is found.
    """
    report, errors = api.validate(file, image_root=image_root, max_errors=max_errors)
    for error in errors:
        click.echo(f"error: {error}", err=True)
    if errors:
        more = " (stopped early)" if len(errors) >= max_errors else ""
        click.echo(f"{file}: {len(errors)} problem(s){more}", err=True)
        sys.exit(1)
    clipped = (
        f", {report.clipped_boxes} box(es) clipped to the image" if report.clipped_boxes else ""
    )
    click.echo(f"{file}: OK, {report.samples} samples{clipped}")


@data.command()
@click.argument("file", type=data_path())
@click.option("--image-root", type=folder_path(), default=None)
@click.option(
    "--format", "style", type=click.Choice(["table", "json"]), default="table", show_default=True
)
def stats(file: Path, image_root: Path | None, style: str) -> None:
    """Counts per category, source and split; caption length; boxes per sample; box sizes."""
    summary = api.stats(file, image_root=image_root)
    if style == "json":
        click.echo(json.dumps(summary, indent=2))
        return
    click.echo(
        f"{summary['file']}: {summary['samples']} samples, {summary['images']} images, "
        f"{summary['hallucinated']} hallucinated"
    )
    for title, key in (
        ("category", "per_category"),
        ("source", "per_source"),
        ("split", "per_split"),
    ):
        click.echo(f"\nper {title}:")
        for name, count in summary[key].items():
            click.echo(f"  {name:<24} {count:>8}")
    words = summary["caption_words"]
    click.echo(
        f"\ncaption words: mean {words['mean']:.1f}, median {words['median']:.0f}, "
        f"min {words['min']:.0f}, max {words['max']:.0f}"
    )
    boxes = summary["boxes_per_hallucinated_sample"]
    if boxes["mean"] is not None:
        click.echo(
            f"boxes per hallucinated sample: mean {boxes['mean']:.2f}, "
            f"distribution {boxes['distribution']}"
        )
    click.echo("\ngold box area (pixels), per decade:")
    total = sum(summary["box_size_hist"].values()) or 1
    for label, count in summary["box_size_hist"].items():
        bar = "#" * round(40 * count / total)
        click.echo(f"  {label:<10} {count:>7}  {bar}")


@data.command()
@click.argument("file", type=LocalPath("give a local GAVEL file", exists=True, dir_okay=False))
@click.option(
    "--val",
    "val_size",
    default="0.1",
    show_default=True,
    help="Validation images: a fraction (0.1) or a count (200).",
)
@click.option(
    "--test",
    "test_size",
    default=None,
    help="Also hold out test images: a fraction or a count [default: no test file].",
)
@click.option(
    "--seed", type=seed_type(), default=0, show_default=True, help="Which images go where."
)
@click.option(
    "--out-dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Where STEM.train.jsonl, STEM.val.jsonl (and STEM.test.jsonl) go [default: next to "
    "FILE, where its image paths stay valid].",
)
@click.option(
    "--image-root",
    type=folder_path(),
    default=None,
    help="Folder the image paths are relative to [default: the file's folder].",
)
def split(
    file: Path,
    val_size: str,
    test_size: str | None,
    seed: int,
    out_dir: Path | None,
    image_root: Path | None,
) -> None:
    """Split a GAVEL file into train and validation (and test) files by image.

    All captions of an image go to the same split, so no image is in two splits. Sizes count
    images. Lines keep their order and fields, with `split` set; the same file and seed always
    give the same split.
    """
    parts = api.split(
        file, val=val_size, test=test_size, seed=seed, out_dir=out_dir, image_root=image_root
    )
    for part in parts:
        click.echo(f"{part.path}: {part.samples} samples over {part.images} images ({part.name})")
    root = image_root or file.parent
    if (out_dir or file.parent).resolve() != Path(root).resolve():
        click.echo(
            f"note: image paths are relative to {root}; pass --image-root {root} when using "
            "these files",
            err=True,
        )


@data.command()
@click.argument("source", metavar="IN", type=data_path(path_type=str))
@click.argument("out", metavar="OUT", type=LocalPath("give a local folder or .jsonl file to write"))
@click.option(
    "--split",
    "split_name",
    default="test",
    show_default=True,
    callback=lambda ctx, param, value: split_name(value),
    help="JSONL to Parquet: the split the rows form (data/SPLIT-00000-of-00001.parquet); "
    "letters, digits and _, dots between them.",
)
@click.option(
    "--image-root",
    type=folder_path(),
    default=None,
    help="JSONL to Parquet: folder the image paths are relative to [default: the file's folder].",
)
def convert(source: str, out: Path, split_name: str, image_root: Path | None) -> None:
    """Convert GAVEL data between JSONL + image folder and Parquet with embedded images.

    IN a .jsonl file: OUT is a new folder ready to push to the Hub (data/*.parquet and a
    README.md dataset card). IN Parquet (a .parquet file, such a folder, or
    hf:OWNER/NAME[@REVISION][:SPLIT]): OUT is a new .jsonl file, its images written beside it
    under the paths the rows name. Records and image bytes survive the round trip.
    """
    if not source.endswith(".jsonl"):
        if image_root is not None:
            raise click.UsageError("--image-root applies to a JSONL input only")
        if out.suffix != ".jsonl":
            raise click.UsageError(
                f"OUT {str(out)!r}: converting Parquet data writes a .jsonl file"
            )
    rows = api.convert(source, out, split=split_name, image_root=image_root)
    click.echo(f"{out}: {rows} samples")
