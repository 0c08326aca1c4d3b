"""The library runs without the command line: ``gavel.generate`` imports neither click nor
``gavel.cli`` (the arrows point from the shell to the library, not back)."""

from __future__ import annotations

import json
import subprocess
import sys

#: Generates with the Python API, then lists what it imported.
PROBE = """
import json, sys
import gavel
generation = gavel.generate("gavel", data=sys.argv[1], model="scene", out="p.jsonl",
                            no_progress=True)
print(json.dumps({"answered": generation.answered, "modules": sorted(sys.modules)}))
"""


def test_generating_from_python_imports_no_command_line(tmp_path, gavel_main, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert gavel_main("synth", "--n", "3", "--out", "synth").code == 0
    done = subprocess.run([sys.executable, "-c", PROBE, "synth/gavel.jsonl"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=True)  # fmt: skip
    seen = json.loads(done.stdout)
    assert seen["answered"] == 3
    assert not [m for m in seen["modules"] if m == "click" or m.startswith("gavel.cli")]
    assert "gavel.execution.plan" in seen["modules"]
