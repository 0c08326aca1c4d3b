"""``gavel.api.synthesis``: the checked entry point and the one the command line calls agree."""

from __future__ import annotations

import gavel
from gavel.api.synthesis import difficulties, write_synthetic


def test_write_synthetic_writes_what_synthesize_writes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert difficulties()[0] == "easy" and "medium" in difficulties()
    made = gavel.synthesize("gavel", out="api", n=3, seed=2)
    written = write_synthetic("gavel", "checked", 3, seed=2, difficulty="medium", options={})
    assert written.name == made.name and written.read_bytes() == made.read_bytes()
