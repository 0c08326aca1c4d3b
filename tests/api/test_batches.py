"""``gavel.api.batches``: the batches a run recorded, read from their state file.

Parts not created yet and parts already finished are told from the state file alone, with no
server asked; asking a live batch is exercised in tests/batch/test_runner.py."""

from __future__ import annotations

import pytest

from gavel.api.batches import BatchFolder, PartStatus, cancel, status
from gavel.batch.state import BatchState, Part, batch_folder, save_state
from gavel.errors import GavelError


def _recorded(tmp_path):
    output = tmp_path / "pred.jsonl"
    parts = [
        Part("r1-0", 1, 5, "0" * 64, batch_id="batch_a", status="completed", finished=True,
             merged=True, answered=4, failed=1),
        Part("r1-1", 1, 3, "1" * 64, file_id="file_b"),
        Part("r1-2", 1, 2, "2" * 64),
    ]  # fmt: skip
    state = BatchState("generate", "gpt-test", "https://api.openai.com/v1", "OPENAI_API_KEY",
                       output.name, parts=parts)  # fmt: skip
    save_state(batch_folder(output), state)
    return output


def test_status_reads_every_part_and_asks_no_server_for_finished_ones(tmp_path):
    output = _recorded(tmp_path)
    records = list(status(output))
    assert records[0] == BatchFolder(
        batch_folder(output), "generate", "gpt-test", "https://api.openai.com/v1"
    )
    parts = records[1:]
    assert all(isinstance(r, PartStatus) and r.live is None for r in parts)
    assert [(r.part.name, r.part.batch_id, r.part.file_id) for r in parts] == [
        ("r1-0", "batch_a", None), ("r1-1", None, "file_b"), ("r1-2", None, None),
    ]  # fmt: skip
    assert list(status(tmp_path)) == records  # the run folder names the same batches


def test_cancel_has_nothing_to_cancel_and_a_missing_run_is_named(tmp_path):
    assert list(cancel(_recorded(tmp_path))) == []
    with pytest.raises(GavelError, match="no batches recorded for it"):
        list(status(tmp_path / "other.jsonl"))
