"""GAVEL data files: check, describe, split and convert them (``gavel data``).

Each function takes what ``--data`` takes (a local file, Parquet data or ``hf:OWNER/NAME``
where the command does) and returns records, so a notebook checks or splits a file with the
same rules, messages and bytes as the command line.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gavel.benchmarks.gavel.data import LoadReport
    from gavel.benchmarks.gavel.split import SplitPart
    from gavel.errors import DataError

__all__ = ["convert", "split", "stats", "validate"]


def validate(
    data: str | Path, *, image_root: str | Path | None = None, max_errors: int = 50
) -> tuple[LoadReport, list[DataError]]:
    """Every problem of a GAVEL data file (up to ``max_errors``, each naming its line and
    field) instead of stopping at the first, and what loading it fixed on the way."""
    from gavel.benchmarks.gavel.data import validate_file
    from gavel.sources import resolve_data

    root = Path(image_root) if image_root is not None else None
    path, root, _ = resolve_data("gavel", data, root)
    return validate_file(path, root, max_errors=max_errors)


def stats(data: str | Path, *, image_root: str | Path | None = None) -> dict[str, Any]:
    """Counts per category, source and split; caption length; boxes per sample; box sizes
    (what ``gavel data stats --format json`` prints)."""
    from gavel.benchmarks.gavel.stats import data_stats
    from gavel.sources import resolve_data

    root = Path(image_root) if image_root is not None else None
    path, root, _ = resolve_data("gavel", data, root)
    return data_stats(path, root)


def split(
    file: str | Path,
    *,
    val: str | float = "0.1",
    test: str | float | None = None,
    seed: int = 0,
    out_dir: str | Path | None = None,
    image_root: str | Path | None = None,
) -> list[SplitPart]:
    """Split a GAVEL file into train and validation (and test) files by image, so no image is
    in two splits. A size is a fraction of the images (0.1) or a count (200), as a number or
    as the text ``--val`` takes; the same file and seed always give the same split."""
    from gavel.benchmarks.gavel.split import parse_size, split_file
    from gavel.io.urls import FOLDER_INSTEAD, refuse_url

    refuse_url(image_root, "--image-root", FOLDER_INSTEAD)

    def size(value: str | float) -> float | int:
        return parse_size(value) if isinstance(value, str) else parse_size(repr(value))

    sizes = {"val": size(val)}
    if test is not None:
        sizes["test"] = size(test)
    return split_file(file, sizes, seed=seed, out_dir=out_dir, image_root=image_root)


def convert(
    source: str | Path,
    out: str | Path,
    *,
    split: str = "test",
    image_root: str | Path | None = None,
) -> int:
    """Convert GAVEL data between JSONL + image folder and Parquet with embedded images;
    returns the samples written. A ``.jsonl`` source becomes the folder ``out`` (its rows the
    split ``split``); Parquet (a file, a folder, or ``hf:`` data) becomes the file ``out``."""
    from gavel.errors import ConfigError
    from gavel.io.urls import FOLDER_INSTEAD, refuse_url
    from gavel.sources.convert import jsonl_to_parquet, parquet_to_jsonl

    refuse_url(image_root, "--image-root", FOLDER_INSTEAD)
    out = Path(out)
    root = Path(image_root) if image_root is not None else None
    if str(source).endswith(".jsonl"):
        return jsonl_to_parquet(Path(source), out, root, split)
    if root is not None:
        raise ConfigError("an image root applies to a JSONL input only")
    if out.suffix != ".jsonl":
        raise ConfigError(f"{str(out)!r}: converting Parquet data writes a .jsonl file")
    return parquet_to_jsonl(source, out)
