"""DetailVerifyBench's own options: the scoring mode, thinking, empty strata, synth's share."""

from __future__ import annotations

from gavel.benchmarks.spec import BenchmarkOption

MODES = ("official", "strict")
#: What an empty length stratum shows: ``null`` (no mean), or ``zero`` (0.0, as the official
#: ``calculate_metrics.py`` writes, for comparing with its output number for number).
EMPTY_GROUPS = ("null", "zero")

OPTIONS = (
    BenchmarkOption(
        "dvb_mode",
        "--mode",
        "official drops invalid answers from scoring (and counts them); strict scores them as "
        "flagging nothing.",
        ("score",),
        default="official",
        choices=MODES,
    ),
    BenchmarkOption(
        "thinking",
        "--thinking",
        "generate: the official thinking prompt; score: read answers as the official "
        "thinking-mode run does.",
        ("generate", "score"),
        default=False,
        kind=bool,
    ),
    BenchmarkOption(
        "empty_groups",
        "--empty-groups",
        "What a length stratum without captions shows; zero = the official script's 0.0.",
        ("score",),
        default="null",
        choices=EMPTY_GROUPS,
    ),
    BenchmarkOption(
        "clean_share",
        "--clean-share",
        "Share of descriptions without a hallucination [default: 0.2].",
        ("synth",),
        kind=float,
        minimum=0,
        maximum=1,
        show_default=False,
    ),
)
