"""A Hugging Face cache with dataset repositories built in the test, laid out exactly as
huggingface_hub lays out what it downloads (``datasets--OWNER--NAME/refs/REF``,
``snapshots/COMMIT/…`` as symlinks into ``blobs/``), so ``hf:`` data resolves through the real
``snapshot_download`` with ``HF_HUB_OFFLINE=1`` and nothing is fetched."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest


class HubCache:
    def __init__(self, root: Path):
        self.root = root

    def add(self, repo: str, folder: Path, commit: str, refs: tuple[str, ...] = ("main",)) -> Path:
        """Put every file under ``folder`` into the cache as ``repo`` at ``commit``."""
        owner, name = repo.split("/")
        store = self.root / f"datasets--{owner}--{name}"
        snapshot = store / "snapshots" / commit
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            data = path.read_bytes()
            blob = store / "blobs" / hashlib.sha256(data).hexdigest()
            blob.parent.mkdir(parents=True, exist_ok=True)
            blob.write_bytes(data)
            link = snapshot / path.relative_to(folder)
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(os.path.relpath(blob, link.parent))
        for ref in refs:
            (store / "refs").mkdir(parents=True, exist_ok=True)
            (store / "refs" / ref).write_text(commit)
        return snapshot


@pytest.fixture
def hub_cache(tmp_path, monkeypatch) -> HubCache:
    """An empty Hugging Face cache, offline, and a fresh gavel data cache."""
    root = tmp_path / "hf-cache"
    root.mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(root))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("GAVEL_CACHE_DIR", str(tmp_path / "gavel-cache"))
    return HubCache(root)


def copy_tree(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target
