"""Throughput of the async runner against a loopback server with a fixed latency.

With latency L and concurrency C an ideal runner completes C / L requests per second; this
prints the achieved rate divided by that (the goal is at least 0.9) and the runner's CPU time
per request (the client process only: the server runs in a subprocess).

    python bench/runner_throughput.py [--latency 0.2] [--concurrency 64] [--requests 5000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

import openai  # noqa: F401  (imported before timing: its import is not the runner's cost)

from gavel.models.openai_compat import OpenAIChatModel
from gavel.requests import Request
from gavel.runner.async_runner import run_async
from loopback import loopback_server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--requests", type=int, default=5000)
    args = parser.parse_args()

    os.environ.setdefault("GAVEL_BENCH_KEY", "sk-bench")
    with loopback_server(args.latency) as url, tempfile.TemporaryDirectory() as folder:
        model = OpenAIChatModel("bench-model", base_urls=[url], api_key_env="GAVEL_BENCH_KEY")
        requests = (
            Request(sample_id=f"r{i}", task="bench", prompt=f"question number {i}")
            for i in range(args.requests)
        )
        cpu = time.process_time()
        wall = time.perf_counter()
        summary = asyncio.run(
            run_async(
                model,
                requests,
                Path(folder) / "pred.jsonl",
                concurrency=args.concurrency,
                progress=False,
            )
        )
        wall = time.perf_counter() - wall
        cpu = time.process_time() - cpu

    ideal = args.concurrency / args.latency
    rate = summary.answered / wall
    print(
        f"{summary.answered} requests, L={args.latency} s, C={args.concurrency}: "
        f"{rate:.1f} requests/s of an ideal {ideal:.1f} -> ratio {rate / ideal:.3f} (goal >= 0.9)"
    )
    print(
        f"runner CPU {cpu:.2f} s = {cpu / summary.answered * 1000:.2f} ms per request; "
        f"{summary.errors} errors, {summary.retries} retries, wall {wall:.2f} s"
    )


if __name__ == "__main__":
    main()
