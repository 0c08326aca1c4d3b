"""Which files of a dataset folder make up the split asked for.

The Hub's own conventions, in its order of precedence: the ``configs`` of the dataset card
(README.md's YAML header: ``config_name``, ``default``, ``data_files`` per split, globs
allowed), else the file names (``data/<split>-00000-of-00001.parquet``, ``<split>.jsonl``).
``:SPLIT`` in a data spec names a config (all its splits) or a split of the default config;
without it the default config's only split, or its ``test`` split, is read.

A card is written by whoever published the dataset: a ``data_files`` path that is absolute or
climbs out with ``..`` is refused, and so is a data file that is a symbolic link leading out of
the dataset (``bound``: the folder every file read must really be in).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gavel.errors import DataError
from gavel.io.safe_paths import UnsafePath, read_inside, safe_relative
from gavel.sources.extras import need

DATA_SUFFIXES = (".parquet", ".jsonl")
_SHARD = re.compile(r"^(?P<split>.+?)(?:[-_]\d{5}-of-\d{5})?$")


@dataclass(frozen=True)
class Selection:
    """The files of one split (or config), in reading order."""

    files: list[Path]
    config: str | None
    split: str | None


def read_card(root: Path) -> dict[str, Any]:
    """The YAML header of ``root/README.md`` (empty when there is none)."""
    card = root / "README.md"
    if not card.is_file():
        return {}
    repocard = need("huggingface_hub.repocard")
    try:
        return repocard.metadata_load(card) or {}
    except Exception as error:  # YAML errors of several kinds
        raise DataError(
            card, None, None, f"cannot read the dataset card's YAML ({error})"
        ) from None


def _config_splits(root: Path, config: dict[str, Any]) -> dict[str, list[str]]:
    files = config.get("data_files") or []
    if isinstance(files, str):
        return {"train": [files]}
    if not isinstance(files, list):
        raise _card_error(root, f"data_files is {type(files).__name__} (expected a list)")
    splits: dict[str, list[str]] = {}
    for entry in files:
        if isinstance(entry, str):
            splits.setdefault("train", []).append(entry)
        elif isinstance(entry, dict):
            paths = entry.get("path")
            paths = [paths] if isinstance(paths, str) else paths or []
            if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
                raise _card_error(root, "a data_files path is not text (or a list of text)")
            splits.setdefault(str(entry.get("split", "train")), []).extend(paths)
    return splits


def _card_error(root: Path, message: str) -> DataError:
    return DataError(root / "README.md", None, "configs", message)


def _glob(root: Path, patterns: list[str]) -> list[Path]:
    found: list[Path] = []
    for written in patterns:
        try:
            pattern = safe_relative(written, "data_files path", "the dataset")
        except UnsafePath as error:
            raise _card_error(root, str(error)) from None
        try:
            matches = (
                sorted(root.glob(pattern)) if any(c in pattern for c in "*?[") else [root / pattern]
            )
        except (NotImplementedError, ValueError):  # a pattern glob cannot take
            raise _card_error(root, f"{written!r} is not a pattern inside the dataset") from None
        found.extend(p for p in matches if p.is_file())
    return found


def _named_splits(root: Path) -> dict[str, list[Path]]:
    """Splits from file names when the card declares none."""
    base = root / "data" if (root / "data").is_dir() else root
    splits: dict[str, list[Path]] = {}
    for path in sorted(base.rglob("*")):
        if path.suffix in DATA_SUFFIXES and path.is_file():
            match = _SHARD.match(path.stem)
            splits.setdefault(match["split"] if match else path.stem, []).append(path)
    return splits


def _one_split(splits: dict[str, Any], where: Path, config: str | None) -> str:
    if len(splits) == 1:
        return next(iter(splits))
    if "test" in splits:
        return "test"
    of = f" of config {config!r}" if config else ""
    raise DataError(
        where,
        None,
        None,
        f"several splits{of} ({', '.join(splits)}); name one as hf:OWNER/NAME:SPLIT "
        "(or PATH with --data pointing at one file)",
    )


def _configs(root: Path) -> list[dict[str, Any]]:
    configs = read_card(root).get("configs") or []
    if not isinstance(configs, list):
        raise _card_error(root, f"is {type(configs).__name__} (expected a list of configs)")
    return [c for c in configs if isinstance(c, dict)]


def select(root: Path, wanted: str | None, bound: Path | None = None) -> Selection:
    """The data files of split or config ``wanted`` (None: the default) under ``root``, each
    really inside ``bound`` (default: ``root``)."""
    bound = bound or root
    configs = _configs(root)
    if configs:
        by_name = {str(c.get("config_name", "default")): c for c in configs}
        default = next(
            (n for n, c in by_name.items() if c.get("default")),
            "default" if "default" in by_name else next(iter(by_name)),
        )
        if wanted in by_name and wanted != default:
            splits = _config_splits(root, by_name[wanted])
            files = _glob(root, [p for paths in splits.values() for p in paths])
            return _checked(root, bound, Selection(files, wanted, None))
        splits = _config_splits(root, by_name[default])
        if wanted is None or wanted == default:
            split = _one_split(splits, root / "README.md", default)
        elif wanted in splits:
            split = wanted
        else:
            raise DataError(
                root / "README.md",
                None,
                "configs",
                f"no config or split {wanted!r}; configs: {', '.join(by_name)}; splits of "
                f"{default!r}: {', '.join(splits)}",
            )
        return _checked(root, bound, Selection(_glob(root, splits[split]), default, split))
    named = _named_splits(root)
    if not named:
        raise DataError(root, None, None, "no data files (*.parquet or *.jsonl) in the dataset")
    if wanted is None:
        wanted = _one_split(named, root, None)
    elif wanted not in named:
        raise DataError(root, None, None, f"no split {wanted!r}; splits: {', '.join(named)}")
    return _inside(bound, Selection(named[wanted], None, wanted))


def _checked(root: Path, bound: Path, selection: Selection) -> Selection:
    if not selection.files:
        name = selection.split or selection.config
        raise DataError(root / "README.md", None, "configs", f"{name!r} names no existing file")
    bad = [p for p in selection.files if p.suffix not in DATA_SUFFIXES]
    if bad:
        raise DataError(bad[0], None, None, "only Parquet and JSON Lines data files are read")
    return _inside(bound, selection)


def _inside(bound: Path, selection: Selection) -> Selection:
    """The selection, once every file is known to be really inside the dataset."""
    for path in selection.files:
        try:
            read_inside(path, bound, "data file")
        except UnsafePath as error:
            raise DataError(path, None, None, str(error)) from None
    return selection
