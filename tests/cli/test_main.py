"""The command line's entry point: every command listed, and nothing heavy imported to start.

Start-up time itself is measured by bench/startup.py; these tests check what makes it short
(which modules a command imports), so they do not depend on how busy the machine is.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gavel.cli.main import COMMANDS
from gavel.examples import example_dir

#: Libraries that take a noticeable fraction of a second to import (or start threads): only the
#: commands that use them may import them.
HEAVY = (
    "scipy",
    "matplotlib",
    "av",
    "onnxruntime",
    "openai",
    "torch",
    "ray",
    "transformers",
    "tokenizers",
    "accelerate",
    "peft",
    "safetensors",
    "huggingface_hub",
    "starlette",
    "uvicorn",
    "jinja2",
    "httpx",
    "PIL",
    "pandas",
    "pyarrow",
    "sklearn",
    "cv2",
)

#: Runs the command line in this process and writes the names of the imported modules to a file.
PROBE = """
import json, sys
out, sys.argv = sys.argv[1], ["gavel", *sys.argv[2:]]
try:
    from gavel.cli.main import main
    main()
finally:
    with open(out, "w") as handle:
        json.dump(sorted(sys.modules), handle)
"""


def imported_by(tmp_path: Path, *args: str) -> tuple[set[str], subprocess.CompletedProcess[str]]:
    """Top-level packages imported by ``gavel ARGS`` in a fresh interpreter."""
    listing = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(listing), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    modules = json.loads(listing.read_text())
    return {name.partition(".")[0] for name in modules}, done


@pytest.mark.parametrize(("args", "status"), [(("--help",), 0), (("--version",), 0), ((), 2)])
def test_starting_imports_no_command_and_no_heavy_library(tmp_path, args, status):
    packages, done = imported_by(tmp_path, *args)
    assert done.returncode == status, done.stderr
    assert "Commands:" in done.stdout + done.stderr or "version" in done.stdout
    assert not packages & {*HEAVY, "numpy"}
    command_modules = {entry.target.partition(":")[0] for entry in COMMANDS.values()}
    assert not command_modules & set(json.loads((tmp_path / "modules.json").read_text()))


def test_validating_a_file_imports_no_heavy_library(tmp_path):
    packages, done = imported_by(
        tmp_path, "data", "validate", str(example_dir("photos") / "gavel.jsonl")
    )
    assert done.returncode == 0, done.stderr
    assert "OK, 12 samples" in done.stdout
    assert not packages & set(HEAVY)


def test_scoring_imports_no_heavy_library(tmp_path):
    photos = example_dir("photos")
    packages, done = imported_by(
        tmp_path,
        "score",
        "--data",
        str(photos / "gavel.jsonl"),
        "--predictions",
        str(photos / "predictions" / "qwen2.5-vl.jsonl"),
        "--box-format",
        "resized-pixel",
    )
    assert done.returncode == 0, done.stderr
    assert "A@0.5" in done.stdout
    assert not packages & set(HEAVY)


#: Commands whose ``--help`` imports not even numpy.
HELP_WITHOUT_NUMPY = {"score", "generate", "run", "list"}


@pytest.mark.parametrize(
    "command", ["score", "generate", "run", "synth", "compare", "data", "list"]
)
def test_command_help_imports_no_heavy_library(tmp_path, command):
    packages, done = imported_by(tmp_path, command, "--help")
    assert done.returncode == 0, done.stderr
    assert not packages & set(HEAVY)
    if command in HELP_WITHOUT_NUMPY:
        assert "numpy" not in packages


def test_every_summary_is_the_commands_own():
    """The table's summaries, shortened for any width, read exactly as the commands' own."""
    for name, entry in COMMANDS.items():
        command = entry.load()
        assert command.name == name
        stand_in = entry.stand_in(name)
        for limit in range(20, 160, 3):
            assert stand_in.get_short_help_str(limit) == command.get_short_help_str(limit), name


#: ``gavel --help`` as the command line printed it when it imported every command up front: a
#: plain click group holding every real command.
EAGER_HELP = """
import click
from gavel.cli.main import COMMANDS, cli
commands = {name: entry.load() for name, entry in COMMANDS.items()}
group = click.Group(cli.name, commands, params=cli.params, help=cli.help,
                    context_settings=cli.context_settings)
group.main(["--help"], prog_name="gavel")
"""
LAZY_HELP = "from gavel.cli.main import cli; cli.main(['--help'], prog_name='gavel')"


@pytest.mark.parametrize("columns", [60, 100, 140])
def test_help_reads_as_with_every_command_imported(columns):
    """``gavel --help``, listing commands it has not imported, reads exactly as the help of a
    group holding every real command, whatever the terminal's width."""
    env = os.environ | {"COLUMNS": str(columns)}
    lazy, eager = (
        subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
        )
        for script in (LAZY_HELP, EAGER_HELP)
    )
    assert lazy.returncode == eager.returncode == 0, lazy.stderr + eager.stderr
    assert lazy.stdout == eager.stdout
    for name in COMMANDS:
        assert f"\n  {name} " in lazy.stdout


def test_a_command_runs_after_being_imported_on_demand(gavel):
    done = gavel("data", "--help")
    assert done.returncode == 0
    assert "validate" in done.stdout and "split" in done.stdout


def test_an_unknown_command_is_a_clear_error(gavel):
    done = gavel("scroe")
    assert done.returncode == 2
    assert "No such command 'scroe'" in done.stderr
    assert "Traceback" not in done.stderr


def test_listing_what_is_registered_imports_no_heavy_library(tmp_path):
    packages, done = imported_by(tmp_path, "list")
    assert done.returncode == 0, done.stderr
    assert "benchmarks:" in done.stdout
    assert not packages & {*HEAVY, "numpy"}
