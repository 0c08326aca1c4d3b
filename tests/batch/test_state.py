"""The batch folder's state file: where it is, and a damaged one named, never guessed."""

from __future__ import annotations

from pathlib import Path

import pytest

from gavel.batch.state import BatchState, Part, batch_folder, load_state, save_state
from gavel.errors import GavelError


def test_the_folder_sits_beside_the_output():
    assert batch_folder(Path("runs/a/pred.jsonl")) == Path("runs/a/pred.batch")
    assert batch_folder(Path("run/results.judge.jsonl")) == Path("run/results.judge.batch")
    assert batch_folder(Path("run/answers")) == Path("run/answers.batch")


def test_state_round_trips_and_a_damaged_file_is_an_error_naming_it(tmp_path):
    assert load_state(tmp_path) is None
    state = BatchState(kind="generate", model="m", base_url="http://h/v1", api_key_env="K",
                       output="p.jsonl", parts=[Part(name="r1-p1", round=1, count=3, sha256="ab")])  # fmt: skip
    state.parts[0].batch_id = "batch_1"
    save_state(tmp_path, state)
    assert load_state(tmp_path) == state
    assert [p.name for p in load_state(tmp_path).unfinished()] == ["r1-p1"]
    (tmp_path / "state.json").write_text('{"kind": "generate", "parts": 3}')
    with pytest.raises(GavelError, match=r"state\.json: not a gavel batch state file"):
        load_state(tmp_path)


@pytest.mark.parametrize("name", ["../../escaped", "/etc/x", "a/b", "..", ".hidden", "", "a\\b"])
def test_a_part_name_must_be_one_plain_file_name(tmp_path, name):
    state = BatchState(kind="generate", model="m", base_url="http://h/v1", api_key_env="K",
                       output="p.jsonl", parts=[Part(name=name, round=1, count=1, sha256="ab")])  # fmt: skip
    save_state(tmp_path, state)
    with pytest.raises(GavelError, match=r"state\.json: parts\[0\]\.name: .* not a plain file"):
        load_state(tmp_path)
