"""The import rule of docs/architecture.md: the contracts in pyproject.toml all hold.

The same check as ``lint-imports``, run in the suite so that an import that runs up a layer
(or a model adapter importing the runner, a reader importing a prompt) fails here at once. It
runs in a process of its own: the linter adds the working folder to ``sys.path``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

LINT = (
    "import sys; from importlinter.cli import lint_imports; "
    "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))"
)


def test_every_import_contract_is_kept():
    paths = [str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    done = subprocess.run(
        [sys.executable, "-c", LINT], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout
