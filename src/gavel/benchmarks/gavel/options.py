"""GAVEL's own options: how answers are read and scored, which prompt asks, what synth makes."""

from __future__ import annotations

from gavel.benchmarks.spec import BenchmarkOption
from gavel.errors import ConfigError
from gavel.matching_names import POLICY_NAMES
from gavel.parsing import convention_names
from gavel.synth.vocabulary import GAVEL_CATEGORIES


def parse_weights(text: str | None) -> dict[str, float] | None:
    """``"Qty=2,Color=1"`` -> weights per category (unlisted categories get 0)."""
    if not text:
        return None
    weights = {}
    for part in text.split(","):
        name, _, value = part.partition("=")
        if name not in GAVEL_CATEGORIES:
            allowed = ", ".join(GAVEL_CATEGORIES)
            raise ConfigError(f"unknown category {name!r}; choose from {allowed}")
        try:
            weights[name] = float(value or 1)
        except ValueError:
            raise ConfigError(f"weight of {name} must be a number, got {value!r}") from None
    if not any(weights.values()):
        raise ConfigError("at least one category needs a positive weight")
    return weights


OPTIONS = (
    BenchmarkOption(
        "prompt",
        "--prompt",
        "Prompt template shipped with gavel [default: the preset's, gavel_v1].",
        ("generate",),
    ),
    BenchmarkOption(
        "box_format",
        "--box-format",
        "Coordinate convention of boxes in responses, for predictions that do not declare "
        "their own box_format. Never guessed.",
        ("score",),
        choices=tuple(convention_names()),
    ),
    BenchmarkOption(
        "match",
        "--match",
        "How several predicted/gold boxes become one IoU per sample.",
        ("score",),
        default="union",
        choices=tuple(POLICY_NAMES),
    ),
    BenchmarkOption(
        "clean_share",
        "--clean-share",
        "Share of captions without an error [default: 0.07].",
        ("synth",),
        kind=float,
        minimum=0,
        maximum=1,
        show_default=False,
    ),
    BenchmarkOption(
        "categories",
        "--categories",
        "Category weights, e.g. 'Qty=2,Color=1' [default: all seven equally].",
        ("synth",),
        parse=parse_weights,
    ),
)
