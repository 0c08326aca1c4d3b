"""Failures named by their real cause, and which of them may stop a run, against real servers
on 127.0.0.1 (and a port where nothing listens)."""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gavel.models.openai_compat import OpenAIChatModel
from gavel.records import Prediction
from gavel.requests import Request
from gavel.runner.async_runner import FailureBudget, RunAborted, run_async
from gavel.runner.validating import ValidatingModel
from gavel.transport.failures import MAX_SERVER_WORDS, SAME_REFUSALS, classify
from gavel.transport.retry import RetryPolicy

pytest.importorskip("openai")

FAST = RetryPolicy(retries=3, base_delay=0.01, max_delay=0.02)


def closed_port() -> int:
    """A port on 127.0.0.1 where nothing listens (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def chat(url: str, **options) -> OpenAIChatModel:
    options.setdefault("timeout", 5.0)
    return OpenAIChatModel("m", base_urls=[url], api_key_env="GAVEL_TEST_KEY", **options)


def requests(n: int) -> list[Request]:
    return [Request(sample_id=f"s{i}", task="t", prompt=f"<s{i}> is it?") for i in range(n)]


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def run(model, reqs, out, **options):
    options.setdefault("concurrency", 4)
    options.setdefault("progress", False)
    options.setdefault("retries", FAST)
    return asyncio.run(run_async(model, reqs, out, **options))


async def one_error(model: OpenAIChatModel) -> BaseException:
    try:
        await model.answer_async(requests(1)[0])
    except Exception as error:
        return error
    finally:
        await model.aclose()
    raise AssertionError("the request should have failed")


def test_the_real_cause_is_named_under_the_clients_own_exception(server, fake, api_key):
    refused = asyncio.run(one_error(chat(f"http://127.0.0.1:{closed_port()}/v1")))
    # The aiohttp transport reports a refused connection as a timeout; the cause says otherwise.
    assert classify(refused).kind == "connection_refused"
    server.plan = lambda body, number: fake.Fault(drop=True)
    assert classify(asyncio.run(one_error(chat(server.url)))).kind == "connection_reset"
    server.plan = lambda body, number: fake.Fault(delay=1.0)
    slow = asyncio.run(one_error(chat(server.url, timeout=0.2)))
    assert classify(slow).kind == "timeout"
    server.plan = lambda body, number: fake.Fault(status=401, message="bad key")
    unauthorized = classify(asyncio.run(one_error(chat(server.url))))
    assert (unauthorized.kind, unauthorized.status) == ("http_status", 401)
    assert "bad key" in unauthorized.cause


def test_an_endpoint_where_nothing_listens_stops_the_run_at_once(api_key, tmp_path):
    out = tmp_path / "p.jsonl"
    model = chat(f"http://127.0.0.1:{closed_port()}/v1")
    with pytest.raises(RunAborted, match="connection refused") as stopped:
        run(model, requests(40), out, retries=RetryPolicy(retries=6))
    summary = stopped.value.summary
    assert summary.retries == 0  # nothing retried: no server is there to answer
    assert lines(out) == []  # nothing written, so nothing to ask again or to mistake for work
    assert "is the base URL right" in str(stopped.value)
    assert "0 answered" in summary.describe()


def test_a_server_killed_mid_run_is_waited_for_then_the_run_stops_with_all_kept(
    fake, api_key, tmp_path
):
    out = tmp_path / "p.jsonl"
    server = fake.FakeOpenAIServer().__enter__()

    def die_at_the_third(body, number):
        if number != 3:
            return None
        threading.Thread(target=server.kill).start()
        return fake.Fault(drop=True)  # the server goes away; its port is closed from now on

    server.plan = die_at_the_third
    started = time.monotonic()
    with pytest.raises(RunAborted, match="went away") as stopped:
        run(chat(server.url), requests(6), out, concurrency=1, outage_limit=1.0)
    assert 1.0 <= time.monotonic() - started < 30
    message = str(stopped.value)
    assert "connection refused" in message and "within 1 s" in message
    assert "rerun the same command" in message and str(out) in message
    assert "APITimeoutError" not in message
    # What was answered is kept; the request in flight is not written, so a rerun asks it.
    assert [line["id"] for line in lines(out)] == ["s0", "s1"]
    assert all("error" not in line for line in lines(out))
    assert stopped.value.summary.retries > 1  # it kept trying while the server was away


def test_a_server_restarted_in_time_finds_the_run_going_on(fake, api_key, tmp_path):
    out = tmp_path / "p.jsonl"
    first = fake.FakeOpenAIServer().__enter__()
    port = first.port
    restarted: list = []

    def die_at_the_third(body, number):
        if number != 3:
            return None

        def kill_and_restart():
            first.kill()
            time.sleep(0.5)
            restarted.append(fake.FakeOpenAIServer(port=port).__enter__())

        threading.Thread(target=kill_and_restart).start()
        return fake.Fault(drop=True)

    first.plan = die_at_the_third
    try:
        summary = run(chat(first.url), requests(6), out, concurrency=1, outage_limit=30.0)
    finally:
        for server in restarted:
            server.__exit__(None, None, None)
    assert (summary.answered, summary.errors) == (6, 0)
    assert sorted(line["id"] for line in lines(out)) == [f"s{i}" for i in range(6)]
    (second,) = restarted
    assert sum(second.prompts.values()) == 4  # s2 (lost in flight) to s5, each asked once


def test_a_rerun_after_a_restart_asks_only_what_was_not_answered(fake, api_key, tmp_path):
    out = tmp_path / "p.jsonl"
    server = fake.FakeOpenAIServer().__enter__()
    port = server.port
    server.plan = lambda body, number: (
        threading.Thread(target=server.kill).start() or fake.Fault(drop=True)
    ) if number == 4 else None  # fmt: skip
    with pytest.raises(RunAborted, match="went away"):
        run(chat(server.url), requests(8), out, concurrency=1, outage_limit=0.5)
    answered = [line["id"] for line in lines(out)]
    assert answered == ["s0", "s1", "s2"]
    with fake.FakeOpenAIServer(port=port) as again:
        summary = run(chat(again.url), requests(8), out, concurrency=2)
        asked = set(again.prompts)
    assert summary.skipped == 3 and summary.answered == 5
    assert asked == {f"<s{i}> is it?" for i in range(3, 8)}  # the answered ones not re-asked
    assert sorted(line["id"] for line in lines(out)) == [f"s{i}" for i in range(8)]


def test_refused_replies_never_spend_the_failure_budget(server, api_key, tmp_path):
    out = tmp_path / "p.jsonl"
    picky = ValidatingModel(chat(server.url), lambda text: False, invalid_retries=1)
    budget = FailureBudget(max_consecutive=3, max_fraction=0.1, min_finished=5)
    summary = run(picky, requests(30), out, failure_budget=budget)  # no RunAborted
    assert (summary.answered, summary.errors, summary.refused) == (30, 30, 30)
    assert {line["error_kind"] for line in lines(out)} == {"invalid_answer"}
    assert "0 answered" in summary.describe() and "30 replies refused" in summary.describe()


def test_transport_failures_still_spend_it(server, fake, api_key, tmp_path):
    server.plan = lambda body, number: None if number == 1 else fake.Fault(status=503)
    budget = FailureBudget(max_consecutive=3, max_fraction=None)
    with pytest.raises(RunAborted, match="3 requests in a row failed"):
        run(chat(server.url), requests(30), tmp_path / "p.jsonl", failure_budget=budget,
            concurrency=1)  # fmt: skip


def test_finish_reason_is_recorded_and_survives_the_cache(server, api_key, tmp_path):
    server.finish_reason = "length"
    out, cache = tmp_path / "p.jsonl", tmp_path / "cache.sqlite"
    run(chat(server.url), requests(3), out, cache=cache)
    again = tmp_path / "again.jsonl"
    hits = server.hits
    run(chat(server.url), requests(3), again, cache=cache)
    assert server.hits == hits  # all from the cache
    for path in (out, again):
        assert [line["finish_reason"] for line in lines(path)] == ["length"] * 3
    assert Prediction(id="x", finish_reason="length").truncated


def test_old_prediction_lines_without_the_new_fields_still_read():
    import msgspec

    line = b'{"id": "a", "response": "Yes.", "latency_s": 0.1}'
    prediction = msgspec.json.decode(line, type=Prediction)
    assert (prediction.finish_reason, prediction.error_kind, prediction.truncated) == (
        None,
        None,
        False,
    )


INTERRUPT_DRIVER = """
import sys
from gavel.cli.main import main
sys.argv = ["gavel", "-v", "generate", "--data", sys.argv[1], "--model", "openai:m",
            "--base-url", sys.argv[2], "--api-key-env", "GAVEL_TEST_KEY", "--out", sys.argv[3],
            "--no-cache", "--concurrency", "1", "--timeout", "30"]
main()
"""


def test_ctrl_c_ends_with_a_summary_and_keeps_the_answers(server, api_key, tmp_path):
    from gavel.examples import example_dir

    server.latency = 0.3
    out = tmp_path / "pred.jsonl"
    data = example_dir("photos") / "gavel.jsonl"
    command = [sys.executable, "-c", INTERRUPT_DRIVER, str(data), server.url, str(out)]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(lines(out)) < 2:
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    written = lines(out)
    assert "interrupted:" in stderr and "Traceback" not in stderr
    assert f"{len(written)} answered" in stderr and str(out) in stderr
    assert "rerun the same command to continue" in stderr


@pytest.mark.parametrize(
    ("fault", "words"),
    [
        (  # transformers serve and other FastAPI servers
            {"status": 422, "payload": {"detail": "Unexpected fields in the request: {'x'}"}},
            "HTTP 422: Unexpected fields in the request: {'x'}",
        ),
        (  # FastAPI's own validation errors: a list of {loc, msg}
            {"status": 422, "payload": {"detail": [
                {"loc": ["body", "max_tokens"], "msg": "Input should be a valid integer",
                 "type": "int_parsing"}]}},
            "HTTP 422: body.max_tokens: Input should be a valid integer",
        ),
        (  # vLLM's unknown model
            {"status": 400, "payload": {"object": "error", "type": "NotFoundError", "code": 400,
                                        "message": "The model `nope` does not exist."}},
            "HTTP 400: The model `nope` does not exist.",
        ),
        ({"status": 401, "message": "Incorrect API key provided"},
         "HTTP 401: Incorrect API key provided"),
        ({"status": 502, "payload": b"<html>Bad Gateway</html>"},
         "HTTP 502: <html>Bad Gateway</html>"),
    ],
)  # fmt: skip
def test_the_servers_own_words_are_kept_with_the_status(
    server, fake, api_key, tmp_path, caplog, fault, words
):
    server.plan = lambda body, number: fake.Fault(**fault)
    out = tmp_path / "p.jsonl"
    with caplog.at_level("WARNING", logger="gavel"):
        run(chat(server.url), requests(1), out, retries=RetryPolicy(retries=0))
    (line,) = lines(out)
    assert words in line["error"] and line["error_kind"] == "http_status"
    assert words in caplog.text  # on the console too, not only in the file


def test_a_long_error_body_is_cut_and_its_secrets_redacted(server, fake, api_key, tmp_path):
    echoed = (
        f"Authorization: Bearer {api_key} rejected for https://alice:hunter2@proxy.local/v1 "
        "api_key=abcd1234efgh token: 'tok-9f8e7d6c' other key sk-proj-ZZZZZZZZZZZZZZZZ "
    )
    server.plan = lambda body, number: fake.Fault(
        status=403, payload={"detail": echoed + "x" * 2000}
    )
    out = tmp_path / "p.jsonl"
    run(chat(server.url), requests(1), out, retries=RetryPolicy(retries=0))
    error = lines(out)[0]["error"]
    for secret in (api_key, "hunter2", "alice", "abcd1234efgh", "tok-9f8e7d6c", "sk-proj-ZZZ"):
        assert secret not in error
    assert "Bearer ***" in error and "https://***@proxy.local/v1" in error
    words = error.split("HTTP 403: ", 1)[1]
    assert len(words) == MAX_SERVER_WORDS and words.endswith("…")


def test_a_wrong_key_stops_after_a_few_requests_and_a_rerun_asks_them_again(
    server, fake, api_key, tmp_path
):
    out = tmp_path / "p.jsonl"
    server.plan = lambda body, number: fake.Fault(status=401, message="Incorrect API key")
    with pytest.raises(RunAborted, match="refused all 3 requests sent, alike") as stopped:
        run(chat(server.url), requests(30), out, concurrency=1)
    message = str(stopped.value)
    assert server.hits == SAME_REFUSALS  # not 30 requests for one wrong key
    assert "HTTP 401: Incorrect API key" in message
    assert "GAVEL_TEST_KEY" in message and "--api-key-env" in message and server.url in message
    assert api_key not in message
    assert [line["error_kind"] for line in lines(out)] == ["http_status"] * SAME_REFUSALS
    server.plan = None  # the key fixed: the refused samples are asked again, nothing twice
    summary = run(chat(server.url), requests(30), out, concurrency=4)
    assert summary.errors_retried == SAME_REFUSALS and summary.errors == 0
    assert sorted(line["id"] for line in lines(out)) == sorted(f"s{i}" for i in range(30))


@pytest.mark.parametrize(
    ("options", "field", "flag"),
    [
        ({"temperature": 0.0}, "temperature", "--temperature"),
        ({"extra_body": {"response_format": {"type": "json_object"}}}, "response_format",
         "--extra-body"),
    ],
)  # fmt: skip
def test_a_refused_field_is_named_with_the_setting_that_sent_it(
    server, fake, api_key, tmp_path, options, field, flag
):
    server.plan = lambda body, number: fake.fastapi_detail(
        f"Unexpected fields in the request: {{'{field}'}}"
    )
    with pytest.raises(RunAborted) as stopped:
        run(chat(server.url, **options), requests(10), tmp_path / "p.jsonl", concurrency=2)
    message = str(stopped.value)
    assert f"HTTP 422: Unexpected fields in the request: {{'{field}'}}" in message
    assert f"refuses the field '{field}'" in message and flag in message


def test_refusals_that_differ_per_sample_do_not_stop_the_run(server, fake, api_key, tmp_path):
    def too_long_sometimes(body, number):
        if number % 2:
            return fake.Fault(status=400, message=f"prompt of {100 + number} tokens is too long")
        return None

    server.plan = too_long_sometimes
    summary = run(chat(server.url), requests(12), tmp_path / "p.jsonl", concurrency=1)
    assert (summary.answered, summary.errors) == (12, 6)  # no stop: each sample its own answer


def test_refusals_between_answers_do_not_stop_the_run(server, fake, api_key, tmp_path):
    server.plan = lambda body, number: (
        fake.Fault(status=404, message="no such image") if number % 3 else None
    )
    summary = run(chat(server.url), requests(12), tmp_path / "p.jsonl", concurrency=1)
    assert (summary.answered, summary.errors) == (12, 8)


def test_a_reply_that_trickles_in_past_the_timeout_is_retried_not_accepted(
    server, fake, api_key, tmp_path
):
    # The first attempt's body drips over 3 s; --timeout 0.5 bounds the whole attempt, so it
    # is cut and asked again instead of being accepted seconds late.
    server.plan = fake.faults_by_marker({"<s0>": [fake.Fault(drip=3.0)]})
    out = tmp_path / "p.jsonl"
    summary = run(chat(server.url, timeout=0.5), requests(2), out)
    by_id = {line["id"]: line for line in lines(out)}
    assert summary.errors == 0 and summary.retries == 1
    assert by_id["s0"]["meta"] == {"attempts": 2} and by_id["s0"]["response"] == "echo: <s0> is it?"
    assert server.prompts["<s0> is it?"] == 2


@pytest.mark.parametrize("header", [
    {"Retry-After": "nan"}, {"retry-after-ms": "nan"}, {"Retry-After": "inf"},
    {"retry-after-ms": "-inf", "Retry-After": "NaN"},
])  # fmt: skip
def test_a_retry_after_that_is_no_finite_number_is_read_as_none(
    server, fake, api_key, tmp_path, caplog, header
):
    server.plan = fake.faults_by_marker(
        {f"<s{i}>": [fake.Fault(status=429, headers=header)] for i in range(3)}
    )
    caplog.set_level("INFO", logger="gavel")
    summary = run(chat(server.url), requests(3), tmp_path / "p.jsonl")
    assert summary.errors == 0 and summary.rate_limited == 3
    retries = [r.getMessage() for r in caplog.records if "; retry " in r.getMessage()]
    assert len(retries) == 3 and not any("nan" in m or "inf" in m for m in retries)
