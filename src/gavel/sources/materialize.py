"""A Hub or Parquet dataset written once into a cache folder in the loaders' own layout.

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
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from gavel.errors import ConfigError, DataError
from gavel.io.run_files import file_sha256
from gavel.io.safe_paths import UnsafePath, path_inside, safe_component
from gavel.sources.card import Selection, select
from gavel.sources.layouts import LAYOUTS
from gavel.sources.rows import Row, rows
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


def _folder_name(root: Path, selection: Selection, benchmark: str) -> str:
    """The cache folder's name for a selection: config and split as the card names them."""
    try:
        config = safe_component(selection.config or "-", "config_name")
        split = safe_component(selection.split or "-", "split")
    except UnsafePath as error:
        raise DataError(root / "README.md", None, "configs", str(error)) from None
    return f"{config}.{split}.{benchmark}.v{LAYOUT_VERSION}"


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
    if benchmark not in LAYOUTS:
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
        if benchmark == "videohallucer":
            native = _release_folder(snapshot.folder, spec.split)
            if native is not None:  # the release's own layout: read in place, nothing copied
                return native, None, source | _release_provenance(native, snapshot.folder)
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
    folder = cache_root() / key / _folder_name(root, selection, benchmark)
    done = _read_marker(folder)
    if done is None:
        if key.parts[0] == "hf":
            digest, hashes = files_sha256(selection.files, root)
        source |= {"data_sha256": digest, "files": hashes}
        done = _build(benchmark, root, selection, folder, source, bound)
    return Path(done["data"]), Path(done["image_root"]), done["provenance"]


def _release_folder(root: Path, part: str | None) -> Path | None:
    """The VideoHallucer release layout in a repository (``:SPLIT`` naming one category's
    folder), or None when the repository holds rows instead."""
    from gavel.benchmarks.videohallucer.data import annotation_files

    try:
        folder = path_inside(root, part, "split") if part else root
    except UnsafePath as error:
        raise ConfigError(f"--data: {error}") from None
    try:
        annotation_files(folder)
    except DataError:
        return None
    return folder


def _release_provenance(folder: Path, root: Path) -> dict[str, Any]:
    from gavel.benchmarks.videohallucer.data import annotation_files

    files = [path for _, path in annotation_files(folder)]
    digest, hashes = files_sha256(files, root)
    return {"config": None, "split": _relative(folder, root) if folder != root else None,
            "data_sha256": digest, "files": hashes, "materialized": None}  # fmt: skip


def _check(benchmark: str, data: Path, image_root: Path, ends: list[tuple[int, Path]]) -> None:
    """Load what was written, as the command will, so a bad row fails now (and is never
    cached) with an error naming the row and file of the dataset rather than the copy."""
    if benchmark == "videohallucer":
        from gavel.benchmarks.videohallucer.data import load_dataset

        load_dataset(data)  # names the category file and the pair ([index].side.field)
        return
    if benchmark == "gavel":
        from gavel.benchmarks.gavel.data import GavelLoader

        loader: Iterable[object] = GavelLoader(data, image_root)
    else:
        from gavel.benchmarks.detailverify.data import DetailVerifyLoader

        loader = DetailVerifyLoader(data)
    try:
        for _ in loader:
            pass
    except DataError as error:
        if error.line is None or Path(error.path) != data:
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
    benchmark: str,
    root: Path,
    selection: Selection,
    folder: Path,
    source: dict[str, Any],
    bound: Path | None = None,
) -> dict[str, Any]:
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = folder.parent / f".{folder.name}.{uuid.uuid4().hex[:12]}.tmp"
    layout = LAYOUTS[benchmark](staging, root, bound)
    try:
        count = 0
        ends: list[tuple[int, Path]] = []  # the last row number of each file, in order
        for path in selection.files:
            for row in rows(path):
                layout.add(row)
                count += 1
            ends.append((count, path))
        if count == 0:
            raise DataError(selection.files[0], None, None, "no rows in the dataset")
        data, image_root = layout.finish()
        _check(benchmark, data, image_root, ends)
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
        layout.abort()
        shutil.rmtree(staging, ignore_errors=True)
        raise
    done = _read_marker(folder)
    assert done is not None
    return done
