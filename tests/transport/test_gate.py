"""Rate limits against a real rate-limited server on loopback (a sliding window with 429 and
``Retry-After``, with only OpenAI's ``x-ratelimit-*`` headers, or with a bare 429), asserted
from the server's own counters.

The windows are seconds where a provider's are a minute, so that a test takes seconds; the
shapes are the same. The rate achieved is how full the server kept its window on average
(``SlidingWindowLimit.fill``): a steady client's rate over the limit. Every sample is answered
exactly once; the rate thresholds are below what ``bench/rate_limits.py`` measures, with room
for a slow, shared machine.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import time
from pathlib import Path

import pytest

from gavel.errors import GavelError
from gavel.models.openai_compat import OpenAIChatModel
from gavel.requests import Request
from gavel.runner.async_runner import run_async
from gavel.transport.retry import RetryPolicy

pytest.importorskip("openai")

FAST = RetryPolicy(retries=4, base_delay=0.01, max_delay=0.05)


def requests(n: int, words: int = 2) -> list[Request]:
    return [
        Request(sample_id=f"s{i}", task="t", prompt=f"<s{i}> " + "word " * words) for i in range(n)
    ]


def chat(server, **options) -> OpenAIChatModel:
    return OpenAIChatModel(
        "test-model", base_urls=[server.url], api_key_env="GAVEL_TEST_KEY", timeout=10, **options
    )


def run(model, reqs, out: Path, concurrency: int):
    return asyncio.run(
        run_async(model, reqs, out, concurrency=concurrency, progress=False, retries=FAST)
    )


def each_once(out: Path, n: int) -> list[dict]:
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(line["id"] for line in lines) == sorted(f"s{i}" for i in range(n))
    assert not [line for line in lines if line.get("error")], "a 429 is never an error line"
    for line in lines:
        assert line["response"].startswith(f"echo: <{line['id']}> ")
    return lines


def test_a_hidden_request_limit_is_found_from_its_429s(server, fake, api_key, tmp_path):
    # 60 requests a second (120 in any 2 s), replies in 0.1 s: about 6 in flight fit, and
    # gavel is told nothing but --concurrency 8.
    server.latency = 0.1
    server.limit = fake.SlidingWindowLimit(requests=120, window=2.0)
    model = chat(server)
    summary = run(model, requests(480), tmp_path / "pred.jsonl", concurrency=8)
    each_once(tmp_path / "pred.jsonl", 480)
    used, refused = server.limit.fill()[0], server.limit.refused_share
    assert used >= 0.85, f"{used:.0%} of the allowed 60 requests/s"
    assert refused < 0.05, f"{refused:.1%} of the requests sent were refused"
    assert len(server.limit.accepted) == 480 == server.hits - len(server.limit.refused)
    assert summary.rate_limited == len(server.limit.refused) == model.rate_control.refusals
    assert model.rate_control.describe().startswith("limit ")
    assert model.rate_control.limit() <= 8


def test_a_told_request_budget_is_kept_without_429s(server, fake, api_key, tmp_path):
    server.latency = 0.1
    server.limit = fake.SlidingWindowLimit(requests=120, window=2.0)
    model = chat(server, rpm=3600)  # the same 60 a second, as a provider states it
    run(model, requests(240), tmp_path / "pred.jsonl", concurrency=16)
    each_once(tmp_path / "pred.jsonl", 240)
    used, refused = server.limit.fill()[0], server.limit.refused_share
    assert used >= 0.85, f"{used:.0%} of the allowed 60 requests/s"
    assert refused < 0.05, f"{refused:.1%} refused"
    assert len(server.limit.refused) <= 2  # paced below the limit: none, or a stray one


def test_a_told_token_budget_is_kept_and_corrected_by_the_reported_usage(
    server, fake, api_key, tmp_path
):
    # 1,200 tokens a second; each request is 25 tokens as this server counts them (18 words
    # and a 7-token answer), which gavel's text estimate does not know until the replies say.
    server.latency = 0.1
    server.limit = fake.SlidingWindowLimit(tokens=2400, window=2.0)
    model = chat(server, tpm=72_000, max_tokens=64)
    summary = run(model, requests(200, words=17), tmp_path / "pred.jsonl", concurrency=16)
    lines = each_once(tmp_path / "pred.jsonl", 200)
    assert {line["prompt_tokens"] + line["completion_tokens"] for line in lines} == {25}
    used = server.limit.fill()[1]
    assert used >= 0.85, f"{used:.0%} of the allowed 1,200 tokens/s"
    assert server.limit.refused_share < 0.05
    meter = model.rate_control.gates[0].meter  # learned from the usage: 18 of its estimate
    estimate = meter.prompt_estimate({"messages": [{"content": requests(1, words=17)[0].prompt}]})
    assert meter.completion == pytest.approx(7) and meter.scale == pytest.approx(
        18 / estimate, rel=0.1
    )
    assert summary.prompt_tokens == 200 * 18


def test_a_hidden_token_limit_is_found_at_a_rate_between_whole_requests_in_flight(
    server, fake, api_key, tmp_path
):
    # 1,200 tokens a second, 25 a request, replies in 0.1 s: about 4.8 requests in flight fit,
    # between two whole numbers (4 leave a sixth unused, 5 step over it); the adaptive pace
    # keeps 4.8 on average. gavel is told nothing but --concurrency 8.
    server.latency = 0.1
    server.limit = fake.SlidingWindowLimit(tokens=2400, window=2.0)
    model = chat(server)
    summary = run(model, requests(400, words=17), tmp_path / "pred.jsonl", concurrency=8)
    each_once(tmp_path / "pred.jsonl", 400)
    used, refused = server.limit.fill()[1], server.limit.refused_share
    assert used >= 0.85, f"{used:.0%} of the allowed 1,200 tokens/s"
    assert refused < 0.05, f"{refused:.1%} of the requests sent were refused"
    assert len(server.limit.accepted) == 400 == server.hits - len(server.limit.refused)
    assert summary.rate_limited == len(server.limit.refused) > 0  # it was found by its 429s
    gate = model.rate_control.gates[0]
    assert gate.limit.decreases >= 1
    assert gate.pace == pytest.approx(gate.limit.value / gate.latency)  # paced since a 429
    assert 0.1 <= gate.latency < 0.5  # the server's 0.1 s, and the client's own time
    assert f" req/s  429s {summary.rate_limited}" in model.rate_control.describe()


HIDDEN = pytest.mark.parametrize(("limit", "words", "binding"), [
    ({"requests": 120}, 2, 0),  # 60 requests a second
    ({"tokens": 2400}, 17, 1),  # 1,200 tokens a second, 25 a request: 48 requests a second
])  # fmt: skip


def hidden_limit(
    server, fake, tmp_path, limit, words, binding, headers, used_at_least, refused_below
):
    """400 samples against a hidden limit whose replies say ``headers`` of it, gavel told
    nothing but --concurrency 8 (80 requests a second at 0.1 s a reply); the model and the
    run's summary, once the server's counters are checked."""
    server.latency = 0.1
    server.limit = fake.SlidingWindowLimit(**limit, window=2.0, headers=headers)
    model = chat(server)
    summary = run(model, requests(400, words=words), tmp_path / "pred.jsonl", concurrency=8)
    each_once(tmp_path / "pred.jsonl", 400)
    used, refused = server.limit.fill()[binding], server.limit.refused_share
    assert used >= used_at_least, f"{used:.0%} of the allowed rate"
    assert refused < refused_below, f"{refused:.1%} of the requests sent were refused"
    assert len(server.limit.accepted) == 400 == server.hits - len(server.limit.refused)
    assert summary.rate_limited == len(server.limit.refused) == model.rate_control.refusals
    return model, summary


@HIDDEN
def test_the_rate_headers_alone_pace_a_hidden_limit(
    server, fake, api_key, tmp_path, limit, words, binding
):
    # No Retry-After: only OpenAI's x-ratelimit-remaining-* and -reset-* on every reply.
    model, _ = hidden_limit(server, fake, tmp_path, limit, words, binding, "ratelimit", 0.8, 0.05)
    gate = model.rate_control.gates[0]
    assert gate.budget.active and gate.limit.decreases == 0  # paced by what the server said


@HIDDEN
def test_a_bare_429_pauses_and_probes_instead_of_cutting_the_limit_on_every_refusal(
    server, fake, api_key, tmp_path, limit, words, binding
):
    # A 429 and nothing else: no Retry-After, no rate header. A full window refuses every
    # request until what filled it leaves, so refusals come in spells; the adaptive limit
    # shrinks once a spell, and the endpoint waits (doubling) instead of being hammered.
    model, summary = hidden_limit(server, fake, tmp_path, limit, words, binding, "none", 0.6, 0.12)
    gate = model.rate_control.gates[0]
    assert not gate.budget.active and summary.rate_limited > 0
    assert 1 <= gate.limit.decreases < summary.rate_limited  # not once per refusal


def test_retry_after_as_an_http_date_pauses_the_whole_endpoint(server, fake, api_key, tmp_path):
    refusals = []

    def plan(body, number):  # s0's first try: "not before" 2 to 3 s from now (whole seconds)
        if "<s0>" not in fake.prompt_text(body) or refusals:
            return fake.Fault(delay=0.3)  # the others take a while, so the 429 comes first
        refusals.append(email.utils.formatdate(time.time() + 3, usegmt=True))
        return fake.Fault(status=429, headers={"Retry-After": refusals[0]})

    server.plan = plan
    model = chat(server)
    summary = run(model, requests(8), tmp_path / "pred.jsonl", concurrency=4)
    each_once(tmp_path / "pred.jsonl", 8)
    arrivals = sorted(when for when, _, _ in server.received)
    refused_at = arrivals[0]  # s0..s3 arrive together; s0's 429 leaves at once
    later = [when for when in arrivals if when > arrivals[0] + 0.1]
    assert len(later) == 8 + 1 - 4
    # Not only the refused request waited: nothing at all was sent until the date had passed.
    assert min(later) >= refused_at + 1.5, f"sent {min(later) - refused_at:.2f} s after the 429"
    assert summary.rate_limited == 1 and summary.errors == 0
    assert model.rate_control.gates[0].limit.decreases == 1  # shrunk once, then grown back


def test_a_429_does_not_spend_retries_while_other_requests_are_answered(
    server, fake, api_key, tmp_path
):
    server.latency = 0.05
    server.plan = fake.faults_by_marker({"<s0>": [fake.Fault(status=429)] * 10})  # > 4 retries
    summary = run(chat(server), requests(160), tmp_path / "pred.jsonl", concurrency=4)
    lines = each_once(tmp_path / "pred.jsonl", 160)
    assert server.prompts["<s0> word word "] == 11
    assert {line["id"]: line["meta"]["attempts"] for line in lines if "meta" in line} == {"s0": 11}
    assert summary.rate_limited == 10


def test_a_server_that_answers_nothing_but_429_still_ends(server, fake, api_key, tmp_path):
    server.plan = lambda body, number: fake.Fault(status=429, message="You exceeded your quota")
    summary = run(chat(server), requests(3), tmp_path / "pred.jsonl", concurrency=3)
    lines = [json.loads(line) for line in (tmp_path / "pred.jsonl").read_text().splitlines()]
    assert len(lines) == 3 and all("HTTP 429: You exceeded your quota" in x["error"] for x in lines)
    assert server.hits == 3 * (FAST.retries + 1)  # its retries, no more: no answers came between
    assert summary.errors == 3


def test_what_the_progress_bar_shows():
    from gavel.transport.gate import RateControl

    control = RateControl(["http://a/v1", "http://b/v1"], rpm=600)
    control.set_ceiling(16)
    assert control.describe() == "limit 16/16"  # two endpoints, but never above --concurrency
    first, second = control.gates
    first.limit.refused(first.limit.epoch)  # 16 -> 11.2
    second.limit.refused(second.limit.epoch)
    second.limit.refused(second.limit.epoch)  # 16 -> 11.2 -> 7.84
    first.paused_until = time.monotonic() + 2.4
    assert control.describe() == "limit 16/16  429s 3  paused 2 s"  # 11 + 7, at most 16
    second.limit.refused(second.limit.epoch)  # 5.5
    assert control.describe().startswith("limit 16/16")
    first.limit.refused(first.limit.epoch)  # 7.84
    assert control.describe().startswith("limit 12/16  429s 5")
    first.latency = 0.25  # its limit now paces, at 7.84 / 0.25 s; 7.84 + 5.49 in all
    assert control.describe().startswith("limit 13.3/16  31 req/s  429s 5")
    assert control.settings() == {"rpm": 600, "tpm": None}
    with pytest.raises(GavelError, match="rpm must be a positive number"):
        RateControl(["http://a/v1"], rpm=0)


def test_a_server_that_generates_one_request_at_a_time_gets_a_lower_limit(
    server, api_key, tmp_path
):
    # One request at a time, 0.05 s each: with 16 in flight every reply would wait for 15
    # others (0.8 s) and come no sooner. The limit comes down to what keeps the server busy.
    server.latency, server.serial = 0.05, True
    model = chat(server)
    summary = run(model, requests(200), tmp_path / "pred.jsonl", concurrency=16)
    each_once(tmp_path / "pred.jsonl", 200)
    assert server.hits == 200 and summary.retries == 0
    generated = sorted(server.generated)
    queued = [start - arrival for arrival, start, _ in generated[100:]]  # the second half
    # Held at 16, each would wait for 15 others (0.75 s); thresholds leave room for a busy box.
    median = sorted(queued)[len(queued) // 2]
    assert median < 5 * 0.05 and max(queued) < 10 * 0.05, f"waited {median:.2f}-{max(queued):.2f} s"
    # Still as fast as the server goes: it was generating most of the time.
    busy = sum(end - start for _, start, end in generated)
    assert busy / (generated[-1][2] - generated[0][0]) > 0.75
    gate = model.rate_control.gates[0]
    assert gate.limit.queue_cuts >= 1 and gate.limit.current <= 5, gate.limit.value
    assert gate.pace is None  # a lower limit, not a pace
    bar = model.rate_control.describe()
    assert bar.startswith(f"limit {gate.limit.current}/16  (the server queues)"), bar


def test_a_server_that_answers_many_at_once_keeps_its_limit(server, api_key, tmp_path):
    server.latency = 0.05  # every request answered in parallel, each in 0.05 s
    model = chat(server)
    run(model, requests(200), tmp_path / "pred.jsonl", concurrency=16)
    each_once(tmp_path / "pred.jsonl", 200)
    assert model.rate_control.gates[0].limit.queue_cuts == 0
    assert model.rate_control.describe() == "limit 16/16"


def test_a_serialized_server_slower_than_the_timeout_at_full_concurrency_answers_every_sample(
    server, api_key, tmp_path
):
    # 0.1 s a request, one at a time, 16 in flight: 1.6 s a reply against a 1 s timeout. Held
    # at 16, every request times out, the server keeps generating what was given up on, and
    # the run stops on its failure budget. A timeout with nothing sent later answered first is
    # a queue: the limit comes down, and only requests sent in the first seconds are late.
    server.latency, server.serial = 0.1, True
    model = OpenAIChatModel(
        "test-model", base_urls=[server.url], api_key_env="GAVEL_TEST_KEY", timeout=1.0
    )
    policy = RetryPolicy(retries=6, base_delay=0.05, max_delay=0.5)
    summary = asyncio.run(
        run_async(
            model,
            requests(100),
            tmp_path / "pred.jsonl",
            concurrency=16,
            progress=False,
            retries=policy,
        )
    )
    each_once(tmp_path / "pred.jsonl", 100)
    assert summary.errors == 0
    generated = sorted(server.generated)
    start, end = generated[0][0], generated[-1][2]
    late = [arrival - start for arrival, _, done in generated if done - arrival > 1.0]
    assert late and max(late) < (end - start) / 2, f"given up on, by arrival: {late}"
    # Held at 16 every request would be late; a machine busy with other work slows this
    # process's reading too, so a few more than on an idle one (under 40) are given up on.
    assert len(late) < 64 and server.hits == 100 + summary.retries  # a retry each time-out
    assert model.rate_control.gates[0].limit.current <= 4


@pytest.mark.parametrize("reset", ["1764633600", "99999h", "0s", "-1s", "soon"])
def test_an_exhausted_limit_with_an_odd_reset_never_holds_the_run(
    server, fake, api_key, tmp_path, monkeypatch, reset
):
    # Every reply: nothing left, and a reset that is a Unix time, nonsense or zero. gavel
    # believes a reset up to MAX_RESET (10 minutes; 1 s here), then sends and asks again.
    from gavel.transport import rate_headers

    monkeypatch.setattr(rate_headers, "MAX_RESET", 1.0)
    headers = {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": reset}

    def plan(body, number):
        answer = fake._completion(body, number)
        return fake.Fault(body=json.dumps(answer).encode(), headers=headers)

    server.plan = plan
    started = time.monotonic()
    run(chat(server), requests(4), tmp_path / "pred.jsonl", concurrency=2)
    took = time.monotonic() - started
    each_once(tmp_path / "pred.jsonl", 4)
    assert server.hits == 4 and took < 3 * 1.05 + 2.0, f"{took:.1f} s for 4 requests"
