"""``gavel.api.synthesis``: the checked entry point and the one the command line calls agree."""

from __future__ import annotations

import gavel
from gavel.api.synthesis import SynthSettings, difficulties, synthesize_with


def test_synthesize_with_writes_what_synthesize_writes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert difficulties()[0] == "easy" and "medium" in difficulties()
    made = gavel.synthesize("gavel", out="api", n=3, seed=2)
    written = synthesize_with(SynthSettings("checked", "gavel", 3, seed=2, difficulty="medium"))
    assert written.name == made.name and written.read_bytes() == made.read_bytes()
