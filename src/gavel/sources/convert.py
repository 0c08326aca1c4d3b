"""``gavel data convert``: GAVEL JSONL + image folder <-> a Parquet dataset ready to push.

The Parquet side is what the Hub stores and its viewer shows: ``data/<split>-00000-of-00001.parquet``
with each image's bytes embedded as the ``Image`` feature (a struct of ``bytes`` and ``path``;
``path`` keeps the image's path from the JSONL), the features written both into the file's
schema metadata (where the ``datasets`` library reads them) and into the dataset card
(README.md), which also declares the split. Converting back writes the same records (fields
gavel does not know travel in an ``extra`` JSON column) and byte-identical images, so the two
forms are interchangeable.

Both directions stream: rows are written in row groups of :data:`ROWS_PER_GROUP`, so neither
side is ever held whole in memory. Output appears only when complete (staged, then renamed),
and nothing existing is overwritten.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gavel.benchmarks.gavel.data import GavelLoader
from gavel.benchmarks.gavel.layout import EXTRA, GAVEL_FIELDS
from gavel.errors import ConfigError, DataError, GavelError
from gavel.io.jsonl import parse_json
from gavel.io.reading import read_regular
from gavel.io.safe_paths import UnsafePath, safe_component
from gavel.sources.extras import need

#: Rows per Parquet row group: the Hub's viewer pages by row group, and a reader holds one.
ROWS_PER_GROUP = 64

#: The features as the ``datasets`` library serializes them (``Features.to_dict``).
_VALUE = {"string": {"dtype": "string", "_type": "Value"}}
FEATURES: dict[str, Any] = {
    "id": _VALUE["string"],
    "image": {"_type": "Image"},
    "caption": _VALUE["string"],
    "hallucinated": {"dtype": "bool", "_type": "Value"},
    "category": _VALUE["string"],
    "explanation": _VALUE["string"],
    "boxes": {
        "feature": {"feature": {"dtype": "float64", "_type": "Value"}, "_type": "List"},
        "_type": "List",
    },
    "width": {"dtype": "int64", "_type": "Value"},
    "height": {"dtype": "int64", "_type": "Value"},
    "source": _VALUE["string"],
    "split": _VALUE["string"],
}
#: The same features as the dataset card's YAML writes them.
CARD_FEATURES: list[dict[str, Any]] = [
    {"name": "id", "dtype": "string"},
    {"name": "image", "dtype": "image"},
    {"name": "caption", "dtype": "string"},
    {"name": "hallucinated", "dtype": "bool"},
    {"name": "category", "dtype": "string"},
    {"name": "explanation", "dtype": "string"},
    {"name": "boxes", "list": {"list": "float64"}},
    {"name": "width", "dtype": "int64"},
    {"name": "height", "dtype": "int64"},
    {"name": "source", "dtype": "string"},
    {"name": "split", "dtype": "string"},
]


def gavel_schema(with_extra: bool):
    pa = need("pyarrow")

    types = {
        "id": pa.string(),
        "image": pa.struct([("bytes", pa.binary()), ("path", pa.string())]),
        "caption": pa.string(),
        "hallucinated": pa.bool_(),
        "category": pa.string(),
        "explanation": pa.string(),
        "boxes": pa.list_(pa.list_(pa.float64())),
        "width": pa.int64(),
        "height": pa.int64(),
        "source": pa.string(),
        "split": pa.string(),
    }
    features = dict(FEATURES)
    if with_extra:
        types[EXTRA] = pa.string()
        features[EXTRA] = _VALUE["string"]
    metadata = {"huggingface": json.dumps({"info": {"features": features}})}
    return pa.schema(list(types.items()), metadata=metadata)


def _refuse_existing(path: Path) -> None:
    if path.exists():
        raise GavelError(f"{path}: already exists; remove it or choose another output")


def _extra_keys(source: Path, loader: GavelLoader) -> bool:
    """Validate every line (the loader's own checks) and say whether any has unknown fields."""
    extra = False
    for number, line in loader.lines():
        loader.parse(number, line)
        extra = extra or bool(set(parse_json(line, source, number)) - set(GAVEL_FIELDS))
    if loader.report.samples == 0:
        raise DataError(source, None, None, "no samples in file")
    return extra


def jsonl_to_parquet(
    source: Path, out: Path, image_root: Path | None = None, split: str = "test"
) -> int:
    """Write ``out/`` (``data/*.parquet`` + README.md) from a GAVEL file; returns the rows."""
    pa = need("pyarrow")
    pq = need("pyarrow.parquet")
    try:
        split = safe_component(split, "--split")
    except UnsafePath as error:
        raise ConfigError(str(error)) from None
    _refuse_existing(out)
    with_extra = _extra_keys(source, GavelLoader(source, image_root))
    schema = gavel_schema(with_extra)
    loader = GavelLoader(source, image_root)
    root = loader.image_root
    staging = out.parent / f".{out.name}.{uuid.uuid4().hex[:12]}.tmp"
    shard = staging / "data" / f"{split}-00000-of-00001.parquet"
    shard.parent.mkdir(parents=True)
    rows = arrow_bytes = 0
    try:
        with pq.ParquetWriter(shard, schema) as writer:
            batch: list[dict[str, Any]] = []

            def write(batch: list[dict[str, Any]]) -> int:
                table = pa.Table.from_pylist(batch, schema=schema)
                writer.write_table(table)
                return table.nbytes

            for number, line in loader.lines():
                sample = loader.parse(number, line)
                raw = parse_json(line, source, number)
                image = root / sample.image
                try:
                    data = read_regular(image)  # a FIFO or a device is refused, not read
                except DataError as error:
                    raise DataError(source, number, "image", f"{image} {error.message}") from None
                except OSError as error:
                    raise DataError(
                        source, number, "image", f"cannot read {image} ({error.strerror})"
                    ) from None
                record = {name: raw.get(name) for name in GAVEL_FIELDS}
                record["image"] = {"bytes": data, "path": sample.image}
                if with_extra:
                    unknown = {k: v for k, v in raw.items() if k not in GAVEL_FIELDS}
                    record[EXTRA] = json.dumps(unknown, ensure_ascii=False) if unknown else None
                batch.append(record)
                rows += 1
                if len(batch) == ROWS_PER_GROUP:
                    arrow_bytes += write(batch)
                    batch = []
            if batch:
                arrow_bytes += write(batch)
        size = SplitSize(rows, arrow_bytes, shard.stat().st_size)
        (staging / "README.md").write_text(dataset_card(out.name, split, size, with_extra))
        os.rename(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return rows


@dataclass(frozen=True)
class SplitSize:
    """A split's size as the dataset card gives it (``dataset_info``), in the ``datasets``
    library's terms: ``num_bytes`` is the split as Arrow data (embedded images included), the
    sum of ``nbytes`` of the tables written, as ``push_to_hub`` counts it and as ``datasets``
    counts it again when it prepares the split (a few bytes apart: validity bitmaps are padded
    per batch); ``download_size`` is its Parquet files on disk."""

    rows: int
    num_bytes: int
    download_size: int


def dataset_card(name: str, split: str, size: SplitSize, with_extra: bool) -> str:
    """README.md of the dataset: the Hub's YAML header (configs, features, split and its size)
    and a note. ``datasets`` ignores a card's splits that lack ``num_bytes`` as malformed."""
    yaml = need("yaml")

    features = CARD_FEATURES + ([{"name": EXTRA, "dtype": "string"}] if with_extra else [])
    header = {
        "configs": [
            {
                "config_name": "default",
                "data_files": [{"split": split, "path": f"data/{split}-*.parquet"}],
            }
        ],
        "dataset_info": {
            "features": features,
            "splits": [{"name": split, "num_bytes": size.num_bytes, "num_examples": size.rows}],
            "download_size": size.download_size,
            "dataset_size": size.num_bytes,
        },
        "tags": ["gavel", "hallucination-detection", "grounding"],
    }
    body = (
        f"# {name}\n\n"
        "GAVEL data: image-caption pairs, whether each caption contains an error, its "
        "category, an explanation and the boxes that ground it (`[x, y, w, h]` in pixels "
        "of the image). Images are embedded.\n\n"
        "Evaluate with gavel: `gavel run --data hf:OWNER/NAME --model ...`, or convert back to "
        "JSON Lines and an image folder with `gavel data convert hf:OWNER/NAME data.jsonl`.\n"
    )
    return f"---\n{yaml.safe_dump(header, sort_keys=False)}---\n\n{body}"


def parquet_to_jsonl(data: str | Path, out: Path) -> int:
    """Write ``out`` (GAVEL JSONL) and its images beside it from Parquet or ``hf:`` data."""
    from gavel.benchmarks.gavel.layout import GavelLayout
    from gavel.sources.card import Selection, select
    from gavel.sources.rows import rows as read_rows
    from gavel.sources.spec import HubSpec, ParquetSpec, parse

    spec = parse(data)
    if spec is None:
        raise GavelError(f"{data}: not Parquet data (a .parquet file, a dataset folder or hf:)")
    if isinstance(spec, HubSpec):
        from gavel.sources.hub import fetch

        snapshot = fetch(spec)
        root, bound = snapshot.folder, snapshot.store
        selection = select(root, spec.split, bound)
    else:
        assert isinstance(spec, ParquetSpec)
        is_file = spec.path.is_file()
        root = bound = spec.path.parent if is_file else spec.path
        selection = Selection([spec.path], None, None) if is_file else select(root, spec.split)
    _refuse_existing(out)
    staging = out.parent / f".{out.name}.{uuid.uuid4().hex[:12]}.tmp"
    layout = GavelLayout(staging, root, bound, data_name=out.name)
    count = 0
    try:
        for path in selection.files:
            for row in read_rows(path):
                layout.add(row)
                count += 1
        layout.finish()
        entries = sorted(staging.iterdir())
        for entry in entries:
            _refuse_existing(out.parent / entry.name)
        for entry in entries:
            os.rename(entry, out.parent / entry.name)
    except BaseException:
        layout.abort()
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return count
