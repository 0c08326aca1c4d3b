"""A scored run's files change together or not at all, and readers refuse a pair that does not
belong together (a failed write, or files of two runs put side by side)."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from gavel.examples import example_dir
from gavel.records import Result
from gavel.scoring.files import write_run

PHOTOS = example_dir("photos")


def score_args(out: Path, model: str = "gemini") -> list:
    return ["score", "--data", PHOTOS / "gavel.jsonl",
            "--predictions", PHOTOS / "predictions" / f"{model}.jsonl",
            "--out", out, "--bootstrap", "0"]  # fmt: skip


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_results_name_the_sha256_of_the_scores_they_were_made_from(tmp_path, gavel_main):
    out = tmp_path / "run" / "results.json"
    code, text = gavel_main(*score_args(out))
    assert code == 0, text
    files = json.loads(out.read_text())["files"]
    scores = (tmp_path / "run" / "results.scores.jsonl").read_bytes()
    assert files == {"results.scores.jsonl": hashlib.sha256(scores).hexdigest()}
    assert sorted(p.name for p in out.parent.iterdir()) == ["results.json", "results.scores.jsonl"]


def test_a_write_stopped_by_the_file_size_limit_changes_nothing(tmp_path, gavel_main):
    """A real RLIMIT_FSIZE in a child process: results.json is the bigger file, so with the old
    order (summary first) the new results.json would sit beside the old scores."""
    out = tmp_path / "run" / "results.json"
    assert gavel_main(*score_args(out, "gemini")).code == 0
    before = snapshot(out.parent)
    limit = len(before["results.scores.jsonl"]) + 100  # the scores fit, results.json does not
    assert len(before["results.json"]) > limit
    script = (
        "import resource, sys\n"
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))\n"
        "from gavel.cli.main import main\n"
        "main(sys.argv[1:])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, *map(str, score_args(out, "qwen3-vl"))],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"error: {out}: the file-size limit was reached" in done.stderr
    assert snapshot(out.parent) == before  # the old pair, whole, and no temporary file


def test_an_unencodable_string_changes_nothing(tmp_path, gavel_main):
    out = tmp_path / "run" / "results.json"
    assert gavel_main(*score_args(out)).code == 0
    before = snapshot(out.parent)
    result = msgspec.json.decode(out.read_bytes(), type=Result)
    from gavel.records import GavelScore

    bad = GavelScore(id="s", outcome="ok", column="Obj", verdict_true=True, detail="\udfff")
    with pytest.raises(UnicodeEncodeError):
        write_run(out, result, [bad])
    assert snapshot(out.parent) == before


def test_readers_refuse_results_beside_scores_of_another_run(tmp_path, gavel_main):
    a, b = tmp_path / "a" / "results.json", tmp_path / "b" / "results.json"
    assert gavel_main(*score_args(a, "gemini")).code == 0
    assert gavel_main(*score_args(b, "qwen3-vl")).code == 0
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    shutil.copy(a, mixed / "results.json")
    shutil.copy(b.with_name("results.scores.jsonl"), mixed / "results.scores.jsonl")
    for args in (
        ["compare", mixed / "results.json", b, "--bootstrap", "100"],
        ["report", mixed, "--out", tmp_path / "page"],
    ):
        code, text = gavel_main(*args)
        assert code == 2, text
        assert "results.scores.jsonl: does not match results.json (SHA-256 differs" in text
        assert "Traceback" not in text
    (mixed / "results.scores.jsonl").unlink()
    code, text = gavel_main("compare", mixed / "results.json", b, "--bootstrap", "100")
    assert code == 2 and "per-sample scores not found" in text
    # a run written before results named their files is read as it is
    legacy = json.loads(a.read_text())
    del legacy["files"]
    shutil.copy(b.with_name("results.scores.jsonl"), mixed / "results.scores.jsonl")
    (mixed / "results.json").write_text(json.dumps(legacy))
    assert gavel_main("compare", mixed / "results.json", b, "--bootstrap", "100").code == 0
