"""``gavel batch status|cancel``: what RUN may name, and what is said when nothing is there.

The commands against a live batch are exercised in tests/batch/test_runner.py."""

from __future__ import annotations

import pytest


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


def test_a_batch_state_gone_since_it_was_found_is_one_message(tmp_path):
    """A run that finishes and cleans up between the folder being found and its state being
    read leaves one message naming the folder, not an internal error."""
    from gavel.cli.batch import _recorded_state
    from gavel.errors import GavelError

    with pytest.raises(GavelError, match=r"no batches recorded here any more \(no state.json\)"):
        _recorded_state(tmp_path / "answers.jsonl.batch")
