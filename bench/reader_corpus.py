"""How fast gavel reads real model replies: the shared corpus of 425 replies of 12 VLM families.

Every reply is read as the corpus test reads it (tests/parsing/test_corpus.py): the box reader with
the family's preset where the reply has an image size, and both yes/no rules on every reply.
Side by side, in the same process and rounds, a bare ``json.loads`` attempt on each reply (the
least any reader does) gives the ratio. Prints the best of ``--rounds`` rounds, each reading the
corpus ``--repeat`` times.

    python bench/reader_corpus.py [--corpus PATH] [--rounds 5] [--repeat 20]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import time
from pathlib import Path
from typing import Any

from gavel.models.presets import get_preset
from gavel.parsing import parse_boxes
from gavel.parsing.yesno import official_label, strict_reading

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT.parent / "shared" / "data" / "real-outputs" / "corpus.jsonl"


def corpus_helpers() -> Any:
    """The corpus test's reading of a row (family preset, geometry), so both read alike."""
    spec = importlib.util.spec_from_file_location(
        "gavel_bench_corpus", ROOT / "tests" / "parsing" / "test_corpus.py"
    )
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def read_boxes(jobs: list[tuple[str, str, Any]]) -> int:
    return sum(len(parse_boxes(raw, fmt, shape).boxes) for raw, fmt, shape in jobs)


def read_yes_no(texts: list[str]) -> int:
    return sum(strict_reading(t)[0] == official_label(t) for t in texts)


def bare_json(texts: list[str]) -> int:
    decoded = 0
    for text in texts:
        try:
            json.loads(text)
            decoded += 1
        except ValueError:
            pass
    return decoded


def elapsed(work: Any, data: list[Any], repeat: int) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        work(data)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    if not args.corpus.is_file():
        raise SystemExit(f"corpus not found: {args.corpus} (pass --corpus)")
    helpers = corpus_helpers()
    rows = helpers.read_corpus(args.corpus)
    texts = [row["raw"] for row in rows]
    jobs = [
        (row["raw"], get_preset(helpers.preset_for(row)).box_format, shape)
        for row in rows
        if (shape := helpers.geometry(row)) is not None
    ]
    passes = {
        "boxes": (read_boxes, jobs),
        "yes/no": (read_yes_no, texts),
        "json.loads": (bare_json, texts),
    }
    times: dict[str, list[float]] = {name: [] for name in passes}
    for _ in range(args.rounds):
        for name, (work, data) in passes.items():
            times[name].append(elapsed(work, data, args.repeat))
    best = {name: min(values) for name, values in times.items()}
    for name, (_, data) in passes.items():
        count = len(data) * args.repeat
        print(f"{name:>10}: {count / best[name]:>9,.0f} replies/s "
              f"({len(data)} replies x {args.repeat}, best of {args.rounds})")  # fmt: skip
    whole = best["boxes"] + best["yes/no"]
    print(f"whole corpus, both readers: {len(texts) * args.repeat / whole:,.0f} replies/s; "
          f"{whole / best['json.loads']:.0f}x a bare json.loads of every reply")  # fmt: skip


if __name__ == "__main__":
    main()
