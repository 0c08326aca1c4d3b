"""Writing the finished annotations as a GAVEL data file (docs/data-format.md).

Only items that passed review are exported (``reviewed`` and ``checked``), with their latest
version; pairs the annotators marked unusable are left out. The file is written to a temporary
name, checked with gavel's own loader (the one ``gavel data validate`` uses), and only then
renamed into place, so an export that would not load is never left behind.

Splits are by image: every sentence of one image lands in the same split, so no test image was
seen in training. Images are ordered by a seeded hash of their path and the first
``round(test_fraction * images)`` form the test split; the assignment of an image does not
depend on which other images are in the project, so adding images moves few old ones.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path

import msgspec

from gavel.annotate import payload as annotations
from gavel.annotate.db import images_root
from gavel.benchmarks.gavel_data import validate_file
from gavel.errors import DataError
from gavel.io.files import plain_mode

CLEAN_EXPLANATION = "The caption matches the image."


@dataclass
class ExportSummary:
    samples: int
    hallucinated: int
    unusable: int
    pending: int
    splits: dict[str, int]
    image_prefix: str
    images_root: Path
    files: list[Path]


def split_images(images: list[str], test_fraction: float, seed: int) -> dict[str, str]:
    """``{image: "train" | "test"}`` with ``round(test_fraction * len(images))`` test images."""
    ordered = sorted(
        set(images), key=lambda image: hashlib.sha256(f"{seed}:{image}".encode()).digest()
    )
    n_test = round(test_fraction * len(ordered))
    return {image: ("test" if i < n_test else "train") for i, image in enumerate(ordered)}


def export(
    conn: sqlite3.Connection,
    db_path: str | Path,
    out: str | Path,
    *,
    split_by_image: bool = False,
    test_fraction: float = 0.2,
    seed: int = 0,
) -> ExportSummary:
    out = Path(out)
    root = images_root(conn, db_path)
    prefix = _image_prefix(root, out.resolve().parent)
    rows = conn.execute(
        "SELECT i.key, i.image, i.caption, i.width, i.height, i.source, v.payload "
        "FROM items i JOIN versions v ON v.id = i.head "
        "WHERE i.stage IN ('reviewed', 'checked') ORDER BY i.id"
    ).fetchall()
    pending = conn.execute(
        "SELECT count(*) FROM items WHERE stage NOT IN ('reviewed', 'checked')"
    ).fetchone()[0]
    records, unusable = [], 0
    for row in rows:
        annotation = annotations.decode(row["payload"])
        if annotation.verdict == annotations.UNUSABLE:
            unusable += 1
            continue
        records.append(_record(row, annotation, prefix))
    splits: dict[str, int] = {}
    if split_by_image:
        assignment = split_images([r["image"] for r in records], test_fraction, seed)
        for record in records:
            record["split"] = assignment[record["image"]]
            splits[record["split"]] = splits.get(record["split"], 0) + 1
    files = [out]
    _write_checked(out, records, out.parent)
    if split_by_image:
        for split in ("train", "test"):
            path = out.with_name(f"{out.stem}.{split}{out.suffix}")
            _write_checked(path, [r for r in records if r["split"] == split], out.parent)
            files.append(path)
    return ExportSummary(
        samples=len(records),
        hallucinated=sum(r["hallucinated"] for r in records),
        unusable=unusable,
        pending=pending,
        splits=splits,
        image_prefix=prefix,
        images_root=root,
        files=files,
    )


def _image_prefix(root: Path, out_dir: Path) -> str:
    """How image paths must start to be relative to the export file's folder; "" when the
    images are not inside that folder (then give ``--image-root`` to gavel commands)."""
    relative = os.path.relpath(root, out_dir)
    if relative == ".":
        return ""
    if relative.startswith(".."):
        return ""
    return Path(relative).as_posix() + "/"


def _record(row: sqlite3.Row, annotation: annotations.Annotation, prefix: str) -> dict:
    hallucinated = annotation.verdict == annotations.HALLUCINATED
    record = {
        "id": row["key"],
        "image": prefix + row["image"],
        "caption": row["caption"],
        "hallucinated": hallucinated,
        "category": annotation.category if hallucinated else None,
        "explanation": annotation.explanation or ("" if hallucinated else CLEAN_EXPLANATION),
        "boxes": annotation.boxes if hallucinated else [],
        "width": row["width"],
        "height": row["height"],
    }
    if row["source"]:
        record["source"] = row["source"]
    return record


def _write_checked(path: Path, records: list[dict], image_root: Path) -> None:
    """Write a temporary file beside ``path``, have the loader accept it, then rename it over
    ``path``: the target is either the old file or a complete, valid new one."""
    encoder = msgspec.json.Encoder()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    temp = Path(name)
    try:
        plain_mode(fd)
        with os.fdopen(fd, "wb") as handle:
            for record in records:
                handle.write(encoder.encode(record) + b"\n")
            handle.flush()
            os.fsync(handle.fileno())
        if records:
            _, errors = validate_file(temp, image_root)
            if errors:
                first = errors[0]
                raise DataError(
                    path, first.line, first.field, f"export failed validation: {first.message}"
                )
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)
