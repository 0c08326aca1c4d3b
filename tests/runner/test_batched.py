"""The batched runner: windows sorted longest first, lines written per batch, resume, splits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gavel.requests import Answer, Capabilities, Request
from gavel.runner.async_runner import FailureBudget, RunAborted
from gavel.runner.batched import run_batched


class BatchingModel:
    """Answers with the request id, keeps every batch it was given, and fails like a real
    model can: on one request's unreadable input, or on any batch larger than it can hold."""

    name = "batching"
    capabilities = Capabilities(box_format="pixel")

    def __init__(self, batch_size: int = 2, *, fail_on=frozenset(), max_batch=None, out=None):
        self.batch_size = batch_size
        self.fail_on = set(fail_on)
        self.max_batch = max_batch
        self.out = out
        self.batches: list[list[str]] = []
        self.lines_before: list[int] = []

    def settings(self):
        return {}

    def request_length(self, request: Request) -> int:
        return len(request.prompt)

    def answer(self, request: Request) -> Answer:
        return self.answer_batch([request])[0]

    def answer_batch(self, requests: list[Request]) -> list[Answer]:
        self.batches.append([r.sample_id for r in requests])
        if self.out is not None:
            self.lines_before.append(len(_lines(self.out)))
        if self.max_batch is not None and len(requests) > self.max_batch:
            raise RuntimeError("CUDA out of memory")
        for request in requests:
            if request.sample_id in self.fail_on:
                raise OSError(f"cannot read image of {request.sample_id}")
        return [
            Answer(f"answer to {r.sample_id}", usage={"prompt_tokens": len(r.prompt),
                                                      "completion_tokens": 1})
            for r in requests
        ]  # fmt: skip


def _requests(lengths: list[int]) -> list[Request]:
    return [Request(f"s{i}", "gavel", "x" * n) for i, n in enumerate(lengths)]


def _lines(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


LENGTHS = [3, 9, 1, 7, 5, 2, 8, 4, 6, 10, 11]


def test_each_window_is_asked_longest_first_and_written_batch_by_batch(tmp_path: Path) -> None:
    out = tmp_path / "pred.jsonl"
    model = BatchingModel(batch_size=2, out=out)
    summary = run_batched(model, _requests(LENGTHS), out, window_batches=2, progress=False)
    # Windows of 4: (3 9 1 7) (5 2 8 4) (6 10 11), each ordered longest first, cut in twos.
    assert model.batches == [
        ["s1", "s3"], ["s0", "s2"], ["s6", "s4"], ["s7", "s5"], ["s10", "s9"], ["s8"],
    ]  # fmt: skip
    # Each batch's lines were on disk before the next batch started.
    assert model.lines_before == [0, 2, 4, 6, 8, 10]
    assert [line["id"] for line in _lines(out)] == [i for b in model.batches for i in b]
    assert (summary.requested, summary.answered, summary.batches) == (11, 11, 6)
    assert summary.prompt_tokens == sum(LENGTHS)
    first = _lines(out)[0]
    assert first["response"] == "answer to s1" and first["box_format"] == "pixel"


def test_the_iterator_is_read_one_window_at_a_time(tmp_path: Path) -> None:
    pulled_when_asked = []
    pulled = 0

    class Watching(BatchingModel):
        def answer_batch(self, requests):
            pulled_when_asked.append(pulled)
            return super().answer_batch(requests)

    def requests():
        nonlocal pulled
        for request in _requests([1] * 20):
            pulled += 1
            yield request

    run_batched(Watching(batch_size=2), requests(), tmp_path / "p.jsonl", window_batches=3,
                progress=False)  # fmt: skip
    assert pulled_when_asked[:3] == [6, 6, 6] and pulled_when_asked[3] == 12


def test_batch_size_one_keeps_the_input_order(tmp_path: Path) -> None:
    out = tmp_path / "pred.jsonl"
    model = BatchingModel(batch_size=1)
    run_batched(model, _requests(LENGTHS), out, progress=False)
    assert [line["id"] for line in _lines(out)] == [f"s{i}" for i in range(len(LENGTHS))]


def test_resume_skips_answered_ids_and_asks_failed_ones_again(tmp_path: Path) -> None:
    out = tmp_path / "pred.jsonl"
    first = run_batched(BatchingModel(batch_size=1, fail_on={"s2"}), _requests([1] * 5), out,
                        progress=False)  # fmt: skip
    assert first.errors == 1
    with out.open("ab") as handle:
        handle.write(b'{"id": "s5", "respo')  # kill -9 in the middle of a line
    model = BatchingModel(batch_size=4)
    summary = run_batched(model, _requests([1] * 8), out, progress=False)
    assert sorted(i for b in model.batches for i in b) == ["s2", "s5", "s6", "s7"]
    assert (summary.skipped, summary.answered, summary.errors_retried) == (4, 4, 1)
    lines = _lines(out)
    assert sorted(line["id"] for line in lines) == [f"s{i}" for i in range(8)]
    assert all(line.get("error") is None for line in lines)


def test_ids_repeated_in_the_input_are_asked_once(tmp_path: Path) -> None:
    out = tmp_path / "pred.jsonl"
    model = BatchingModel(batch_size=3)
    requests = _requests([1, 2, 3]) + _requests([4, 5])
    summary = run_batched(model, requests, out, progress=False)
    assert sorted(line["id"] for line in _lines(out)) == ["s0", "s1", "s2"]
    assert (summary.skipped, summary.answered) == (2, 3)


def test_a_request_that_fails_costs_one_error_line_not_its_batch(tmp_path: Path) -> None:
    out = tmp_path / "pred.jsonl"
    model = BatchingModel(batch_size=4, fail_on={"s1"})
    summary = run_batched(model, _requests([1] * 8), out, progress=False)
    lines = {line["id"]: line for line in _lines(out)}
    assert len(lines) == 8 and summary.errors == 1
    assert lines["s1"]["error"] == "OSError: cannot read image of s1"
    assert lines["s1"]["error_kind"] == "other"
    assert all(lines[i]["response"] == f"answer to {i}" for i in lines if i != "s1")
    # The failed batch was answered one at a time; the size stays, since one request failed.
    assert model.batches == [["s0", "s1", "s2", "s3"], ["s0"], ["s1"], ["s2"], ["s3"],
                             ["s4", "s5", "s6", "s7"]]  # fmt: skip
    assert (summary.batch_size, summary.batches_split) == (4, 1)


def test_batches_the_model_cannot_hold_are_halved(tmp_path: Path) -> None:
    out = tmp_path / "pred.jsonl"
    model = BatchingModel(batch_size=8, max_batch=2)
    summary = run_batched(model, _requests([1] * 20), out, progress=False)
    assert [len(b) for b in model.batches] == [8] + [1] * 8 + [4] + [1] * 4 + [2] * 4
    assert sorted(line["id"] for line in _lines(out)) == sorted(f"s{i}" for i in range(20))
    assert summary.errors == 0 and (summary.batch_size, summary.batches_split) == (2, 2)
    assert "batches of up to 2, 2 failed batches answered one at a time" in summary.describe()


def test_a_model_without_batches_is_asked_one_at_a_time(tmp_path: Path) -> None:
    class OneAtATime:
        name = "single"
        capabilities = Capabilities()

        def __init__(self):
            self.asked: list[str] = []

        def settings(self):
            return {}

        def answer(self, request):
            self.asked.append(request.sample_id)
            return Answer("no")

    model = OneAtATime()
    summary = run_batched(model, _requests([5, 1, 9]), tmp_path / "p.jsonl", progress=False)
    assert model.asked == ["s0", "s1", "s2"] and summary.batches == 3


def test_the_failure_budget_stops_the_run_and_keeps_its_lines(tmp_path: Path) -> None:
    out = tmp_path / "pred.jsonl"
    model = BatchingModel(batch_size=2, fail_on={f"s{i}" for i in range(10)})
    budget = FailureBudget(max_consecutive=3, max_fraction=None)
    with pytest.raises(RunAborted, match="3 requests in a row failed") as stopped:
        run_batched(model, _requests([1] * 10), out, failure_budget=budget, progress=False)
    # The batch during which the budget ran out is written whole, then the run stops.
    assert len(_lines(out)) == stopped.value.summary.answered == 4
    assert f"The 4 lines written are kept in {out}; fix the cause and rerun" in str(stopped.value)
    # Stopped again, sooner: the error lines it took out and did not replace come back.
    before = {line["id"]: line for line in _lines(out)}
    again = FailureBudget(max_consecutive=1, max_fraction=None)
    with pytest.raises(RunAborted):
        run_batched(model, _requests([1] * 10), out, failure_budget=again, progress=False)
    assert len(_lines(out)) == 4 and {line["id"] for line in _lines(out)} == set(before)
    summary = run_batched(BatchingModel(batch_size=2), _requests([1] * 10), out, progress=False)
    assert summary.errors_retried == 4 and len(_lines(out)) == 10


class CutOffModel(BatchingModel):
    """Answers every request with an unfinished ramble, as a model stopped by its token limit."""

    def answer_batch(self, requests: list[Request]) -> list[Answer]:
        ramble = "There is no hallucination in the colour of the"
        return [Answer(ramble, usage={"completion_tokens": 6}, finish_reason="length")
                for _ in requests]  # fmt: skip


def test_an_answer_cut_off_by_the_token_limit_is_written_and_scored_as_cut_off(
    tmp_path: Path,
) -> None:
    from gavel.benchmarks.gavel.scoring import GavelSettings, evaluate_files
    from gavel.io.jsonl import write_jsonl

    data = tmp_path / "data.jsonl"
    write_jsonl(data, [
        {"id": f"s{i}", "image": "a.png", "caption": "c", "hallucinated": False,
         "width": 100, "height": 100}
        for i in range(3)
    ])  # fmt: skip
    out = tmp_path / "pred.jsonl"
    run_batched(CutOffModel(batch_size=2), _requests([3, 2, 1]), out, progress=False)
    assert [line["finish_reason"] for line in _lines(out)] == ["length"] * 3
    result, scores = evaluate_files(data, out, GavelSettings(resamples=0))
    assert result.counts["truncated"] == 3
    assert all(score.outcome == "unparseable" for score in scores)


def test_a_ray_replica_keeps_the_finish_reason_of_each_answer() -> None:
    from gavel.runner.batched import answer_requests

    predictions = answer_requests(CutOffModel(batch_size=2), _requests([1, 3, 2]))
    assert [p.id for p in predictions] == ["s0", "s1", "s2"]
    assert all(p.truncated for p in predictions)


class SlowModel(BatchingModel):
    def answer_batch(self, requests: list[Request]) -> list[Answer]:
        raise TimeoutError("generation took too long")


def test_error_lines_say_what_kind_of_failure_they_were(tmp_path: Path) -> None:
    out = tmp_path / "pred.jsonl"
    run_batched(SlowModel(batch_size=2), _requests([1, 1]), out, progress=False)
    assert [line["error_kind"] for line in _lines(out)] == ["timeout", "timeout"]


def test_a_failed_write_names_the_file_and_keeps_the_lines_before_it(tmp_path: Path) -> None:
    """A real file-size limit in a child process: the first batch fits, the second does not.
    The error names the output file (a failed write names none), and the sync on the way out,
    which fails the same way, does not replace it."""
    import subprocess
    import sys

    out = tmp_path / "pred.jsonl"
    script = (
        "import resource, sys\n"
        "from gavel.requests import Answer, Capabilities, Request\n"
        "from gavel.runner.batched import run_batched\n"
        "class Model:\n"
        "    name = 'm'\n"
        "    capabilities = Capabilities(box_format='pixel')\n"
        "    batch_size = 2\n"
        "    def answer_batch(self, requests):\n"
        "        return [Answer('x' * 100) for _ in requests]\n"
        "requests = [Request(f's{i}', 'gavel', 'p') for i in range(6)]\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (400, 400))\n"
        "try:\n"
        "    run_batched(Model(), requests, sys.argv[1], progress=False)\n"
        "except OSError as error:\n"
        "    print(error.filename, error.strerror)\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(out)], capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.stdout.strip() == f"{out} File too large", done.stderr
    assert out.read_bytes().count(b"\n") == 2  # the two lines of the first batch, then a torn one
    assert run_batched(BatchingModel(), _requests([1] * 6), out, progress=False).skipped == 2
    assert [line["id"] for line in _lines(out)] == [f"s{i}" for i in range(6)]
