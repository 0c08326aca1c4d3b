"""Throughput of ``gavel synth`` and of the built-in scene model, per difficulty.

    python bench/synth_and_scene.py [--n 200]

Goal: the scene model answers 50 or more GAVEL samples per second on 2 cores (image decoding
included). Both are timed in this one process, one after the other, on the same files.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from gavel.benchmarks.gavel import build_requests
from gavel.benchmarks.gavel_data import load_samples
from gavel.models.scene.adapter import SceneModel
from gavel.prompts import load_template
from gavel.synth.gavel_set import generate_gavel


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200)
    args = parser.parse_args()
    model = SceneModel()
    template = load_template("gavel_v1")
    print(f"{'difficulty':<10} {'synth samples/s':>16} {'scene samples/s':>16}")
    for difficulty in ("easy", "medium", "hard"):
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            started = time.perf_counter()
            data = generate_gavel(root, args.n, seed=0, difficulty=difficulty)
            synth_rate = args.n / (time.perf_counter() - started)
            samples, _ = load_samples(data)
            requests = list(build_requests(samples, root, template, "pixel"))
            started = time.perf_counter()
            for request in requests:
                model.answer(request)
            scene_rate = len(requests) / (time.perf_counter() - started)
        print(f"{difficulty:<10} {synth_rate:>16.1f} {scene_rate:>16.1f}")


if __name__ == "__main__":
    main()
