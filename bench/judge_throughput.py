"""Throughput of the LLM judge against a loopback server with a fixed latency.

With latency L and concurrency C an ideal client completes C / L requests per second. This
prints the judge's achieved rate as a ratio to that ideal, and, measured in the same run
against the same server, the bare runner's ratio, so the judge's own overhead (building the
protocol's messages, validating every reply, reading the replies back) shows as the difference.

    python bench/judge_throughput.py [--latency 0.2] [--concurrency 64] [--requests 3000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

import openai  # noqa: F401  (imported before timing: its import is not the judge's cost)

from gavel.judge.items import JudgeItem
from gavel.judge.llm import LLMJudge
from gavel.models.openai_compat import OpenAIChatModel
from gavel.requests import Request
from gavel.runner.async_runner import run_async
from loopback import loopback_server

REPLY = '{"score": 4, "reason": "mostly consistent"}'


def items(n: int) -> list[JudgeItem]:
    return [
        JudgeItem(
            id=f"s{i}",
            column="Color" if i % 4 else "No hall.",
            hallucinated=bool(i % 4),
            verdict=True,
            prediction=f"Hallucination: yes. The cup number {i} is red, not blue.",
            ground_truth=f"The caption says cup {i} is blue, but it is red." if i % 4 else "",
        )
        for i in range(n)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--requests", type=int, default=3000)
    args = parser.parse_args()

    ideal = args.concurrency / args.latency
    os.environ.setdefault("GAVEL_BENCH_KEY", "sk-bench")
    with loopback_server(args.latency, REPLY) as url, tempfile.TemporaryDirectory() as folder:

        def model() -> OpenAIChatModel:
            return OpenAIChatModel("bench-judge", base_urls=[url], api_key_env="GAVEL_BENCH_KEY")

        judge = LLMJudge(
            model(),
            concurrency=args.concurrency,
            progress=False,
            replies=Path(folder) / "replies.jsonl",
        )
        wall = time.perf_counter()
        cpu = time.process_time()
        judged = judge.judge(items(args.requests))
        judge_wall = time.perf_counter() - wall
        judge_cpu = time.process_time() - cpu

        requests = (
            Request(sample_id=f"r{i}", task="bench", prompt=f"question {i}")
            for i in range(args.requests)
        )
        wall = time.perf_counter()
        asyncio.run(
            run_async(
                model(), requests, Path(folder) / "plain.jsonl",
                concurrency=args.concurrency, progress=False,
            )
        )  # fmt: skip
        runner_wall = time.perf_counter() - wall

    ok = sum(j.status == "ok" for j in judged)
    judge_rate = args.requests / judge_wall
    runner_rate = args.requests / runner_wall
    print(
        f"judge : {args.requests} items ({ok} scored), L={args.latency} s, C={args.concurrency}: "
        f"{judge_rate:.1f}/s of an ideal {ideal:.1f} -> ratio {judge_rate / ideal:.3f}; "
        f"CPU {judge_cpu / args.requests * 1000:.2f} ms per item"
    )
    print(
        f"runner: same server, plain requests: {runner_rate:.1f}/s -> ratio "
        f"{runner_rate / ideal:.3f}; judge/runner {judge_rate / runner_rate:.3f}"
    )


if __name__ == "__main__":
    main()
