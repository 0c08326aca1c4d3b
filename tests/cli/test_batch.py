"""``gavel batch status|cancel``: what RUN may name, and what is said when nothing is there.

The commands against a live batch are exercised in tests/batch/test_runner.py."""

from __future__ import annotations


def test_batch_commands_name_what_is_missing(gavel, tmp_path):
    done = gavel("batch", "status", tmp_path / "p.jsonl")
    assert done.returncode == 2 and "no batches recorded for it" in done.stderr
    done = gavel("batch", "cancel", tmp_path)
    assert done.returncode == 2 and "no batches recorded here" in done.stderr
    (tmp_path / "p.batch").mkdir()
    (tmp_path / "p.batch" / "state.json").write_text("{")
    done = gavel("batch", "status", tmp_path / "p.jsonl")
    assert done.returncode == 2 and "not a gavel batch state file" in done.stderr
    assert "Traceback" not in done.stderr
