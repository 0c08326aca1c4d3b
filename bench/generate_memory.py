"""Peak memory of ``gavel generate`` over 100,000 samples (goal: under 500 MB resident).

    python bench/generate_memory.py [--n 100000]

The model is ``replay:`` over saved answers, so the run measures gavel (loading, prompting,
the runner, the append-only writer) rather than a model. The command runs in a subprocess and
its peak resident set size is read from the operating system.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        answer = '{"hallucination": true, "explanation": "The circle is green.", "boxes": [[10, 10, 60, 60]]}'
        with (root / "gavel.jsonl").open("w") as gold, (root / "saved.jsonl").open("w") as saved:
            for i in range(args.n):
                gold.write(json.dumps({
                    "id": f"s{i}", "image": f"images/{i}.png", "caption": "A red circle is at the top.",
                    "hallucinated": True, "category": "Color", "explanation": "The circle is green.",
                    "boxes": [[10, 10, 50, 50]], "width": 640, "height": 480,
                }) + "\n")  # fmt: skip
                saved.write(
                    json.dumps({"id": f"s{i}", "response": answer, "box_format": "pixel"}) + "\n"
                )
        command = [sys.executable, "-m", "gavel", "generate", "--data", str(root / "gavel.jsonl"),
                   "--model", f"replay:{root / 'saved.jsonl'}", "--out", str(root / "pred.jsonl"),
                   "--no-progress"]  # fmt: skip
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        elapsed = time.perf_counter() - started
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        lines = sum(1 for _ in (root / "pred.jsonl").open())
    print(f"{args.n:,} samples: {lines:,} lines written in {elapsed:.1f} s, peak {peak_mb:.0f} MB "
          f"(including the replayed answers held in memory)")  # fmt: skip


if __name__ == "__main__":
    main()
