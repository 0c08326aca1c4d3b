"""Training throughput of the tiny random-weight VLM on the CPU, in samples per second.

Builds a tiny model and data set offline (gavel.train.tiny), trains it with the real training
loop (encoding, collation, forward, backward, AdamW) and prints the rate over the steps after
the first (the first includes one-off warm-up). The number measures gavel's pipeline overhead on
a model small enough that it dominates; real models are bound by the accelerator.

    python bench/train_speed.py [--family qwen2.5-vl|llava] [--steps 40] [--batch-size 4]
                                [--threads 1] [--lora]

On a shared two-core machine use ``--threads 1``: two threads that wait on each other's core
run many times slower than one.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import torch

from gavel.train.tiny import FAMILIES, build_model, tiny_dataset
from gavel.train.trainer import TrainSettings, train


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", choices=FAMILIES, default="qwen2.5-vl")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--lora", action="store_true")
    parser.add_argument(
        "--threads", type=int, default=None, help="torch CPU threads [default: torch's]"
    )
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        model = build_model(args.family, root / "model", hidden=args.hidden)
        data = tiny_dataset(root / "data", 32, clean=False)
        settings = TrainSettings(
            data=str(data),
            base_model=str(model),
            out=str(root / "run"),
            max_steps=args.steps,
            batch_size=args.batch_size,
            grad_accum=1,
            lr=1e-2,
            warmup_ratio=0.0,
            save_every=10**9,
            progress=False,
            lora=args.lora,
            cpu=True,
        )
        began = time.perf_counter()
        result = train(settings)
        wall = time.perf_counter() - began
        log = [
            json.loads(line) for line in (root / "run" / "train_log.jsonl").read_text().splitlines()
        ]
    steady = log[1:]
    span = steady[-1]["time"] - log[0]["time"] if steady else 0.0
    rate = sum(entry["samples"] for entry in steady) / span if span > 0 else float("nan")
    print(
        f"{args.family} (hidden {args.hidden}{', LoRA' if args.lora else ''}), "
        f"batch {args.batch_size}, {result.step} steps, torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads"
    )
    print(f"  steady rate: {rate:.1f} samples/s (steps 2-{result.step})")
    print(f"  whole loop:  {result.samples_per_second:.1f} samples/s over {result.seconds:.1f} s")
    print(f"  wall time with loading and saving: {wall:.1f} s")
    print(f"  loss {result.losses[0]:.3f} -> {result.losses[-1]:.3f}")


if __name__ == "__main__":
    main()
