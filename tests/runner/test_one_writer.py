"""Every runner (the Batch API's and the offline batch's steps too) refuses an output another
process is writing, however it is called (the Python API included), before it reads, repairs or
sends anything."""

from __future__ import annotations

import pytest

from gavel.io.output_lock import OutputBusy
from gavel.requests import Answer, Capabilities, Request


class EchoModel:
    """Answers every request at once (and counts them); answers batches too."""

    name = "echo"
    capabilities = Capabilities(box_format="pixel")
    batch_size = 2

    def __init__(self) -> None:
        self.asked = 0

    def settings(self):
        return {}

    def request_length(self, request: Request) -> int:
        return len(request.prompt)

    def answer(self, request: Request) -> Answer:
        self.asked += 1
        return Answer(f"answer to {request.sample_id}")

    def answer_batch(self, requests: list[Request]) -> list[Answer]:
        return [self.answer(request) for request in requests]


@pytest.fixture
def held(tmp_path, hold_output):
    """A predictions file with a line a crash cut short (a runner would repair it), held by
    another process."""
    out = tmp_path / "pred.jsonl"
    out.write_bytes(b'{"id": "s0", "response": "x"}\n{"id": "s1", "resp')
    hold_output(out)
    return out


def requests() -> list[Request]:
    return [Request(sample_id=f"s{i}", task="gavel", prompt="p" * i) for i in range(4)]


def refused(call, out) -> None:
    before = out.read_bytes()
    with pytest.raises(OutputBusy, match="is being written by another gavel process"):
        call()
    assert out.read_bytes() == before  # not even the torn line was touched


def test_the_in_process_runner(held):
    from gavel.runner.local import run_model

    model = EchoModel()
    refused(lambda: run_model(model, requests(), held, progress=False), held)
    assert model.asked == 0


def test_the_async_runner(held):
    from gavel.runner.async_runner import run_sync

    model = EchoModel()
    refused(lambda: run_sync(model, requests(), held, progress=False), held)
    assert model.asked == 0


def test_the_batched_runner(held):
    from gavel.runner.batched import run_batched

    model = EchoModel()
    refused(lambda: run_batched(model, requests(), held, progress=False), held)
    assert model.asked == 0


def test_the_ray_data_writer(held):
    from gavel.runner.ray_data import write_predictions

    rows = [{"gavel_id": "s2", "prediction": '{"id": "s2", "response": "y"}'}]
    refused(lambda: write_predictions(rows, held), held)


def test_the_ray_executor_starts_no_cluster(held):
    ray = pytest.importorskip("ray", reason="the Ray executor needs Ray")
    from gavel.runner.ray_executor import run_ray

    refused(lambda: run_ray("scene", {}, requests(), held, workers=1, progress=False), held)
    assert not ray.is_initialized()


def test_the_batch_api_runner(held):
    from gavel.batch.runner import run_batch

    model = EchoModel()
    refused(lambda: run_batch(model, requests(), held, progress=False), held)
    assert model.asked == 0


def test_writing_a_requests_file_for_an_offline_batch(held, tmp_path):
    # It takes the output's error lines out while it reads the cache: another writer's lines
    # could be lost in that rewrite.
    from gavel.batch.runner import write_requests_only

    target = tmp_path / "requests.jsonl"
    refused(lambda: write_requests_only(EchoModel(), requests(), held, target), held)
    assert not target.exists()


def test_merging_an_offline_batch_output(held, tmp_path):
    from gavel.batch.runner import merge_output

    output = tmp_path / "output.jsonl"
    output.write_text("")
    refused(lambda: merge_output(EchoModel(), requests(), held, output), held)
