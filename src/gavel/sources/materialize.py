"""A Hub or Parquet dataset written once into a cache folder in the loaders' own layout.

Each benchmark says how its rows become its files (its record's ``layout``,
:class:`gavel.benchmarks.layout.Layout`): a plugin's as a built-in's, no name is special here.

The folder is keyed by what fixes the content: the repository's commit (for ``hf:``) or the
SHA-256 of the data files (for local Parquet), plus the config, split and benchmark. It is
built under a temporary name and renamed into place only when complete, with its provenance
(``source.json``) written last inside it, so a crash or a second process racing the first
never leaves a half-written folder that a later run would read. Rows stream through (see
:mod:`gavel.sources.rows`), so memory does not grow with the dataset.

Cache: ``$GAVEL_CACHE_DIR/data`` (default ``~/.cache/gavel/data``); deleting it is always safe.
The config and split names of a card become one folder name each through
:func:`gavel.io.safe_paths.safe_component`, so a card cannot place the copy outside the cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any

from gavel.benchmarks.layout import Layout
from gavel.benchmarks.layout.row import Row
from gavel.errors import ConfigError, DataError
from gavel.io.run_files import file_sha256
from gavel.io.safe_paths import UnsafePath, path_inside, safe_component
from gavel.sources.card import Selection, select
from gavel.sources.rows import rows
from gavel.sources.spec import HubSpec, ParquetSpec

#: Bumped whenever the written layout changes, so old cache folders are not reused.
LAYOUT_VERSION = 2
MARKER = "source.json"


def cache_root() -> Path:
    root = os.environ.get("GAVEL_CACHE_DIR") or Path.home() / ".cache" / "gavel"
    return Path(root) / "data"


def files_sha256(files: list[Path], root: Path) -> tuple[str, dict[str, str]]:
    """One hash of the data: SHA-256 of the ``sha256sum``-style listing of the files read."""
    hashes = {_relative(path, root): file_sha256(path) for path in files}
    listing = "".join(f"{sha}  {name}\n" for name, sha in hashes.items())
    return hashlib.sha256(listing.encode()).hexdigest(), hashes


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.name


def _folder_name(root: Path, selection: Selection, benchmark: str, layout: Layout) -> str:
    """The cache folder's name for a selection: config and split as the card names them, the
    benchmark and the version of its layout."""
    try:
        config = safe_component(selection.config or "-", "config_name")
        split = safe_component(selection.split or "-", "split")
    except UnsafePath as error:
        raise DataError(root / "README.md", None, "configs", str(error)) from None
    name = f"{config}.{split}.{benchmark}.v{LAYOUT_VERSION}.{layout.version}"
    try:
        return safe_component(name, "layout version")
    except UnsafePath as error:  # the benchmark's own version text
        raise ConfigError(f"benchmark {benchmark!r}: {error}") from None


def _select_local(spec: ParquetSpec) -> tuple[Path, Selection]:
    path = spec.path
    if path.is_file():
        return path.parent, Selection([path], None, None)
    if not path.exists():
        raise DataError(path, None, None, "not found")
    return path, select(path, spec.split)


def materialize(
    benchmark: str, spec: HubSpec | ParquetSpec, image_root: Path | None
) -> tuple[Path, Path | None, dict[str, Any]]:
    """``(data path, image root, provenance)`` for the loaders, building the folder if needed."""
    from gavel.benchmarks.registry import get_benchmark

    layout = get_benchmark(benchmark).layout
    if layout is None:
        raise ConfigError(f"--data {spec}: benchmark {benchmark!r} cannot read Hub or Parquet data")
    if image_root is not None:
        raise ConfigError(
            "--image-root does not apply to Hub or Parquet data: the images come with the dataset"
        )
    if isinstance(spec, HubSpec):
        from gavel.sources.hub import fetch

        snapshot = fetch(spec)
        owner, name = spec.repo.split("/")
        try:
            key = Path("hf", f"{owner}--{name}", safe_component(snapshot.commit, "commit"))
        except UnsafePath as error:  # the Hub's answer, or the cache's refs/, named it
            raise ConfigError(f"--data {spec}: {error}") from None
        source: dict[str, Any] = {
            "source": "hf",
            "spec": str(spec),
            "repo": spec.repo,
            "revision": spec.revision or "main",
            "commit": snapshot.commit,
        }
        if layout.in_place is not None:
            native = _in_place(layout, snapshot.folder, spec.split)
            if native is not None:  # the loader's own layout: read in place, nothing copied
                folder, files = native
                return folder, None, source | _in_place_provenance(folder, files, snapshot.folder)
        root, bound = snapshot.folder, snapshot.store
        selection = select(root, spec.split, bound)
    else:
        root, selection = _select_local(spec)
        bound = root
        source = {"source": "parquet", "spec": str(spec.path)}
        key = None
    source |= {"config": selection.config, "split": selection.split}
    if key is None:  # local files: the content is the key
        digest, hashes = files_sha256(selection.files, root)
        key = Path("local", digest)
    folder = cache_root() / key / _folder_name(root, selection, benchmark, layout)
    done = _read_marker(folder)
    if done is None:
        if key.parts[0] == "hf":
            digest, hashes = files_sha256(selection.files, root)
        source |= {"data_sha256": digest, "files": hashes}
        done = _build(layout, root, selection, folder, source, bound)
    return Path(done["data"]), Path(done["image_root"]), done["provenance"]


def _in_place(layout: Layout, root: Path, part: str | None) -> tuple[Path, list[Path]] | None:
    """The repository's folder (``:SPLIT`` naming one of its folders) and the files to read
    there when it already is in the loader's own layout; None when it holds rows."""
    assert layout.in_place is not None
    try:
        folder = path_inside(root, part, "split") if part else root
    except UnsafePath as error:
        raise ConfigError(f"--data: {error}") from None
    files = layout.in_place(folder)
    return None if files is None else (folder, list(files))


def _in_place_provenance(folder: Path, files: list[Path], root: Path) -> dict[str, Any]:
    digest, hashes = files_sha256(files, root)
    return {"config": None, "split": _relative(folder, root) if folder != root else None,
            "data_sha256": digest, "files": hashes, "materialized": None}  # fmt: skip


def _check(layout: Layout, data: Path, image_root: Path, ends: list[tuple[int, Path]]) -> None:
    """Load what was written, as the command will, so a bad row fails now (and is never
    cached); when the data file has one line per row, an error naming its line names the row
    and file of the dataset rather than the copy."""
    try:
        layout.check(data, image_root)
    except DataError as error:
        if not layout.one_line_per_row or error.line is None or Path(error.path) != data:
            raise
        start = 0
        for end, path in ends:
            if error.line <= end:
                row = _nth_row(path, error.line - start)
                raise row.fail(error.field, error.message) from None
            start = end
        raise


def _nth_row(path: Path, n: int) -> Row:
    """Row ``n`` (1-based) of a data file, for naming it in an error (its line, for JSONL)."""
    for count, row in enumerate(rows(path), start=1):
        if count == n:
            return row
    raise AssertionError(f"{path} has fewer than {n} rows")


def _read_marker(folder: Path) -> dict[str, Any] | None:
    marker = folder / MARKER
    if not marker.is_file():
        return None
    try:
        done = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    done["data"] = str(folder / done["data"])
    done["image_root"] = str(folder / done["image_root"])
    done["provenance"]["materialized"] = str(folder)
    return done


def _build(
    layout: Layout,
    root: Path,
    selection: Selection,
    folder: Path,
    source: dict[str, Any],
    bound: Path | None = None,
) -> dict[str, Any]:
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = folder.parent / f".{folder.name}.{uuid.uuid4().hex[:12]}.tmp"
    writer = layout.writer(staging, root, bound)
    try:
        count = 0
        ends: list[tuple[int, Path]] = []  # the last row number of each file, in order
        for path in selection.files:
            for row in rows(path):
                writer.add(row)
                count += 1
            ends.append((count, path))
        if count == 0:
            raise DataError(selection.files[0], None, None, "no rows in the dataset")
        data, image_root = writer.finish()
        _check(layout, data, image_root, ends)
        source["rows"] = count
        marker = {
            "data": _relative(data, staging) if data != staging else ".",
            "image_root": _relative(image_root, staging) if image_root != staging else ".",
            "provenance": source,
        }
        (staging / MARKER).write_text(json.dumps(marker, indent=2), encoding="utf-8")
        try:
            os.rename(staging, folder)
        except OSError:
            if _read_marker(folder) is None:  # not another process's finished copy
                raise
            shutil.rmtree(staging, ignore_errors=True)  # another process finished first
    except BaseException:
        writer.abort()
        shutil.rmtree(staging, ignore_errors=True)
        raise
    done = _read_marker(folder)
    assert done is not None
    return done
