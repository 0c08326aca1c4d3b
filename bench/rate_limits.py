"""Rate limits: how close gavel runs to a server's limit, and how often it is refused.

A loopback server (tests/runner/openai_server.py) enforces a sliding-window limit on requests
or tokens with 429 + Retry-After, or with only OpenAI's x-ratelimit-remaining/-reset headers
on every reply, or with a bare 429 and no rate header at all. For each case, side by side in one run, this prints the rate
achieved over the rate allowed (how full the server kept its window on average, from one
window after the start to the last acceptance: a steady client's rate over the limit, and
never above 1 however requests bunch) and the share of gavel's requests it refused, from the
server's own counters. Windows are seconds where a provider's are a minute, so that the run is
short.

Then a server that generates one request at a time, 16 requests in flight: how long requests
wait in its queue, with the in-flight limit adapting to it and held at --concurrency.

Then what the gate costs where there is no limit: the same run against an unlimited server (in
a subprocess, so its CPU is not counted) with every request through the gate, and with the
gate bypassed, side by side.

    python bench/rate_limits.py [--requests 600] [--window 2] [--overhead-requests 3000]
                                [--serial-requests 300] [--only "hidden TPM"]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import openai  # noqa: F401  (imported before timing: its import is not the runner's cost)

from gavel.models.openai_compat import OpenAIChatModel
from gavel.requests import Request
from gavel.runner.async_runner import run_async
from gavel.transport.gate import EndpointGate
from gavel.transport.queueing import QueueWatch
from loopback import loopback_server

SERVER = Path(__file__).resolve().parents[1] / "tests" / "runner" / "openai_server.py"


def load_server_module():
    spec = importlib.util.spec_from_file_location("openai_server", SERVER)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class Case:
    name: str
    latency: float
    concurrency: int
    #: Requests or tokens per second the server allows (the other is None).
    requests_per_s: float | None = None
    tokens_per_s: float | None = None
    #: What gavel is told (per minute), if anything.
    rpm: float | None = None
    tpm: float | None = None
    words: int = 2
    #: What the server's replies say about the limit (openai_server.HEADER_MODES).
    headers: str = "retry-after"


CASES = [
    Case("hidden RPM, told nothing", 0.1, 8, requests_per_s=60),
    Case("same, told --rpm 3600", 0.1, 16, requests_per_s=60, rpm=3600),
    Case("hidden RPM, fast replies", 0.02, 8, requests_per_s=60),
    Case("hidden TPM, told nothing", 0.1, 8, tokens_per_s=1200, words=17),
    Case("same, told --tpm 72000", 0.1, 16, tokens_per_s=1200, tpm=72000, words=17),
    Case("RPM and TPM, told both", 0.2, 32, requests_per_s=60, tokens_per_s=1200,
         rpm=3600, tpm=72000, words=17),
    Case("hidden RPM, x-ratelimit only", 0.1, 8, requests_per_s=60, headers="ratelimit"),
    Case("hidden TPM, x-ratelimit only", 0.1, 8, tokens_per_s=1200, words=17,
         headers="ratelimit"),
    Case("RPM+TPM, x-ratelimit only", 0.2, 32, requests_per_s=60, tokens_per_s=1200, words=17,
         headers="ratelimit"),
    Case("hidden RPM, no rate headers", 0.1, 8, requests_per_s=60, headers="none"),
    Case("hidden TPM, no rate headers", 0.1, 8, tokens_per_s=1200, words=17, headers="none"),
    Case("RPM+TPM, no rate headers", 0.2, 32, requests_per_s=60, tokens_per_s=1200, words=17,
         headers="none"),
]  # fmt: skip


def run_case(fake, case: Case, count: int, window: float, folder: Path) -> str:
    with fake.FakeOpenAIServer(latency=case.latency, record=False) as server:
        limit = server.limit = fake.SlidingWindowLimit(
            requests=None if case.requests_per_s is None else round(case.requests_per_s * window),
            tokens=None if case.tokens_per_s is None else round(case.tokens_per_s * window),
            window=window,
            headers=case.headers,
        )
        model = OpenAIChatModel("bench-model", base_urls=[server.url],
                                api_key_env="GAVEL_BENCH_KEY", rpm=case.rpm, tpm=case.tpm,
                                model_check=False)  # fmt: skip
        requests = [
            Request(sample_id=f"r{i}", task="bench", prompt=f"<r{i}> " + "word " * case.words)
            for i in range(count)
        ]
        out = folder / f"{len(os.listdir(folder))}.jsonl"
        wall = time.perf_counter()
        summary = asyncio.run(
            run_async(model, requests, out, concurrency=case.concurrency, progress=False)
        )
        wall = time.perf_counter() - wall
    used = max(share for share in limit.fill() if share is not None)  # the binding limit
    refused = limit.refused_share
    lines = out.read_bytes().count(b"\n")
    paces = [gate.pace for gate in model.rate_control.gates if gate.pace is not None]
    pace = f"{sum(paces):.0f}/s" if paces else "-"  # the adaptive pace at the end, if any
    return (
        f"{case.name:<28} {case.latency:>5.2f} {case.concurrency:>4} "
        f"{used:>9.2f} {refused:>7.1%} {len(limit.refused):>5} "
        f"{model.rate_control.describe().split('  ')[0]:>12} {pace:>6} {wall:>6.1f}"
        f"  {'ok' if lines == count and summary.errors == 0 else 'LINES OR ERRORS WRONG'}"
    )


async def _bypass(self, body, post):
    return (await post())[0]  # the reply, without its headers


def overhead(count: int, folder: Path, latency: float = 0.05, concurrency: int = 32) -> None:
    """Requests/s and CPU per request with and without the gate, against no limit."""
    results = {}
    with loopback_server(latency) as url:
        for name in ("through the gate", "gate bypassed", "through the gate again"):
            model = OpenAIChatModel(
                "bench-model", base_urls=[url], api_key_env="GAVEL_BENCH_KEY", model_check=False
            )
            requests = [Request(sample_id=f"o{i}", task="bench", prompt=f"question {i}")
                        for i in range(count)]  # fmt: skip
            send = EndpointGate.send
            if name == "gate bypassed":
                EndpointGate.send = _bypass
            try:
                cpu, wall = time.process_time(), time.perf_counter()
                asyncio.run(run_async(model, requests, folder / f"{name}.jsonl",
                                      concurrency=concurrency, progress=False))  # fmt: skip
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            finally:
                EndpointGate.send = send
            results[name] = (count / wall, cpu / count * 1000)
            print(f"{name:<24} {count / wall:>8.1f} requests/s {cpu / count * 1000:>6.2f} ms CPU "
                  f"per request (ideal {concurrency / latency:.0f}/s)", flush=True)  # fmt: skip
    gate = [results["through the gate"], results["through the gate again"]]
    bypass = results["gate bypassed"]
    print(
        f"gate / bypassed: throughput {min(g[0] for g in gate) / bypass[0]:.2f}-"
        f"{max(g[0] for g in gate) / bypass[0]:.2f}, CPU per request "
        f"{min(g[1] for g in gate) / bypass[1]:.2f}-{max(g[1] for g in gate) / bypass[1]:.2f}"
    )


def serialized(fake, count: int, folder: Path, service: float = 0.05) -> None:
    """A server generating one request at a time, 16 sent at once: the time each request
    waited in its queue and its throughput, with the in-flight limit adapting and with it held
    at --concurrency (the queue check bypassed), side by side."""
    for name in ("limit adapting", "queue check bypassed"):
        reply = QueueWatch.reply
        if name == "queue check bypassed":
            QueueWatch.reply = lambda self, *args, **kwargs: None
        try:
            with fake.FakeOpenAIServer(latency=service, record=False) as server:
                server.serial = True
                model = OpenAIChatModel("bench-model", base_urls=[server.url],
                                        api_key_env="GAVEL_BENCH_KEY", model_check=False)  # fmt: skip
                requests = [Request(sample_id=f"q{i}", task="bench", prompt=f"question {i}")
                            for i in range(count)]  # fmt: skip
                wall = time.perf_counter()
                asyncio.run(run_async(model, requests, folder / f"{name}.jsonl", concurrency=16,
                                      progress=False))  # fmt: skip
                wall = time.perf_counter() - wall
        finally:
            QueueWatch.reply = reply
        waits = sorted(start - arrival for arrival, start, _ in server.generated[count // 2 :])
        print(f"{name:<22} {count / wall:>6.1f} requests/s (the server's most: "
              f"{1 / service:.0f}/s), queue wait median {waits[len(waits) // 2]:.2f} s, "
              f"max {waits[-1]:.2f} s (second half), "
              f"{model.rate_control.describe()}", flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument("--window", type=float, default=2.0, help="the server's window, seconds")
    parser.add_argument("--overhead-requests", type=int, default=3000)
    parser.add_argument("--serial-requests", type=int, default=300)
    parser.add_argument("--only", default="", help="run only the cases whose name has this")
    args = parser.parse_args()
    os.environ.setdefault("GAVEL_BENCH_KEY", "sk-bench")
    fake = load_server_module()
    print(f"{args.requests} requests per case; server window {args.window:g} s")
    print(f"{'case':<28} {'lat s':>5} {'conc':>4} {'achieved':>9} {'429s':>7} {'n':>5} "
          f"{'final limit':>12} {'pace':>6} {'wall s':>6}")  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        for case in [case for case in CASES if args.only in case.name]:
            print(run_case(fake, case, args.requests, args.window, Path(folder)), flush=True)
    print("achieved = average fill of the server's window (rate achieved / rate allowed, of "
          "the binding limit); 429s = share of the requests sent that were refused")  # fmt: skip
    if args.serial_requests:
        print(f"\nserialized server, {args.serial_requests} requests of 0.05 s, concurrency 16:")
        with tempfile.TemporaryDirectory() as folder:
            serialized(fake, args.serial_requests, Path(folder))
    if args.overhead_requests:
        print(f"\nno limit, {args.overhead_requests} requests, 0.05 s replies, concurrency 32:")
        with tempfile.TemporaryDirectory() as folder:
            overhead(args.overhead_requests, Path(folder))


if __name__ == "__main__":
    main()
