"""What setting copied prompt text aside costs the GAVEL answer reader, measured side by side.

Reads the same responses in one process, alternating: with the filter of every prompt sent
(what ``gavel score`` passes the reader) and with a filter that returns every text untouched at once, and
prints the best time per response of each and the ratio. The responses are typical answers (JSON with a box, prose, a leading
yes/no), with one in ``--echo-share`` a parroted prompt.

    python bench/echo_filter.py [--n 100000] [--echo-share 0.01]
"""

from __future__ import annotations

import argparse
import random
import time

from gavel import prompts
from gavel.benchmarks.registry import echo_filter
from gavel.parsing.echo import EchoFilter, Stripped
from gavel.parsing.verdict import read_answer

ANSWERS = [
    '{"hallucination": true, "explanation": "The sofa is blue, not red.", '
    '"boxes": [[120, 40, 388, 301]]}',
    '```json\n{"hallucination": false, "explanation": "Everything matches.", "boxes": []}\n```',
    "Yes. The caption says two dogs but there is only one dog on the left.",
    "The caption contains an error: the cup on the table is green. [12, 30, 200, 260]",
    "No, there is no hallucination; the description matches the image.",
]


def responses(n: int, echo_share: float, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    parrot = prompts.load_template("gavel_v1").render(
        caption="A brown dog sits on a red sofa.", box_instruction=""
    )
    return [parrot if rng.random() < echo_share else rng.choice(ANSWERS) for _ in range(n)]


class NoFilter:
    """Nothing is ever copied: the reader without the filter's cost."""

    fragments = ()

    def remove(self, text: str) -> Stripped:
        return Stripped(text, 0)


def timed(texts: list[str], echo: EchoFilter | NoFilter) -> float:
    start = time.perf_counter()
    for text in texts:
        read_answer(text, echo=echo)  # type: ignore[arg-type]
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--echo-share", type=float, default=0.01)
    args = parser.parse_args()
    texts = responses(args.n, args.echo_share)
    shipped = echo_filter()
    results: dict[str, list[float]] = {"without": [], "with": []}
    for _ in range(3):
        for name, echo in (("without", NoFilter()), ("with", shipped)):
            results[name].append(timed(texts, echo))
    best = {name: min(times) for name, times in results.items()}
    for name in ("without", "with"):
        print(f"{name:>7} the echo filter: {best[name]:.2f} s, "
              f"{1e6 * best[name] / args.n:.1f} us per response")  # fmt: skip
    print(f"ratio with/without: {best['with'] / best['without']:.2f} "
          f"({len(shipped.fragments)} prompt fragments, {args.echo_share:.0%} parroted)")  # fmt: skip


if __name__ == "__main__":
    main()
