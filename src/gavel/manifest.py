"""Provenance for every result: versions, hashes, settings, the command that ran."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
import subprocess
import sys
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

import msgspec

from gavel.records import Manifest
from gavel.version import __version__

#: Libraries whose versions can change a number.
TRACKED_LIBRARIES = ("numpy", "scipy", "msgspec", "pillow")


def git_revision() -> str | None:
    """The commit of the gavel source tree, when running from a checkout."""
    source = Path(__file__).resolve().parent
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


#: ``scheme://user:secret@`` at the start of a URL: a key written into the URL's userinfo. Also
#: ``scheme:/user:secret@``, what a URL given where a path goes becomes as a ``Path`` (its
#: ``//`` made one slash) and is printed in "file not found" (a scheme of two letters at
#: least: ``C:/`` is a Windows drive).
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://|[a-z][a-z0-9+.-]+:/)[^/?#\s@]*@")


def redact_userinfo(value: Any) -> Any:
    """``value`` with the userinfo of every URL in it (``http://user:KEY@host``) replaced by
    ``***``, in strings, lists and dict values alike: a manifest is shared, a key must not be.

    Strings also become writable: a path that is not valid UTF-8 (its odd bytes carried as
    surrogates) keeps those bytes as visible ``\\xNN`` escapes.
    """
    if isinstance(value, str):
        value = value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        return _USERINFO.sub(r"\1***@", value)
    if isinstance(value, list | tuple):
        return [redact_userinfo(v) for v in value]
    if isinstance(value, dict):
        return {k: redact_userinfo(v) for k, v in value.items()}
    return value


def build_manifest(benchmark: str, **fields: Any) -> Manifest:
    return Manifest(
        gavel_version=__version__,
        git_revision=git_revision(),
        created_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        command=redact_userinfo(list(sys.argv)),
        benchmark=benchmark,
        libraries=library_versions(),
        **{name: redact_userinfo(value) for name, value in fields.items()},
    )


def run_manifest_path(predictions: str | Path) -> Path:
    """``pred.jsonl`` -> ``pred.manifest.json``: how ``gavel generate`` made the predictions."""
    path = Path(predictions)
    return path.with_name(path.stem + ".manifest.json")


def recorded(settings: Any) -> dict[str, Any]:
    """A settings dataclass as the manifest records it: every field but those marked
    ``metadata={"recorded": False}`` (what a caller hands along without it changing a number's
    definition, such as the echo filter of the prompts sent, which the prompts' hashes record)."""
    hidden = [f.name for f in dataclasses.fields(settings) if not f.metadata.get("recorded", True)]
    shown = dataclasses.replace(settings, **dict.fromkeys(hidden)) if hidden else settings
    return {k: v for k, v in dataclasses.asdict(shown).items() if k not in hidden}


def scoring_manifest(
    benchmark: str,
    *,
    data: str | Path,
    data_sha256: str,
    predictions: str | Path,
    predictions_sha256: str,
    models: Iterable[str | None],
    settings: Any,
    extra: dict[str, Any] | None = None,
) -> Manifest:
    """The manifest of a scored run. When the predictions come with the run manifest that
    ``gavel generate`` writes, the adapter and prompt hash are carried over from it, so a score
    names the exact prompt that produced the answers."""
    names = sorted({m for m in models if m})
    adapter: dict[str, Any] = {}
    prompt_sha256 = None
    generated = run_manifest_path(predictions)
    if generated.is_file():
        try:
            made = msgspec.json.decode(generated.read_bytes(), type=Manifest)
            adapter, prompt_sha256 = made.adapter, made.prompt_sha256
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            adapter = {"note": f"{generated.name} could not be read"}
    return build_manifest(
        benchmark,
        data_file=str(data),
        data_sha256=data_sha256,
        predictions_file=str(predictions),
        predictions_sha256=predictions_sha256,
        model=names[0] if len(names) == 1 else (", ".join(names) or None),
        adapter=adapter,
        prompt_sha256=prompt_sha256,
        seed=getattr(settings, "seed", None),
        settings=recorded(settings) | (extra or {}),
    )
