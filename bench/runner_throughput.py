"""Throughput and client CPU of the async runner against a loopback server with a fixed latency.

With latency L and concurrency C an ideal client answers N requests in N / C * L seconds. For
each concurrency this runs, interleaved and for several rounds, the runner alone (text-only
requests: what the runner itself costs) and the same number of GAVEL-like image requests
(448x512 PNG photos of about 450 KB, ``--share`` captions per image, adjacent as in GAVEL's
data), and prints for each: the ratio of the ideal wall time to the measured one (goal: at
least 0.95; 0.85 with ``--load``), the steady ratio (the same run with a quarter of the
requests is timed too: the extra requests over the extra time, against C / L, which leaves
out what a run costs once, its start and its first burst of C requests on new connections),
and the client's CPU per request (the server runs in its own process: bench_server.py). The
image requests' CPU is also given as a ratio to the runner alone measured in the same round.

``--load`` starts one busy process per core for the whole benchmark, as another job on the
machine would; the load average is printed with every run.

    python bench/runner_throughput.py [--latency 0.2] [--concurrency 64 256] [--rounds 2]
        [--per-worker 16] [--images 400] [--share 4] [--load]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp  # noqa: F401  (imported before timing: its import is not the runner's cost)

from gavel.models.openai_compat import OpenAIChatModel
from gavel.requests import Request
from gavel.runner.async_runner import run_async
from loopback import loopback_server
from peer_data import photo_pngs

PROMPT = (
    "Check the caption against the image: {caption} Answer 'Hallucination: yes' or "
    "'Hallucination: no', explain, and give the box of the error as JSON."
)


@contextlib.contextmanager
def cpu_load(enabled: bool) -> Iterator[None]:
    """One busy process per core while the block runs (none when not ``enabled``)."""
    burners = []
    if enabled:
        burners = [
            subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(os.cpu_count() or 1)
        ]
        time.sleep(1.0)  # let the load average notice them
    try:
        yield
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()


def requests(n: int, images: list[Path] | None, share: int) -> list[Request]:
    made = []
    for i in range(n):
        attached = () if images is None else (images[(i // share) % len(images)],)
        prompt = PROMPT.format(caption=f"A photo number {i} of an astronaut in a blue suit.")
        made.append(Request(sample_id=f"r{i}", task="gavel", prompt=prompt, images=attached))
    return made


def one_run(url: str, folder: Path, batch: list[Request], concurrency: int) -> tuple[float, float]:
    """(wall seconds, client CPU seconds) of one run with a fresh model."""
    model = OpenAIChatModel(
        "bench-model", base_urls=[url], api_key_env="GAVEL_BENCH_KEY", model_check=False
    )
    out = folder / f"pred-{time.monotonic_ns()}.jsonl"
    cpu, wall = time.process_time(), time.perf_counter()
    summary = asyncio.run(run_async(model, iter(batch), out, concurrency=concurrency,
                                    progress=False))  # fmt: skip
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    out.unlink()
    if summary.answered != len(batch) or summary.errors:
        raise SystemExit(f"the run went wrong: {summary.describe()}")
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--per-worker", type=int, default=16, help="requests = this x C")
    parser.add_argument("--images", type=int, default=400, help="distinct image files")
    parser.add_argument("--share", type=int, default=4, help="captions per image")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--load", action="store_true", help="one busy process per core")
    args = parser.parse_args()

    os.environ.setdefault("GAVEL_BENCH_KEY", "sk-bench")
    found: dict[tuple[int, str], list[tuple[float, float]]] = {}
    steadies: dict[tuple[int, str], list[float]] = {}
    with (
        tempfile.TemporaryDirectory() as name,
        loopback_server(args.latency, lean=True) as url,
        cpu_load(args.load),
    ):
        folder = Path(name)
        photos = photo_pngs(folder / "images", args.images)
        print(f"{os.cpu_count()} CPUs; L = {args.latency} s; {args.images} PNG images of about "
              f"{photos[0].stat().st_size // 1000} KB, {args.share} captions each"
              + ("; one busy process per core" if args.load else ""))  # fmt: skip
        for round_number in range(1, args.rounds + 1):
            for concurrency in args.concurrency:
                n = args.per_worker * concurrency
                ideal = n / concurrency * args.latency
                for kind, images in (("runner alone", None), ("images", photos)):
                    wall, cpu = one_run(url, folder, requests(n, images, args.share), concurrency)
                    found.setdefault((concurrency, kind), []).append((wall, cpu))
                    short, _ = one_run(url, folder, requests(n // 4, images, args.share),
                                       concurrency)  # fmt: skip
                    extra = wall - short  # noise can leave nothing between two tiny runs
                    steady = (
                        (n - n // 4) / concurrency * args.latency / extra if extra > 0 else math.nan
                    )
                    steadies.setdefault((concurrency, kind), []).append(steady)
                    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
                    print(f"round {round_number}  C={concurrency:<4} {kind:<13} N={n:<5} "
                          f"wall {wall:6.2f} s  ratio {ideal / wall:.3f}  steady {steady:.3f}  "
                          f"CPU {cpu / n * 1000:5.2f} ms/request  (load {load})")  # fmt: skip

    print("\nmedians over the rounds:")
    goal = 0.85 if args.load else 0.95
    for concurrency in args.concurrency:
        n = args.per_worker * concurrency
        ideal = n / concurrency * args.latency
        alone = statistics.median(cpu for _, cpu in found[(concurrency, "runner alone")]) / n
        for kind in ("runner alone", "images"):
            wall = statistics.median(wall for wall, _ in found[(concurrency, kind)])
            cpu = statistics.median(cpu for _, cpu in found[(concurrency, kind)]) / n
            steady = statistics.median(steadies[(concurrency, kind)])
            versus = f"  = {cpu / alone:.1f} x the runner alone" if kind == "images" else ""
            print(f"  C={concurrency:<4} {kind:<13} ratio to N/C*L {ideal / wall:.3f} "
                  f"(goal >= {goal})  steady {steady:.3f}  CPU {cpu * 1000:.2f} "
                  f"ms/request{versus}")  # fmt: skip


if __name__ == "__main__":
    main()
