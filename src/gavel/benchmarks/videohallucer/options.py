"""VideoHallucer's own options: the answer rule."""

from __future__ import annotations

from gavel.benchmarks.spec import BenchmarkOption
from gavel.parsing.yesno import ANSWER_RULES

OPTIONS = (
    BenchmarkOption(
        "answer_rule",
        "--answer-rule",
        "official = the gold word anywhere as a whole word; strict = an unhedged yes/no, else "
        "unknown.",
        ("score",),
        default="official",
        choices=ANSWER_RULES,
    ),
)
