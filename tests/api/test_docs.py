"""docs/python-api.md runs as written: its code blocks, in order, in one namespace, as a
notebook's cells would."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).parents[2] / "docs" / "python-api.md"
BLOCK = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)


def code_blocks() -> list[str]:
    return BLOCK.findall(DOC.read_text(encoding="utf-8"))


def test_the_python_api_page_runs_as_a_notebook(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    blocks = code_blocks()
    assert len(blocks) >= 5
    namespace: dict = {}
    for number, block in enumerate(blocks, 1):
        exec(compile(block, f"{DOC.name} block {number}", "exec"), namespace)
    printed = capsys.readouterr().out
    # What the page says the blocks show.
    assert "Invalid value for '--concurrency': 0 is not in the range 1<=x<=1024." in printed
    assert "| Method |" in printed  # the markdown table
    assert "6 samples scored" in printed
    assert (tmp_path / "run" / "results.json").is_file()
    assert (tmp_path / "run" / "results.scores.jsonl").is_file()
    assert (tmp_path / "run-union" / "results.json").is_file()
    assert namespace["generation"].answered == 12


def test_the_readme_example_runs(tmp_path, monkeypatch, capsys):
    readme = (DOC.parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme.partition("## From Python")[2].partition("\n## ")[0]
    (block,) = BLOCK.findall(section)
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "README.md, From Python", "exec"), {})
    assert "| scene |" in capsys.readouterr().out
    assert (tmp_path / "run" / "results.json").is_file()
