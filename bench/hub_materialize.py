"""What reading Parquet data costs: the first run (writing the loader's layout) against a
reused copy, and peak memory as the dataset grows, measured side by side.

For each size, writes a GAVEL Parquet file of random "images" (``--image-kb`` each), then in
fresh processes resolves it twice: the first time materializes it, the second finds the copy.
Prints the seconds of each, their ratio, the throughput of the first, and each process's peak
resident memory, so flat memory shows as the same peak for a tenfold dataset.

    python bench/hub_materialize.py [--rows 40 400 1200] [--image-kb 256]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

MAKE = textwrap.dedent(
    """
    import os, sys
    import pyarrow as pa, pyarrow.parquet as pq
    path, rows, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    schema = pa.schema([("id", pa.string()), ("image", image), ("caption", pa.string()),
                        ("hallucinated", pa.bool_()), ("category", pa.string()),
                        ("width", pa.int64()), ("height", pa.int64())])
    with pq.ParquetWriter(path, schema) as writer:
        for start in range(0, rows, 64):
            batch = [{"id": f"s{n}", "image": {"bytes": os.urandom(size), "path": f"i/{n}.png"},
                      "caption": "A caption.", "hallucinated": False, "category": None,
                      "width": 64, "height": 64} for n in range(start, min(rows, start + 64))]
            writer.write_table(pa.Table.from_pylist(batch, schema=schema))
    """
)
RESOLVE = textwrap.dedent(
    """
    import resource, sys, time
    from gavel.sources import resolve_data
    start = time.perf_counter()
    resolve_data("gavel", sys.argv[1])
    seconds = time.perf_counter() - start
    print(seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    """
)


def resolve(data: Path, env: dict[str, str]) -> tuple[float, float]:
    done = subprocess.run(
        [sys.executable, "-c", RESOLVE, str(data)], capture_output=True, text=True, env=env
    )
    if done.returncode:
        raise SystemExit(done.stderr)
    seconds, peak_kib = done.stdout.split()
    return float(seconds), int(peak_kib) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[40, 400, 1200])
    parser.add_argument("--image-kb", type=int, default=256)
    args = parser.parse_args()
    print(f"{'rows':>6} {'MB':>6} {'first s':>8} {'reuse s':>8} {'ratio':>6} {'MB/s':>6} "
          f"{'peak MB first':>13} {'peak MB reuse':>13}")  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ, GAVEL_CACHE_DIR=str(Path(folder) / "cache"))
        for rows in args.rows:
            data = Path(folder) / f"data-{rows}.parquet"
            size = args.image_kb * 1024
            subprocess.run(
                [sys.executable, "-c", MAKE, str(data), str(rows), str(size)], check=True
            )
            first, first_peak = resolve(data, env)
            reuse, reuse_peak = resolve(data, env)
            megabytes = rows * size / 2**20
            print(f"{rows:>6} {megabytes:>6.0f} {first:>8.2f} {reuse:>8.2f} {first / reuse:>6.1f} "
                  f"{megabytes / first:>6.0f} {first_peak:>13.0f} {reuse_peak:>13.0f}")  # fmt: skip


if __name__ == "__main__":
    main()
