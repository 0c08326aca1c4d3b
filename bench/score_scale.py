"""Scoring at scale: wall time and peak memory of ``gavel score`` at 10k, 100k and 1M samples.

Each size gets a GAVEL data file and a predictions file of realistic replies (bench/score_100k.py
makes the samples and their boxes): fenced JSON in 0-1000 coordinates, bare JSON, prose with a
box list, clean answers, answers without a verdict, answers cut off by the token limit, model
errors and missing lines, every category; the predictions in the lightly shuffled order an async
run writes them. ``gavel score --out`` runs on them in a fresh process, and the script prints its
wall time, CPU time (its workers' included), its own peak resident memory and the peak
proportional set size of it and its workers together (read from /proc at most 2% of the
time: a reading costs the kernel a walk over every page). With ``--baseline REV`` gavel as of that git revision (``git archive``d into a
temporary folder) scores the same files right after, and the ratio and whether the two report
the same numbers are printed. At the largest size it also scores the file with a few answers of
8,000 boxes each added, and times one such answer alone (the baseline gets ``--crowd-timeout``
seconds for it). ``uptime`` is printed before and after: on a shared machine the wall clock
counts other people's work, CPU time much less.

    python bench/score_scale.py [--sizes 10000,100000,1000000] [--baseline REV] [--given]

Goal: 1,000,000 predictions in under 20 s on 2 cores, memory flat in the number of samples.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from score_100k import gold_sample, predicted_boxes, rel1000

ROOT = Path(__file__).resolve().parent.parent
#: Boxes of each crowded answer (the case that made scoring hang).
CROWD_BOXES = 8000
#: Least seconds between two readings of the workers' proportional set size.
PSS_EVERY = 0.25


def reply(rng: random.Random, sample: dict, boxes: list[list[int]]) -> dict:
    """One predictions line for ``sample``: a model's reply in one of the styles VLMs write,
    or a failure (a missing line is None)."""
    sid, clean = sample["id"], not sample["hallucinated"]
    rel = rel1000(boxes, sample["width"], sample["height"])
    roll = rng.random()
    if roll < 0.02:
        return {"id": sid, "error": "HTTP 503: the server is overloaded", "error_kind": "server"}
    if roll < 0.04:
        return {"id": sid, "response": "I cannot tell from this image whether it matches."}
    if roll < 0.05:
        cut = '```json\n{"hallucination": true, "explanation": "The caption says the '
        return {"id": sid, "response": cut, "finish_reason": "length"}
    explanation = rng.choice([
        "The caption says the car is red, but it is blue.",
        "There are two dogs in the picture, not three.",
        "The man is sitting on the bench, not standing next to it.",
    ])  # fmt: skip
    if clean:
        body = {"hallucination": False, "explanation": "The caption matches the image.",
                "bbox_2d": []}  # fmt: skip
        return {"id": sid, "response": "```json\n" + json.dumps(body) + "\n```"}
    if roll < 0.55:
        body = {"hallucination": True, "explanation": explanation, "bbox_2d": rel}
        return {"id": sid, "response": "```json\n" + json.dumps(body) + "\n```"}
    if roll < 0.8:
        body = {"hallucination": True, "explanation": explanation, "bbox": rel}
        return {"id": sid, "response": json.dumps(body)}
    listed = ", ".join(str(b) for b in rel)
    return {"id": sid, "response": f"Yes. {explanation} The region is {listed}."}


def make_files(folder: Path, n: int, given: bool, crowd: int = 0) -> tuple[Path, Path]:
    """Data and predictions of ``n`` samples (4% of them without a predictions line), the
    predictions in a lightly shuffled order as an async run writes them; ``crowd`` answers
    with :data:`CROWD_BOXES` boxes each, in the reply text and in the boxes field by turns."""
    rng = random.Random(0)
    gold_path, pred_path = folder / "gold.jsonl", folder / "pred.jsonl"
    window: list[str] = []  # completion order: shuffled within the 16 requests in flight
    with gold_path.open("w") as gold, pred_path.open("w") as pred:
        for i in range(n):
            sample = gold_sample(rng, i)
            gold.write(json.dumps(sample) + "\n")
            boxes = predicted_boxes(rng, sample)
            if rng.random() < 0.04:
                continue  # no line: missing
            if given:
                line = {"id": sample["id"], "response": "...",
                        "hallucinated": sample["hallucinated"], "explanation": "e",
                        "boxes": boxes}  # fmt: skip
            else:
                line = reply(rng, sample, boxes)
            if i < crowd:
                line = crowded(rng, sample, in_text=i % 2 == 0)
            window.append(json.dumps(line) + "\n")
            if len(window) == 16:
                rng.shuffle(window)
                pred.writelines(window)
                window = []
        rng.shuffle(window)
        pred.writelines(window)
    return gold_path, pred_path


def crowded(rng: random.Random, sample: dict, in_text: bool) -> dict:
    w, h = sample["width"], sample["height"]
    boxes = []
    for _ in range(CROWD_BOXES):
        x, y = rng.randint(0, w - 60), rng.randint(0, h - 60)
        boxes.append([x, y, x + rng.randint(5, 60), y + rng.randint(5, 60)])
    if in_text:
        body = {
            "hallucination": True,
            "explanation": "Many birds.",
            "bbox_2d": rel1000(boxes, w, h),
        }
        return {"id": sample["id"], "response": "```json\n" + json.dumps(body) + "\n```"}
    return {"id": sample["id"], "response": "yes", "hallucinated": True, "explanation": "x",
            "boxes": boxes}  # fmt: skip


@dataclass
class Measured:
    wall: float
    cpu: float
    #: The scoring process's own peak resident memory, and the peak of its and its workers'
    #: proportional set size together (from /proc, every 20 ms and every :data:`PSS_EVERY`
    #: seconds at least; Linux).
    peak_mb: float
    tree_mb: float
    result: dict | None
    timed_out: bool = False


def score(source: Path, gold: Path, pred: Path, out: Path, timeout: float | None = None,
          match: str = "union") -> Measured:  # fmt: skip
    """``gavel score`` from the tree at ``source`` in a fresh process: its wall and CPU time and
    its own peak resident memory."""
    env = dict(os.environ, PYTHONPATH=str(source / "src"))
    args = [sys.executable, "-m", "gavel", "score", "--data", str(gold), "--predictions",
            str(pred), "--box-format", "rel1000", "--match", match, "--out", str(out)]  # fmt: skip
    out.parent.mkdir(parents=True, exist_ok=True)
    errors = out.with_name("stderr.txt")
    start = time.perf_counter()
    with errors.open("wb") as sink:
        child = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=sink)
    timed_out = False
    tree_peak = own_peak = 0.0
    next_pss = start
    while True:  # wait4 rather than wait(): it gives this child's own peak memory
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        own_peak = max(own_peak, high_water_mb(child.pid))
        if time.perf_counter() >= next_pss:
            # The kernel walks every page to sum PSS: 20 ms of a core for a process of a few
            # hundred MB, so sampling it every 20 ms would take a third of a core from the run
            # it measures. It is read no more than 2% of the time instead.
            began = time.perf_counter()
            tree_peak = max(tree_peak, tree_pss_mb(child.pid))
            next_pss = began + max(PSS_EVERY, 50 * (time.perf_counter() - began))
        if timeout is not None and time.perf_counter() - start > timeout:
            child.kill()
            timed_out = True
            _, status, usage = os.wait4(child.pid, 0)
            break
        time.sleep(0.02)
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    wall = time.perf_counter() - start
    if not timed_out and child.returncode != 0:
        raise RuntimeError(
            f"gavel score failed ({child.returncode}):\n{errors.read_text()[-2000:]}"
        )
    result = None if timed_out else json.loads(out.read_text())
    cpu = usage.ru_utime + usage.ru_stime  # the child's and its workers'
    return Measured(wall, cpu, own_peak, tree_peak, result, timed_out)


def high_water_mb(pid: int) -> float:
    """The process's peak resident memory so far (VmHWM), in MB. Not wait4's ru_maxrss: Linux
    carries that over from the forked copy of this script the child was exec'ed from."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def tree_pss_mb(pid: int) -> float:
    """Proportional set size of a process and its children, in MB (Linux; 0 elsewhere):
    pages the workers share with their parent count once, not once per process."""
    total = 0
    for member in (pid, *_children(pid)):
        try:
            with open(f"/proc/{member}/smaps_rollup") as rollup:
                for line in rollup:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
                        break
        except OSError:
            continue
    return total / 1024


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as listed:
            return [int(v) for v in listed.read().split()]
    except OSError:
        return []


def numbers(result: dict) -> dict:
    """What a run reports, without its provenance and the count added since."""
    kept = {k: result[k] for k in ("metrics", "per_category", "counts", "ci", "warnings")}
    kept["metrics"] = json.loads(json.dumps(kept["metrics"]))
    kept["metrics"]["boxes"].pop("capped", None)
    return kept


def baseline_tree(revision: str, folder: Path) -> Path:
    """The ``src`` of ``revision`` in ``folder`` (git archive: no checkout, no worktree)."""
    folder.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "src"],
                             capture_output=True, check=True).stdout  # fmt: skip
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return f"load average: {', '.join(f'{v:.2f}' for v in os.getloadavg())}"


def reference_seconds() -> float:
    """The best of three timings of a fixed pure-Python loop: how fast this machine runs the
    per-sample Python that scoring is, so that figures taken on machines of different speed
    can be compared (docs/performance.md gives it with each table)."""
    best = math.inf
    for _ in range(3):
        start, total = time.perf_counter(), 0
        for value in range(10_000_000):
            total += value
        best = min(best, time.perf_counter() - start)
    return best


def shown(m: Measured) -> str:
    if m.timed_out:
        return f"> {m.wall:6.1f} s (stopped)"
    return f"{m.wall:6.2f} s  cpu {m.cpu:6.2f} s  {m.peak_mb:5.0f} MB  ({m.tree_mb:5.0f} MB)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--baseline", metavar="REV", help="git revision to compare against")
    parser.add_argument("--given", action="store_true", help="predictions carry parsed boxes")
    parser.add_argument("--crowd", type=int, default=2, help="answers of 8,000 boxes added")
    parser.add_argument("--crowd-timeout", type=float, default=60.0)
    args = parser.parse_args()
    sizes = [int(v) for v in args.sizes.split(",")]
    kind = "predictions with parsed boxes" if args.given else "raw replies"
    workers = os.environ.get("GAVEL_SCORE_WORKERS", "default")
    print(f"gavel score on {kind}; {os.cpu_count()} CPUs; GAVEL_SCORE_WORKERS={workers}")
    print("each run: wall, CPU (with workers'), peak RSS of the scoring process (peak PSS of it")
    print("and its workers together)")
    print(f"before: {uptime()}")
    print(f"machine speed: 10,000,000 additions in a Python loop take {reference_seconds():.2f} s")
    with tempfile.TemporaryDirectory(prefix="gavel-bench-") as tmp:
        folder = Path(tmp)
        base = baseline_tree(args.baseline, folder / "baseline") if args.baseline else None
        header = f"{'samples':>10}  {'this tree':<44}"
        if base is not None:
            header += f"  {'baseline ' + args.baseline:<44}  ratio (time, memory)  same numbers"
        print(header)
        for n in sizes:
            data = folder / f"n{n}"
            data.mkdir()
            gold, pred = make_files(data, n, args.given)
            new = score(ROOT, gold, pred, data / "new" / "results.json")
            row = f"{n:>10,}  {shown(new):<44}"
            if base is not None:
                old = score(base, gold, pred, data / "old" / "results.json")
                same = new.result and old.result and numbers(new.result) == numbers(old.result)
                row += (f"  {shown(old):<44}  {old.wall / new.wall:5.1f}x  "
                        f"{old.tree_mb / new.tree_mb:5.1f}x       {'yes' if same else 'NO'}")  # fmt: skip
            print(row, flush=True)
            (data / "pred.jsonl").unlink()
            for side in ("new", "old"):
                for name in ("results.scores.jsonl",):
                    (data / side / name).unlink(missing_ok=True)
        if args.crowd:
            n = sizes[-1]
            data = folder / f"crowd{n}"
            data.mkdir()
            gold, pred = make_files(data, n, args.given, crowd=args.crowd)
            crowd = score(ROOT, gold, pred, data / "new" / "results.json")
            capped = crowd.result["metrics"]["boxes"]["capped"] if crowd.result else None
            print(f"{n:>10,}  {shown(crowd):<44}  with {args.crowd} answers of "
                  f"{CROWD_BOXES:,} boxes ({capped} capped)")  # fmt: skip
            one = folder / "one"
            one.mkdir()
            gold, pred = make_files(one, 1, args.given, crowd=1)
            for match in ("union", "hungarian"):
                alone = score(ROOT, gold, pred, one / "n.json", match=match)
                row = f"{'1 crowd':>10}  {shown(alone):<44}"
                if base is not None:
                    old = score(base, gold, pred, one / "o.json", args.crowd_timeout, match)
                    row += f"  {shown(old):<44}"
                print(f"{row}  --match {match}", flush=True)
    print(f"after: {uptime()}")


if __name__ == "__main__":
    main()
