"""How long a ``gavel`` command takes to start, as whole processes (interpreter start included).

Every command is run N times (default 7) in fresh processes, alternating between commands so a
busy machine slows all of them alike, and the median wall time is printed with two ratios: to
a bare ``python -c pass`` (the floor no Python program goes under) and to the same command with
every subcommand imported up front, as the command line did before it loaded them lazily.
Goals: ``gavel --help`` and ``gavel --version`` under 0.3 s, ``gavel data validate`` of a
10-line file under 0.5 s.

    python bench/startup.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: The command line with every subcommand imported before it runs, as it was before.
EAGER = (
    "import sys; from gavel.cli.main import COMMANDS, main; "
    "[entry.load() for entry in COMMANDS.values()]; sys.argv[0] = 'gavel'; main()"
)

GOALS = {"--help": 0.3, "--version": 0.3, "data validate": 0.5}


def ten_line_file(folder: Path) -> Path:
    """A valid 10-line GAVEL file (sizes given, so no image is opened)."""
    path = folder / "ten.jsonl"
    lines = []
    for i in range(10):
        hallucinated = i % 3 != 0
        lines.append(
            {
                "id": f"s{i}",
                "image": f"images/{i}.jpg",
                "caption": "A red cup stands to the left of a plate.",
                "hallucinated": hallucinated,
                "category": "Color" if hallucinated else None,
                "explanation": "The cup is blue." if hallucinated else "",
                "boxes": [[10 + i, 20, 50, 40]] if hallucinated else [],
                "width": 640,
                "height": 480,
            }
        )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def wall_time(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def medians(commands: dict[str, list[str]], repeat: int) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, argv in commands.items():
            times[name].append(wall_time(argv))
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs per command (median)")
    args = parser.parse_args()
    python = sys.executable
    with tempfile.TemporaryDirectory() as folder:
        data = str(ten_line_file(Path(folder)))
        cases = {
            "--help": ["--help"],
            "--version": ["--version"],
            "data validate": ["data", "validate", data],
            "score --help": ["score", "--help"],
        }
        commands: dict[str, list[str]] = {"python -c pass": [python, "-c", "pass"]}
        for name, rest in cases.items():
            commands[f"gavel {name}"] = [python, "-m", "gavel", *rest]
            commands[f"eager {name}"] = [python, "-c", EAGER, *rest]
        result = medians(commands, args.repeat)
    floor = result["python -c pass"]
    print(f"whole-process wall time, median of {args.repeat}")
    print(f"  {'python -c pass':24s} {floor:6.3f} s")
    for name in cases:
        now, before = result[f"gavel {name}"], result[f"eager {name}"]
        goal = GOALS.get(name)
        verdict = "" if goal is None else f"  goal < {goal} s: {'met' if now < goal else 'MISSED'}"
        print(
            f"  gavel {name:18s} {now:6.3f} s  {now / floor:5.1f}x python -c pass  "
            f"eager imports {before:6.3f} s ({before / now:4.1f}x slower){verdict}"
        )


if __name__ == "__main__":
    main()
