"""The async runner against real OpenAI-compatible servers on 127.0.0.1 with injected faults.

Every test ends by checking the contract of the predictions file: each requested id exactly
once, each answer the echo of its own prompt, nothing sent twice that was already written.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from PIL import Image

from gavel.errors import GavelError
from gavel.models.openai_compat import OpenAIChatModel
from gavel.requests import Answer, Capabilities, Request
from gavel.runner.async_runner import (
    AsyncRunSummary,
    FailureBudget,
    RunAborted,
    drop_errors,
    run_async,
    run_sync,
)
from gavel.runner.cache import AnswerCache
from gavel.transport.retry import RetryPolicy, is_retryable, parse_retry_after

pytest.importorskip("openai")

FAST = RetryPolicy(retries=4, base_delay=0.01, max_delay=0.05)


def requests(n: int, start: int = 0, images=()) -> list[Request]:
    return [
        Request(sample_id=f"s{i}", task="t", prompt=f"<s{i}> is it?", images=tuple(images))
        for i in range(start, start + n)
    ]


def model(*servers, **options) -> OpenAIChatModel:
    options.setdefault("timeout", 5.0)
    return OpenAIChatModel(
        "test-model", base_urls=[s.url for s in servers], api_key_env="GAVEL_TEST_KEY", **options
    )


def run(chat, reqs, out, **options) -> AsyncRunSummary:
    options.setdefault("concurrency", 8)
    options.setdefault("progress", False)
    options.setdefault("retries", FAST)
    return asyncio.run(run_async(chat, reqs, out, **options))


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def assert_each_once(path: Path, n: int) -> list[dict]:
    written = lines(path)
    ids = [line["id"] for line in written]
    assert sorted(ids) == sorted(f"s{i}" for i in range(n)), "every id exactly once"
    for line in written:
        if line.get("error") is None:
            assert line["response"] == f"echo: <{line['id']}> is it?"
    return written


def test_every_sample_exactly_once_through_every_kind_of_fault(server, fake, api_key, tmp_path):
    Fault = fake.Fault
    server.plan = fake.faults_by_marker(
        {
            "<s1>": [Fault(status=500), Fault(status=502)],
            "<s2>": [Fault(status=429, headers={"Retry-After": "0"})],
            "<s3>": [Fault(body=b'{"choices": [{"mess')],  # malformed JSON
            "<s4>": [Fault(body=b'{"object": "chat.completion"}')],  # valid JSON, no choices
            "<s5>": [Fault(delay=2.5)],  # longer than the client's timeout
            "<s6>": [Fault(delay=0.3)],  # slow but in time: not a failure
            "<s7>": [Fault(drop=True)],  # connection closed without a reply
            "<s8>": [Fault(status=503), Fault(status=503), Fault(status=503)],
        }
    )
    out = tmp_path / "pred.jsonl"
    summary = run(model(server, timeout=1.0), requests(40), out)
    written = assert_each_once(out, 40)
    assert summary.errors == 0 and not any("error" in line for line in written)
    assert summary.retries == 2 + 1 + 1 + 1 + 1 + 1 + 3
    assert (summary.answered, summary.requested) == (40, 40)
    retried = {line["id"]: line["meta"]["attempts"] for line in written if "meta" in line}
    assert retried == {"s1": 3, "s2": 2, "s3": 2, "s4": 2, "s5": 2, "s7": 2, "s8": 4}
    assert summary.prompt_tokens == sum(line["prompt_tokens"] for line in written)


def test_retry_after_in_seconds_is_obeyed(server, fake, api_key, tmp_path):
    server.plan = fake.faults_by_marker(
        {"<s0>": [fake.Fault(status=429, headers={"Retry-After": "1"})]}
    )
    run(model(server), requests(1), tmp_path / "pred.jsonl")
    (first, _, _), (second, _, _) = server.received
    assert 0.95 <= second - first < 3.0
    assert_each_once(tmp_path / "pred.jsonl", 1)


def test_retry_after_as_an_http_date_and_other_headers():
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after("1.5") == 1.5
    now = 1_700_000_000.0  # 2023-11-14 22:13:20 GMT
    assert parse_retry_after("Tue, 14 Nov 2023 22:13:50 GMT", now=now) == pytest.approx(30.0)
    assert parse_retry_after("Tue, 14 Nov 2023 22:00:00 GMT", now=now) == 0.0  # in the past
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None
    policy = RetryPolicy(base_delay=1.0, max_delay=4.0, max_retry_after=60.0)
    assert policy.delay(0, retry_after=90.0) == 60.0
    assert all(0.0 <= policy.delay(10) <= 4.0 for _ in range(100))


def test_what_is_retried():
    assert is_retryable(TimeoutError())
    assert is_retryable(json.JSONDecodeError("x", "{", 0))
    assert not is_retryable(GavelError("cannot read image"))
    assert not is_retryable(ValueError("a bug"))


def test_a_request_that_keeps_failing_is_written_as_an_error_and_asked_again_on_rerun(
    server, fake, api_key, tmp_path
):
    server.plan = fake.faults_by_marker({"<s3>": [fake.Fault(status=500)] * 5})
    out = tmp_path / "pred.jsonl"
    summary = run(model(server), requests(10), out)
    assert summary.errors == 1
    (failed,) = [line for line in lines(out) if "error" in line]
    assert failed["id"] == "s3" and "response" not in failed
    assert failed["error"].startswith("InternalServerError: ")
    assert failed["error"].endswith("(after 5 attempts)")
    assert_each_once(out, 10)

    before = server.hits
    summary = run(model(server), requests(10), out)  # the server is healthy again
    assert server.hits - before == 1, "only the failed id is sent again"
    assert (summary.errors_retried, summary.skipped, summary.answered) == (1, 9, 1)
    written = assert_each_once(out, 10)
    assert not any("error" in line for line in written)


def test_errors_are_kept_when_asked_to(server, fake, api_key, tmp_path):
    server.plan = fake.faults_by_marker({"<s0>": [fake.Fault(status=400)]})
    out = tmp_path / "pred.jsonl"
    run(model(server), requests(2), out)
    assert server.prompts["<s0> is it?"] == 1, "a 400 is not retried"
    summary = run(model(server), requests(2), out, retry_errors=False)
    assert (summary.skipped, summary.answered) == (2, 0)
    errors = {line["id"]: line.get("error") for line in lines(out)}
    assert errors["s0"].startswith("BadRequestError") and errors["s1"] is None


def test_drop_errors_rewrites_the_file_without_errors_and_a_torn_tail(tmp_path):
    out = tmp_path / "pred.jsonl"
    out.write_bytes(
        b'{"id":"a","response":"x"}\n{"id":"b","error":"E"}\n{"id":"c"}\n{"id":"d","resp'
    )
    assert drop_errors(out) == 1
    assert out.read_bytes() == b'{"id":"a","response":"x"}\n{"id":"c"}\n'
    assert drop_errors(out) == 0
    assert not list(tmp_path.glob(".pred.jsonl.*")), "no temporary file left behind"


def test_failure_budget_stops_loudly_and_keeps_what_was_done(server, fake, api_key, tmp_path):
    server.plan = lambda body, number: fake.Fault(status=500) if number > 30 else None
    out = tmp_path / "pred.jsonl"
    budget = FailureBudget(max_consecutive=5, max_fraction=None)
    with pytest.raises(RunAborted, match="5 requests in a row failed") as stopped:
        run(model(server), requests(200), out, retries=RetryPolicy(retries=1, base_delay=0.01),
            failure_budget=budget, concurrency=4)  # fmt: skip
    assert isinstance(stopped.value, GavelError), "the command line reports it and exits non-zero"
    summary = stopped.value.summary
    written = lines(out)
    assert summary.answered == len(written) and summary.aborted
    good = [line for line in written if "error" not in line]
    assert len(good) == 30
    assert len({line["id"] for line in written}) == len(written)
    assert len(written) < 60, "stopped soon after the server broke"

    server.plan = None  # fixed: the rerun finishes, asking again only what is not answered
    hits = server.hits
    summary = run(model(server), requests(200), out)
    assert server.hits - hits == 200 - 30
    assert_each_once(out, 200)


def test_failure_budget_by_share_of_failures(server, fake, api_key, tmp_path):
    # A gateway failing every other request: the endpoint's failures, which spend the budget
    # (a refusal of the sample, a 404 say, would not: see test_failures.py).
    server.plan = lambda body, number: fake.Fault(status=502) if number % 2 else None
    budget = FailureBudget(max_consecutive=None, max_fraction=0.3, min_finished=20)
    with pytest.raises(RunAborted, match=r"of \d+ requests failed \(more than 30%\)"):
        run(model(server), requests(100), tmp_path / "p.jsonl", failure_budget=budget,
            concurrency=1, retries=RetryPolicy(retries=0))  # fmt: skip


def test_requests_are_spread_over_two_servers(server, second_server, api_key, tmp_path):
    server.latency = second_server.latency = 0.02
    out = tmp_path / "pred.jsonl"
    run(model(server, second_server), requests(100), out, concurrency=8)
    assert server.hits + second_server.hits == 100
    assert 30 <= server.hits <= 70, (server.hits, second_server.hits)
    assert_each_once(out, 100)


def test_the_cache_sends_nothing_the_second_time(server, api_key, tmp_path):
    photo = tmp_path / "photo.png"
    Image.new("RGB", (64, 48), (200, 30, 30)).save(photo)
    cache = tmp_path / "cache.sqlite"
    first = run(model(server), requests(12, images=[photo]), tmp_path / "a.jsonl", cache=cache)
    assert server.hits == 12 and first.cached == 0
    second = run(model(server), requests(12, images=[photo]), tmp_path / "b.jsonl", cache=cache)
    assert server.hits == 12, "nothing sent"
    assert (second.cached, second.answered, second.prompt_tokens) == (12, 12, 0)
    assert_each_once(tmp_path / "b.jsonl", 12)
    again = {line["id"]: line for line in lines(tmp_path / "b.jsonl")}
    for line in lines(tmp_path / "a.jsonl"):
        assert again[line["id"]]["response"] == line["response"]
        assert again[line["id"]]["sent_size"] == line["sent_size"] == [64, 48]
        assert again[line["id"]]["meta"] == {"cached": True}

    # Whatever changes the answer is a miss: a setting, the prompt, the image's bytes.
    run(model(server, temperature=0.7), requests(2, images=[photo]), tmp_path / "c.jsonl",
        cache=cache)  # fmt: skip
    assert server.hits == 14
    Image.new("RGB", (64, 48), (30, 200, 30)).save(photo)
    run(model(server), requests(2, images=[photo]), tmp_path / "d.jsonl", cache=cache)
    assert server.hits == 16
    with AnswerCache(cache) as opened:
        assert len(opened) == 16


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_an_image_that_is_a_pipe_or_a_device_fails_its_sample_under_the_cache(
    server, api_key, tmp_path
):
    # The cache hashes every image before asking; a FIFO would block that read forever, and
    # /dev/zero never end it. Each is refused as no regular file, and its sample fails alone.
    pipe = tmp_path / "pipe.png"
    os.mkfifo(pipe)
    out = tmp_path / "p.jsonl"
    for image in (pipe, Path("/dev/zero")):
        out.unlink(missing_ok=True)
        summary = run(model(server), requests(2, images=[image]), out,
                      cache=tmp_path / "cache.sqlite", failure_budget=None)  # fmt: skip
        assert (summary.answered, summary.errors, server.hits) == (2, 2, 0)
        assert all(str(image) in line["error"] for line in lines(out)), lines(out)


def test_the_cache_keeps_no_errors(server, fake, api_key, tmp_path):
    server.plan = fake.faults_by_marker({"<s0>": [fake.Fault(status=400)]})
    cache = tmp_path / "cache.sqlite"
    run(model(server), requests(3), tmp_path / "a.jsonl", cache=cache)
    run(model(server), requests(3), tmp_path / "b.jsonl", cache=cache)
    assert server.prompts["<s0> is it?"] == 2 and server.hits == 4


def test_resume_after_a_partial_run(server, api_key, tmp_path):
    out = tmp_path / "pred.jsonl"
    run(model(server), requests(10), out)
    summary = run(model(server), requests(30), out)
    assert (summary.skipped, summary.answered) == (10, 20)
    assert server.hits == 30 and max(server.prompts.values()) == 1
    assert_each_once(out, 30)


KILL_DRIVER = textwrap.dedent(
    """
    import asyncio, sys
    from gavel.requests import Request
    from gavel.models.openai_compat import OpenAIChatModel
    from gavel.runner.async_runner import run_async

    url, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    chat = OpenAIChatModel("test-model", base_urls=[url], api_key_env="GAVEL_TEST_KEY")
    requests = (
        Request(sample_id=f"s{i}", task="t", prompt=f"<s{i}> is it?") for i in range(n)
    )
    asyncio.run(run_async(chat, requests, out, concurrency=8, progress=False))
    """
)


def test_kill_9_mid_run_then_rerun_gives_every_sample_exactly_once(server, api_key, tmp_path):
    server.latency = 0.01
    out = tmp_path / "pred.jsonl"
    command = [sys.executable, "-c", KILL_DRIVER, server.url, str(out), "600"]
    process = subprocess.Popen(command, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (not out.exists() or out.read_bytes().count(b"\n") < 60):
        time.sleep(0.005)
    process.send_signal(signal.SIGKILL)
    process.wait()
    before = {
        json.loads(line)["id"] for line in out.read_bytes().split(b"\n") if line.endswith(b"}")
    }
    assert 60 <= len(before) < 600, "the kill should land mid-run"

    hits = server.hits
    rerun = subprocess.run(command, stderr=subprocess.PIPE, timeout=60)
    assert rerun.returncode == 0, rerun.stderr.decode()
    assert_each_once(out, 600)
    resent = server.hits - hits
    assert resent <= 600 - len(before) + 1  # at most the line the kill cut short
    for sample_id in before:
        assert server.prompts[f"<{sample_id}> is it?"] in (1, 2)
    assert sum(server.prompts[f"<{i}> is it?"] == 1 for i in before) >= len(before) - 1


def test_the_key_goes_only_into_the_authorization_header(
    server, fake, api_key, tmp_path, caplog, capfd
):
    caplog.set_level(logging.DEBUG)
    # A server that echoes the key in an error message (some proxies do).
    server.plan = fake.faults_by_marker(
        {"<s1>": [fake.Fault(status=401, message=f"bad key {api_key}")]}
    )
    out = tmp_path / "pred.jsonl"
    cache = tmp_path / "cache.sqlite"
    chat = model(server)
    run(chat, requests(5), out, cache=cache, progress=True)
    assert {auth for _, _, auth in server.received} == {f"Bearer {api_key}"}
    (failed,) = [line for line in lines(out) if "error" in line]
    assert "bad key ***" in failed["error"]
    captured = capfd.readouterr()
    texts = [captured.out, captured.err, caplog.text, repr(chat), json.dumps(chat.settings())]
    texts += [path.read_bytes().decode("latin-1") for path in tmp_path.iterdir()]
    for text in texts:
        assert api_key not in text
    with sqlite3.connect(cache) as db:
        assert api_key not in json.dumps(db.execute("SELECT * FROM answers").fetchall())


def test_the_runner_timeout_bounds_each_attempt(server, fake, api_key, tmp_path):
    server.plan = fake.faults_by_marker({"<s0>": [fake.Fault(delay=1.0)]})
    started = time.monotonic()
    summary = run(model(server, timeout=30), requests(2), tmp_path / "p.jsonl", timeout=0.3)
    assert time.monotonic() - started < 1.0
    assert summary.retries == 1 and summary.errors == 0
    assert_each_once(tmp_path / "p.jsonl", 2)


def test_summary_counts_tokens_and_cost(server, api_key, tmp_path):
    prices = {"test-model": (0.5, 2.0)}  # per 1,000 input / output tokens
    summary = run(model(server), requests(4), tmp_path / "p.jsonl", prices=prices)
    # The server counts prompt words (3 per prompt) and answers 7 tokens.
    assert (summary.prompt_tokens, summary.completion_tokens) == (12, 28)
    assert summary.cost == pytest.approx(12 / 1000 * 0.5 + 28 / 1000 * 2.0)
    assert "4 answered" in summary.describe() and "cost 0.0620" in summary.describe()
    assert run(model(server), requests(1), tmp_path / "q.jsonl").cost is None


class BlockingModel:
    """A plain adapter without ``answer_async``: the runner calls it in threads."""

    name = "blocking"
    capabilities = Capabilities(box_format="pixel")

    def settings(self):
        return {}

    def answer(self, request: Request) -> Answer:
        time.sleep(0.05)
        return Answer(f"echo: {request.prompt}")


def test_blocking_adapters_run_concurrently_too(tmp_path):
    started = time.monotonic()
    summary = run_sync(BlockingModel(), requests(16), tmp_path / "p.jsonl", concurrency=8,
                       progress=False)  # fmt: skip
    assert time.monotonic() - started < 0.6  # 16 x 0.05 s one after another would be 0.8 s
    assert summary.answered == 16
    assert_each_once(tmp_path / "p.jsonl", 16)


def test_progress_bar_on_a_terminal(server, api_key, tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    monkeypatch.setenv("TTY_INTERACTIVE", "1")
    run(model(server), requests(20), tmp_path / "p.jsonl", progress=True, total=20)
    err = capfd.readouterr().err
    assert "test-model" in err and "retries 0" in err


def test_duplicate_ids_in_the_requests_are_asked_once(server, api_key, tmp_path):
    summary = run(model(server), requests(3) + requests(3), tmp_path / "p.jsonl")
    assert (summary.answered, summary.skipped, server.hits) == (3, 3, 3)
