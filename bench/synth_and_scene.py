"""Throughput of ``gavel synth`` and of the built-in scene model, per benchmark and difficulty.

    python bench/synth_and_scene.py [--n 100]

Goal: the scene model answers 50 or more GAVEL samples per second on 2 cores (image decoding
included). Each row is timed in this one process on the same files, synth first, then the model.
VideoHallucer counts pairs for synth and questions for the model.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from gavel.benchmarks.registry import get_benchmark
from gavel.benchmarks.spec import RunSettings
from gavel.models.scene.adapter import SceneModel

SHARE = {"gavel": 1.0, "detailverify": 0.5, "videohallucer": 0.25}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100, help="GAVEL samples (others get fewer)")
    args = parser.parse_args()
    model = SceneModel()
    print(
        f"{'benchmark':<14} {'difficulty':<10} {'n':>5} {'synth items/s':>14} {'scene answers/s':>16}"
    )
    for benchmark, share in SHARE.items():
        spec = get_benchmark(benchmark)
        n = max(3, round(args.n * share))
        for difficulty in ("easy", "medium", "hard"):
            with tempfile.TemporaryDirectory() as folder:
                started = time.perf_counter()
                data = spec.synth(Path(folder), n, 0, difficulty, RunSettings(), None)
                synth_rate = n / (time.perf_counter() - started)
                requests = list(spec.prepare(data, model, RunSettings()).requests)
                started = time.perf_counter()
                for request in requests:
                    model.answer(request)
                answer_rate = len(requests) / (time.perf_counter() - started)
            print(
                f"{benchmark:<14} {difficulty:<10} {n:>5} {synth_rate:>14.1f} {answer_rate:>16.1f}"
            )


if __name__ == "__main__":
    main()
