"""Provenance for every result: versions, hashes, settings, the command that ran."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import gavel
from gavel.records import Manifest

#: Libraries whose versions can change a number.
TRACKED_LIBRARIES = ("numpy", "scipy", "msgspec", "pillow")


def git_revision() -> str | None:
    """The commit of the gavel source tree, when running from a checkout."""
    source = Path(gavel.__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=source,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    revision = out.stdout.strip()
    if out.returncode != 0 or not revision:
        return None
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no", "."],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=5,
        check=False,
    ).stdout.strip()
    return revision + ("-dirty" if dirty else "")


def library_versions() -> dict[str, str]:
    versions = {"python": sys.version.split()[0]}
    for name in TRACKED_LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def build_manifest(benchmark: str, **fields: Any) -> Manifest:
    return Manifest(
        gavel_version=gavel.__version__,
        git_revision=git_revision(),
        created_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        command=list(sys.argv),
        benchmark=benchmark,
        libraries=library_versions(),
        **fields,
    )
