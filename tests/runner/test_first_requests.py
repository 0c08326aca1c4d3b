"""A run whose server refuses some samples every time finishes; only a run whose first requests
are all refused alike (nothing answered) stops early, after as few requests as it takes. Against
a real OpenAI-protocol server on 127.0.0.1, asserting what it received."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from gavel.models.openai_compat import OpenAIChatModel
from gavel.requests import Request
from gavel.runner.async_runner import SAME_REFUSALS, RunAborted, run_async
from gavel.runner.max_failures import MaxFailures
from gavel.transport.retry import RetryPolicy

pytest.importorskip("openai")

FAST = RetryPolicy(retries=6, base_delay=0.01, max_delay=0.02)
#: What a content filter says, every time, to the samples it refuses.
FILTERED = "Your request was rejected as a result of our safety system."


def chat(url: str) -> OpenAIChatModel:
    return OpenAIChatModel("m", base_urls=[url], api_key_env="GAVEL_TEST_KEY", timeout=5.0)


def requests(n: int) -> list[Request]:
    return [Request(sample_id=f"s{i}", task="t", prompt=f"<s{i}> is it?") for i in range(n)]


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def run(model, reqs, out, **options):
    options.setdefault("concurrency", 16)
    options.setdefault("progress", False)
    options.setdefault("retries", FAST)
    return asyncio.run(run_async(model, reqs, out, **options))


def refused(i: int) -> bool:
    return i % 7 == 3  # s3, s10, s17, s24, s31, s38: 6 of 40


def filter_some(fake):
    def plan(body, number):
        sample = int(fake.prompt_text(body).split(">")[0].removeprefix("<s"))
        return fake.Fault(status=400, message=FILTERED) if refused(sample) else None

    return plan


def test_a_run_with_samples_always_refused_finishes_and_reruns_ask_only_those(
    server, fake, api_key, tmp_path
):
    server.plan = filter_some(fake)
    out = tmp_path / "p.jsonl"
    summary = run(chat(server.url), requests(40), out)  # no RunAborted
    assert server.hits == 40  # each sample asked once: a 400 is not retried
    written = lines(out)
    assert sorted(line["id"] for line in written) == sorted(f"s{i}" for i in range(40))
    failed = {line["id"] for line in written if line.get("error")}
    assert failed == {f"s{i}" for i in range(40) if refused(i)}
    assert all(FILTERED in line["error"] for line in written if line.get("error"))
    assert summary.causes == {f"HTTP 400: {FILTERED}": 6}
    assert summary.describe_failures() == f"6 samples failed:\n  6 × HTTP 400: {FILTERED}"

    for _ in range(2):  # a rerun asks only the samples without an answer, and ends the same
        before = server.hits
        again = run(chat(server.url), requests(40), out)
        assert server.hits - before == 6
        assert sorted(server.prompts) == sorted(f"<s{i}> is it?" for i in range(40))
        assert (again.errors_retried, again.skipped, again.errors) == (6, 34, 6)
        assert len(lines(out)) == 40
        assert {line["id"] for line in lines(out) if line.get("error")} == failed


def test_a_rerun_that_stops_puts_back_the_error_lines_it_did_not_replace(
    server, fake, api_key, tmp_path
):
    server.plan = filter_some(fake)
    out = tmp_path / "p.jsonl"
    run(chat(server.url), requests(40), out)
    before = server.hits
    with pytest.raises(RunAborted, match="more than --max-failures 0"):
        run(chat(server.url), requests(40), out, concurrency=1, max_failures=MaxFailures.parse("0"))
    assert server.hits - before == 1  # stopped at the first failure, as asked
    written = lines(out)
    assert len(written) == 40  # the five not asked again keep their error lines
    assert len({line["id"] for line in written}) == 40
    assert sum(1 for line in written if line.get("error")) == 6


def test_max_failures_as_a_share_of_the_samples_to_ask(server, fake, api_key, tmp_path):
    server.plan = filter_some(fake)
    out = tmp_path / "p.jsonl"
    with pytest.raises(RunAborted, match=r"3 of the 40 samples to ask failed, more than "
                                         r"--max-failures 5%"):  # fmt: skip
        run(chat(server.url), requests(40), out, concurrency=1, total=40,
            max_failures=MaxFailures.parse("5%"))  # fmt: skip
    assert server.hits == 18  # s17, the third refused sample, stopped it
    assert len(lines(out)) == 18


@pytest.mark.parametrize("concurrency", [1, 16])
def test_a_wrong_model_stops_after_the_first_requests_with_the_number_sent(
    server, fake, api_key, tmp_path, concurrency
):
    server.plan = lambda body, number: fake.unknown_model("m")
    out = tmp_path / "p.jsonl"
    with pytest.raises(RunAborted) as stopped:
        run(chat(server.url), requests(40), out, concurrency=concurrency)
    message = str(stopped.value)
    said = re.search(rf"refused (?:all {SAME_REFUSALS}|the first {SAME_REFUSALS} of the (\d+)) "
                     r"requests sent, alike", message)  # fmt: skip
    assert said, message
    sent = int(said.group(1) or SAME_REFUSALS)
    # What the server received, nothing after the stop: at most the requests in flight and
    # those sent before the refusals made three.
    assert SAME_REFUSALS <= server.hits <= sent <= max(concurrency + 2, SAME_REFUSALS)
    assert "The model `m` does not exist." in message and "--model openai:NAME" in message
    assert SAME_REFUSALS <= len(lines(out)) <= server.hits


def test_a_server_that_cannot_take_images_stops_the_run_at_once(server, fake, api_key, tmp_path):
    """llama-server without --mmproj answers every image request 500."""
    from PIL import Image

    image = tmp_path / "a.png"
    Image.new("RGB", (8, 8)).save(image)
    server.plan = lambda body, number: fake.Fault(
        status=500, message="image input is not supported"
    )
    reqs = [Request(sample_id=f"s{i}", task="t", prompt="is it?", images=(str(image),))
            for i in range(20)]  # fmt: skip
    for concurrency in (1, 16):
        before = server.hits
        with pytest.raises(RunAborted) as stopped:
            run(chat(server.url), reqs, tmp_path / f"p{concurrency}.jsonl", concurrency=concurrency)
        message = str(stopped.value)
        said = re.search(rf"answered (?:all {SAME_REFUSALS}|the first {SAME_REFUSALS} of the "
                         r"(\d+)) requests sent with the same error", message)  # fmt: skip
        assert said, message
        sent = int(said.group(1) or SAME_REFUSALS)
        # Not 7 tries of 20 samples: nothing after the third alike reply.
        assert SAME_REFUSALS <= server.hits - before <= sent <= max(concurrency + 2, SAME_REFUSALS)
        assert "HTTP 500: image input is not supported" in message
        assert "cannot take image input" in message and "--mmproj" in message


@pytest.mark.parametrize(
    "fault",
    [{"status": 503, "message": "Loading model"}, {"status": 500, "message": "Loading model"},
     {"status": 502, "message": "Bad Gateway"}],
)  # fmt: skip
def test_a_server_still_loading_is_waited_for(server, fake, api_key, tmp_path, fault):
    server.plan = lambda body, number: fake.Fault(**fault) if number <= 5 else None
    summary = run(chat(server.url), requests(6), tmp_path / "p.jsonl", concurrency=1)
    assert (summary.answered, summary.errors) == (6, 0)
    assert server.hits == 11  # five refused while loading, then every sample answered


def test_alike_refusals_after_an_answer_are_the_samples_own(server, fake, api_key, tmp_path):
    server.plan = lambda body, number: None if number == 1 else fake.Fault(
        status=400, message=FILTERED
    )  # fmt: skip
    summary = run(chat(server.url), requests(30), tmp_path / "p.jsonl", concurrency=1)
    assert (summary.answered, summary.errors, server.hits) == (30, 29, 30)


@pytest.mark.parametrize("fault", ["unknown model", "alike 500"])
def test_a_rerun_after_a_stop_asks_new_samples_first_and_stops_as_soon(
    server, fake, api_key, tmp_path, fault
):
    """The samples an earlier run failed are asked last: their refusals do not count towards
    the stop, so asked first they would let every rerun send more than the one before."""
    refusal = {
        "unknown model": lambda: fake.unknown_model("m"),
        "alike 500": lambda: fake.Fault(status=500, message="image input is not supported"),
    }[fault]
    server.plan = lambda body, number: refusal()
    out = tmp_path / "p.jsonl"
    sent = []
    for _ in range(3):
        before = server.hits
        with pytest.raises(RunAborted):
            run(chat(server.url), requests(40), out, concurrency=1)
        sent.append(server.hits - before)
    assert sent == [SAME_REFUSALS] * 3, sent
    assert len({line["id"] for line in lines(out)}) == len(lines(out))  # one line a sample
