"""What a ``--data`` argument names: a local file or folder, Parquet files, or a Hub dataset.

``hf:OWNER/NAME[@REVISION][:SPLIT]`` names a dataset repository on the Hugging Face Hub; a
``.parquet`` file, or a folder holding Parquet files (``data/*.parquet``, as ``gavel data
convert`` writes and the Hub stores), is read through the same code; anything else is handed
to the benchmark's own loader unchanged. Parsing is pure string work, so the command line can
tell the kinds apart without importing pyarrow or huggingface_hub.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from gavel.errors import ConfigError
from gavel.io.safe_paths import UnsafePath, safe_component, safe_relative
from gavel.io.urls import DATA_INSTEAD, refuse_url

HUB_PREFIX = "hf:"

#: Repository names as the Hub allows them: letters, digits, ``-``, ``_`` and ``.``, no
#: leading or trailing separator, no ``..`` or ``--``.
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_HUB = re.compile(
    rf"(?P<repo>{_NAME}/{_NAME})(?:@(?P<revision>[^:@\s]+))?(?::(?P<split>[A-Za-z0-9._-]+))?"
)


@dataclass(frozen=True)
class HubSpec:
    """A dataset repository on the Hub, at a revision (branch, tag or commit), one split."""

    repo: str
    revision: str | None = None
    split: str | None = None

    def __str__(self) -> str:
        text = HUB_PREFIX + self.repo
        if self.revision:
            text += f"@{self.revision}"
        if self.split:
            text += f":{self.split}"
        return text


@dataclass(frozen=True)
class ParquetSpec:
    """Local Parquet data: one file, or a dataset folder (``data/*.parquet`` + a card)."""

    path: Path
    split: str | None = None


def _names_a_path(match: re.Match[str]) -> bool:
    """Whether revision and split stay names (both end up in paths: the cache's ``refs/``,
    a folder of the repository): a normal relative path, and one folder name."""
    revision, split = match["revision"], match["split"]
    try:
        if split:
            safe_component(split)
        return not revision or safe_relative(revision) == revision
    except UnsafePath:
        return False


def parse_hub(text: str) -> HubSpec:
    """``hf:OWNER/NAME[@REVISION][:SPLIT]`` as a :class:`HubSpec`; a usage error otherwise."""
    body = text[len(HUB_PREFIX) :]
    match = _HUB.fullmatch(body)
    if not match or ".." in match["repo"] or "--" in match["repo"] or not _names_a_path(match):
        raise ConfigError(
            f"--data {text!r}: expected hf:OWNER/NAME[@REVISION][:SPLIT], for example "
            "hf:zyxhhnkh/DetailVerifyBench@main:real_test"
        )
    return HubSpec(match["repo"], match["revision"], match["split"])


def is_parquet_folder(path: Path) -> bool:
    """A folder laid out as a Parquet dataset: ``*.parquet`` at its top or under ``data/``."""
    if not path.is_dir():
        return False
    return any(path.glob("*.parquet")) or any((path / "data").glob("**/*.parquet"))


def parse(data: str | Path) -> HubSpec | ParquetSpec | None:
    """The source ``data`` names, or None for a path the benchmark loaders read themselves.
    A URL is refused (gavel reads no data from the web but the Hub's), its password hidden."""
    text = str(data)
    if text.startswith(HUB_PREFIX):
        return parse_hub(text)
    refuse_url(text, "--data", DATA_INSTEAD)
    path = Path(data)
    if path.suffix == ".parquet" or is_parquet_folder(path):
        return ParquetSpec(path)
    return None
