"""What finding plugins costs a command's start, as whole processes.

Each command is run N times (default 7) in fresh processes, alternating so a busy machine slows
all alike, and the median wall time is printed with its ratio to the same command with no
plugin installed: ``gavel --help`` (which must read no plugin metadata), ``gavel score --help``
(whose ``--benchmark`` choices list the plugins' names) and ``gavel list`` (which imports every
plugin to describe it), with 0 and with 20 small plugin distributions on the path.

    python bench/plugin_discovery.py [--repeat 7] [--plugins 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASES = {"--help": ["--help"], "score --help": ["score", "--help"], "list": ["list"]}


def install_plugins(site: Path, count: int) -> None:
    """``count`` distributions, each a benchmark-less model plugin with its own module."""
    for i in range(count):
        package = site / f"gavel_bench_plugin_{i}"
        package.mkdir(parents=True)
        package.joinpath("__init__.py").write_text(
            "def make(argument, **options):\n    '''a benchmark plugin model'''\n"
        )
        info = site / f"gavel_bench_plugin_{i}-1.0.dist-info"
        info.mkdir()
        info.joinpath("METADATA").write_text(
            f"Metadata-Version: 2.1\nName: gavel-bench-plugin-{i}\nVersion: 1.0\n"
        )
        info.joinpath("entry_points.txt").write_text(
            f"[gavel.models]\nplugin{i} = gavel_bench_plugin_{i}:make\n"
        )


def wall_time(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs per command (median)")
    parser.add_argument("--plugins", type=int, default=20, help="plugin distributions")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        site = Path(folder)
        install_plugins(site, args.plugins)
        plain = dict(os.environ)
        with_plugins = {
            **plain,
            "PYTHONPATH": os.pathsep.join(p for p in (str(site), plain.get("PYTHONPATH")) if p),
        }
        times: dict[tuple[str, bool], list[float]] = {}
        for _ in range(args.repeat):
            for name, argv in CASES.items():
                for installed, env in ((False, plain), (True, with_plugins)):
                    command = [sys.executable, "-m", "gavel", *argv]
                    times.setdefault((name, installed), []).append(wall_time(command, env))
    print(f"median of {args.repeat} runs; {args.plugins} plugin distributions installed or none")
    print(f"{'command':<16}{'no plugins':>12}{'plugins':>12}{'ratio':>8}")
    for name in CASES:
        bare = statistics.median(times[(name, False)])
        loaded = statistics.median(times[(name, True)])
        print(f"{name:<16}{bare:>11.3f}s{loaded:>11.3f}s{loaded / bare:>8.2f}")


if __name__ == "__main__":
    main()
