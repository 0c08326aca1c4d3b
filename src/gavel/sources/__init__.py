"""Where benchmark data comes from: local files, Parquet files, or the Hugging Face Hub.

:func:`resolve_data` stands in front of the benchmark loaders: a local file or folder passes
through untouched; Parquet data and ``hf:OWNER/NAME[@REVISION][:SPLIT]`` are written once
into a cache folder in the layout the loader already reads (docs/data-format.md). Importing
this package costs nothing: pyarrow and huggingface_hub are imported only for such data.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from gavel.io.urls import FOLDER_INSTEAD, refuse_url
from gavel.sources.spec import parse


class ResolvedData(NamedTuple):
    """What the loaders are given, and where it came from (None for local benchmark files)."""

    path: Path
    image_root: Path | None
    source: dict[str, Any] | None


def resolve_data(benchmark: str, data: str | Path, image_root: Path | None = None) -> ResolvedData:
    """The local data path (and image root) a benchmark loader reads for a ``--data`` value.
    A URL as either is refused (:mod:`gavel.io.urls`)."""
    refuse_url(image_root, "--image-root", FOLDER_INSTEAD)
    spec = parse(data)
    if spec is None:
        return ResolvedData(Path(data), image_root, None)
    from gavel.sources.materialize import materialize

    return ResolvedData(*materialize(benchmark, spec, image_root))
