"""Side by side with other harnesses: one job run through gavel, inspect_ai and lmms-eval
against one loopback server, in one run, interleaved.

    python bench/peers.py [--n 400] [--concurrency 64] [--latency 0.2] [--rounds 2]
                          [--peers gavel,inspect,lmms-eval] [--jobs images,video]
                          [--captions-per-image 1] [--frames 8] [--lmms-eval-path DIR]
                          [--inspect-no-log-images] [--timeout 1800]

Each harness is run as its user would type it, in a process of its own, with its concurrency
knob set to the same ``--concurrency``:

- gavel: ``gavel run --model openai:... --concurrency C --bootstrap 0 --no-cache`` (the answers
  generated, then scored);
- inspect: ``inspect eval gavel/gavel`` (or ``gavel/videohallucer``) with inspect's ``openai``
  provider and ``--max-connections C`` (GAVEL: ``-T judge=none``, as ``gavel run`` without
  ``--judge``); its log keeps every image, inspect's default, unless ``--inspect-no-log-images``;
- lmms-eval: ``lmms-eval --model openai --model_args num_concurrent=C`` on the task that
  ``gavel export lmms-eval`` wrote (exported once per job, before the runs).

Two jobs (``peer_data.py``): ``images`` (GAVEL samples with 448 x 512 PNG images of about 450
KB, made from the example photos) and ``video`` (VideoHallucer pairs from ``gavel synth``, 8
frames per question). The order is gavel, inspect, lmms-eval, gavel, ... for each job in each
round, so a machine whose load changes slows all of them alike.

Every run prints its wall time, the client's CPU (user + system time of the harness process
and its children: the server runs in a process of its own and is not counted), CPU per
request, and the ratio of the ideal wall time ``N / C * L`` to the measured one. The server
counts what each run sent (by a label in the URL), and a row fails, not the bench, when a run
exited non-zero or sent fewer requests or images than the job has. Last, per job and harness,
the median over the rounds and each harness's figures divided by gavel's.

Everything is written to a temporary folder, removed at the end.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from loopback import Served, counting_server
from peer_commands import Peer, Run, find_peers
from peer_data import Job, image_job, video_job

PEERS = ("gavel", "inspect", "lmms-eval")
JOBS = ("images", "video")


@dataclass(frozen=True)
class Measured:
    """One run of one harness on one job."""

    job: Job
    peer: str
    round: int
    label: str
    wall: float
    cpu: float
    load: float
    code: int | None  # None: stopped at --timeout
    log: Path

    @property
    def cpu_ms_per_request(self) -> float:
        return self.cpu / self.job.requests * 1000


def main() -> None:
    args = _arguments()
    print(f"load average (1, 5, 15 min) at start: {_load()}")
    peers = find_peers(args.peers, args.lmms_eval_path, not args.inspect_no_log_images)
    with tempfile.TemporaryDirectory(prefix="gavel-peers-") as temporary:
        folder = Path(temporary)
        jobs = _jobs(args, folder)
        for peer in peers:
            for job in jobs:
                peer.prepare(job, folder)
        _print_header(args, peers, jobs)
        env = _environment(folder)
        runs: list[Measured] = []
        with counting_server(args.latency) as server:
            for number in range(1, args.rounds + 1):
                for job in jobs:
                    for peer in peers:
                        runs.append(_one_run(peer, job, number, server.url, args, env, folder))
        failures = _print_runs(runs, server.served, args)
        _print_summary(runs, failures, server.served, args)
    print(f"load average (1, 5, 15 min) at end: {_load()}")


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=400, help="requests per job (video: questions)")
    parser.add_argument("--concurrency", type=int, default=64, help="each harness's knob")
    parser.add_argument("--latency", type=float, default=0.2, help="server seconds per request")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--peers", type=_names(PEERS), default=list(PEERS))
    parser.add_argument("--jobs", type=_names(JOBS), default=list(JOBS))
    parser.add_argument("--captions-per-image", type=int, default=1, help="images job")
    parser.add_argument("--frames", type=int, default=8, help="video job: frames per question")
    parser.add_argument("--lmms-eval-path", type=Path, help="a folder holding lmms_eval")
    parser.add_argument(
        "--inspect-no-log-images", action="store_true",
        help="run inspect with --no-log-images (its default keeps every image in the log)",
    )  # fmt: skip
    parser.add_argument("--timeout", type=float, default=1800, help="seconds a run may take")
    args = parser.parse_args()
    for name in ("n", "concurrency", "rounds", "captions_per_image", "frames"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.latency < 0:
        parser.error("--latency must not be negative")
    return args


def _names(allowed: tuple[str, ...]):
    def parse(text: str) -> list[str]:
        names = [name.strip() for name in text.split(",") if name.strip()]
        unknown = [name for name in names if name not in allowed]
        if unknown or not names:
            raise argparse.ArgumentTypeError(f"choose from {', '.join(allowed)}")
        return [name for name in allowed if name in names]  # gavel first, always

    return parse


def _load() -> str:
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


def _jobs(args: argparse.Namespace, folder: Path) -> list[Job]:
    made = []
    if "images" in args.jobs:
        made.append(image_job(folder / "images", args.n, args.captions_per_image))
    if "video" in args.jobs:
        made.append(video_job(folder / "video", args.n, args.frames))
    return made


def _environment(folder: Path) -> dict[str, str]:
    """The harnesses' environment: a key the server ignores, every cache in the temporary
    folder, offline, and loopback never sent through a proxy."""
    no_proxy = ",".join(filter(None, [os.environ.get("NO_PROXY"), "127.0.0.1", "localhost"]))
    return dict(
        os.environ,
        OPENAI_API_KEY="sk-bench-loopback",
        GAVEL_CACHE_DIR=str(folder / "cache" / "gavel"),
        HF_HOME=str(folder / "cache" / "hf"),
        HF_DATASETS_CACHE=str(folder / "cache" / "hf-datasets"),
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        NO_PROXY=no_proxy,
        no_proxy=no_proxy,
    )


def _print_header(args: argparse.Namespace, peers: list[Peer], jobs: list[Job]) -> None:
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}; server latency L = {args.latency} s, "
        f"concurrency C = {args.concurrency}, {args.rounds} round(s)"
    )
    for job in jobs:
        ideal = job.requests / args.concurrency * args.latency
        print(f"job {job.name}: {job.about}; ideal wall N/C*L = {ideal:.2f} s")
    print(f"\n{'harness':<10} {'version':<8} {'concurrency knob':<30} {'its default':<36} set to")
    for peer in peers:
        print(
            f"{peer.name:<10} {peer.version:<8} {peer.knob:<30} {peer.default:<36} "
            f"{args.concurrency}"
        )
    print()


def _one_run(
    peer: Peer,
    job: Job,
    number: int,
    url_of: Callable[[str], str],
    args: argparse.Namespace,
    env: dict[str, str],
    folder: Path,
) -> Measured:
    label = f"{job.name}-{peer.name}-{number}"
    out = folder / "out" / label
    run = peer.run(job, url_of(label), args.concurrency, out)
    measured = _measure(run, env, folder, folder / "logs" / f"{label}.log", args.timeout)
    done = Measured(job, peer.name, number, label, *measured)
    ended = "timed out" if done.code is None else f"exit {done.code}"
    print(
        f"round {number} {job.name:<6} {peer.name:<10} wall {done.wall:7.2f} s  "
        f"CPU {done.cpu:7.2f} s  ({ended}, load {done.load:.2f})",
        flush=True,
    )
    return done


def _measure(
    run: Run, env: dict[str, str], cwd: Path, log: Path, timeout: float
) -> tuple[float, float, float, int | None, Path]:
    """Wall and CPU of one harness process and its children: the CPU is what the processes
    reaped while it ran used (``RUSAGE_CHILDREN``), which the server, still running, is not."""
    log.parent.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    code: int | None
    with log.open("wb") as output:
        process = subprocess.Popen(
            run.argv, env={**env, **run.env}, cwd=cwd, stdout=output, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        try:
            code = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # the group this run started, nothing else
            process.wait()
            code = None
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, load, code, log


def _verdict(run: Measured, served: Served | None) -> str:
    """``ok``, or why the row failed."""
    if run.code is None:
        return "FAILED: timed out"
    if run.code != 0:
        lines = run.log.read_text(errors="replace").strip().splitlines() or [""]
        return f"FAILED: exit {run.code}: {lines[-1][:120]}"
    requests = served.requests if served else 0
    if requests < run.job.requests:
        return f"FAILED: sent {requests} of {run.job.requests} requests"
    images = served.images if served else 0
    wanted = run.job.requests * run.job.images_per_request
    if images < wanted:
        return f"FAILED: sent {images} of {wanted} images"
    return "ok" if requests == run.job.requests else f"ok ({requests - run.job.requests} retried)"


def _print_runs(
    runs: list[Measured], served: dict[str, Served], args: argparse.Namespace
) -> set[str]:
    """Every run with what the server counted; the labels of the runs that failed."""
    print(
        f"\n{'round':>5} {'job':<6} {'harness':<10} {'wall s':>8} {'CPU s':>8} "
        f"{'CPU ms/req':>10} {'ideal/wall':>10} {'requests':>8} {'images':>7} {'MB sent':>8} "
        f"{'span s':>7} {'load':>5}  status"
    )
    failed = set()
    for run in runs:
        got = served.get(run.label)
        verdict = _verdict(run, got)
        if not verdict.startswith("ok"):
            failed.add(run.label)
        ideal = run.job.requests / args.concurrency * args.latency
        counts = (
            f"{got.requests:>8} {got.images:>7} {got.bytes / 1e6:>8.1f} {got.seconds:>7.2f}"
            if got
            else f"{0:>8} {0:>7} {'-':>8} {'-':>7}"
        )
        print(
            f"{run.round:>5} {run.job.name:<6} {run.peer:<10} {run.wall:>8.2f} {run.cpu:>8.2f} "
            f"{run.cpu_ms_per_request:>10.2f} {ideal / run.wall:>10.3f} {counts} "
            f"{run.load:>5.2f}  {verdict}"
        )
    print(
        "span: the server's time from the run's first request arriving to its last reply; "
        "load: 1-minute load average as the run started"
    )
    for run in runs:
        if run.label in failed and run.log.is_file():  # the log goes with the folder: shown now
            tail = run.log.read_text(errors="replace").strip().splitlines()[-8:]
            print(f"\n{run.label}, last lines of its output:\n  " + "\n  ".join(tail))
    return failed


def _print_summary(
    runs: list[Measured], failed: set[str], served: dict[str, Served], args: argparse.Namespace
) -> None:
    print("\nmedian over the rounds that passed; x gavel = the harness's figure / gavel's")
    for job in dict.fromkeys(run.job for run in runs):
        ideal = job.requests / args.concurrency * args.latency
        print(f"\n{job.name}: {job.requests} requests, ideal wall {ideal:.2f} s")
        print(
            f"{'harness':<10} {'wall s':>8} {'CPU s':>8} {'CPU ms/req':>10} {'ideal/wall':>10} "
            f"{'span s':>7} {'wall x gavel':>12} {'CPU x gavel':>11} {'rounds ok':>9}"
        )
        medians: dict[str, tuple[float, float]] = {}
        for peer in dict.fromkeys(run.peer for run in runs):
            mine = [r for r in runs if r.job == job and r.peer == peer]
            passed = [r for r in mine if r.label not in failed]
            if passed:
                medians[peer] = (
                    statistics.median(r.wall for r in passed),
                    statistics.median(r.cpu for r in passed),
                )
            base = medians.get("gavel")
            if peer not in medians:
                print(f"{peer:<10} {'-':>8} {'-':>8} {'-':>10} {'-':>10} {'-':>7} {'-':>12} "
                      f"{'-':>11} {0:>5}/{len(mine)}")  # fmt: skip
                continue
            wall, cpu = medians[peer]
            span = statistics.median(served[r.label].seconds for r in passed)
            ratios = (
                f"{wall / base[0]:>12.2f} {cpu / base[1]:>11.2f}"
                if base
                else f"{'-':>12} {'-':>11}"
            )
            print(
                f"{peer:<10} {wall:>8.2f} {cpu:>8.2f} {cpu / job.requests * 1000:>10.2f} "
                f"{ideal / wall:>10.3f} {span:>7.2f} {ratios} {len(passed):>5}/{len(mine)}"
            )


if __name__ == "__main__":
    main()
