"""Batched generation of a local transformers model: samples per second at batch 1, 4 and 16.

Builds the tiny random-weight Qwen2.5-VL and a tiny GAVEL data set offline (gavel.train.tiny)
and answers the data the way ``gavel generate --model hf:DIR --batch-size N`` does (the GAVEL
prompt of the qwen2.5-vl preset, the batched runner writing a predictions file), once per batch
size, the sizes interleaved round after round so that a change in the machine's load hits them
all alike. Prints each size's median rate and its ratio to batch 1, and checks that every batch
size gave the very same answers (greedy decoding): a speed-up that changed the answers would
measure nothing.

The tiny model is so small that the per-step overhead of generation (Python, kernel launches)
dominates, which is exactly what batching spreads over more samples; real models on a CPU are
bound by arithmetic in the image prefill instead, so expect less there, and more on a GPU.

    python bench/hf_batch.py [--samples 48] [--max-tokens 24] [--rounds 3] [--threads 1]
                             [--sizes 1 4 16] [--hidden 32] [--layers 2]

``--hidden`` and ``--layers`` make the text model larger, to see the gain shrink as arithmetic
takes over from overhead.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import tempfile
import time
from pathlib import Path

import torch

from gavel.benchmarks.registry import get_benchmark
from gavel.benchmarks.spec import RunSettings
from gavel.models.hf import HFModel
from gavel.models.presets import get_preset
from gavel.runner.batched import run_batched
from gavel.train.tiny import build_qwen25_vl, tiny_dataset


def answer_all(model: HFModel, data: Path, out: Path, batch_size: int) -> tuple[float, dict]:
    """Seconds to answer every sample at ``batch_size``, and the answers by id."""
    preset = get_preset("qwen2.5-vl")
    prepared = get_benchmark("gavel").prepare(
        data, model, RunSettings({"prompt": preset.gavel_prompt})
    )
    model.batch_size = batch_size
    out.unlink(missing_ok=True)
    began = time.perf_counter()
    summary = run_batched(model, prepared.requests, out, total=prepared.total, progress=False)
    seconds = time.perf_counter() - began
    assert summary.answered == prepared.total and summary.errors == 0, summary.describe()
    lines = (json.loads(line) for line in out.read_text().splitlines())
    return seconds, {line["id"]: line["response"] for line in lines}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=48)
    parser.add_argument("--max-tokens", type=int, default=24)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--hidden", type=int, default=32, help="text model width")
    parser.add_argument("--layers", type=int, default=2, help="text model layers")
    parser.add_argument(
        "--threads", type=int, default=None, help="torch CPU threads [default: torch's]"
    )
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    logging.getLogger("transformers").setLevel(logging.ERROR)

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        directory = build_qwen25_vl(root / "model", hidden=args.hidden, layers=args.layers)
        data = tiny_dataset(root / "data", args.samples)
        model = HFModel(str(directory), device="cpu", dtype="float32",
                        max_new_tokens=args.max_tokens, box_format="resized-pixel")  # fmt: skip
        answer_all(model, data, root / "warm.jsonl", max(args.sizes))  # one-off warm-up
        seconds: dict[int, list[float]] = {size: [] for size in args.sizes}
        answers: dict[int, dict] = {}
        for round_ in range(args.rounds):
            order = args.sizes[round_ % len(args.sizes) :] + args.sizes[: round_ % len(args.sizes)]
            for size in order:
                took, answers[size] = answer_all(model, data, root / f"b{size}.jsonl", size)
                seconds[size].append(took)

    reference = answers[args.sizes[0]]
    same = all(answers[size] == reference for size in args.sizes)
    print(f"tiny Qwen2.5-VL (text {args.layers} x {args.hidden}) on the CPU, {args.samples} GAVEL samples, up to {args.max_tokens} "
          f"new tokens, greedy; torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"median of {args.rounds} interleaved rounds")  # fmt: skip
    base = args.samples / statistics.median(seconds[args.sizes[0]])
    for size in args.sizes:
        rate = args.samples / statistics.median(seconds[size])
        spread = ", ".join(f"{args.samples / s:.1f}" for s in seconds[size])
        print(f"  batch {size:>3}: {rate:6.1f} samples/s  x{rate / base:.2f} of batch "
              f"{args.sizes[0]}  (rounds: {spread})")  # fmt: skip
    print(f"  answers identical at every batch size: {'yes' if same else 'NO'}")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
