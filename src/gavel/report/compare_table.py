"""The table ``gavel compare`` shows: one row per metric of a paired comparison of two runs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from gavel.report.compare import Comparison
from gavel.tables import Table

HEADERS = [
    "Metric", "A", "B", "A−B", "95% CI", "p (bootstrap)", "A only / B only", "p (McNemar)", "n",
]  # fmt: skip


def comparison_table(
    benchmark: str,
    comparisons: Sequence[Comparison],
    first: Path,
    second: Path,
    *,
    resamples: int,
    seed: int,
) -> Table:
    """Percentages with one decimal and p-values with three digits; a bootstrap p-value of 0
    is shown as below the resolution ``resamples`` gives, never as 0."""
    rows = []
    for c in comparisons:
        discordant = f"{c.discordant[0]}/{c.discordant[1]}" if c.discordant else "–"
        mcnemar = f"{c.p_mcnemar:.3g}" if c.p_mcnemar is not None else "–"
        rows.append([
            c.metric, f"{c.a:.1f}", f"{c.b:.1f}", f"{c.difference:+.1f}",
            f"[{c.interval[0]:+.1f}, {c.interval[1]:+.1f}]",
            f"{c.p_bootstrap:.3g}" if c.p_bootstrap > 0 else f"<{1 / resamples:.1g}",
            discordant, mcnemar, str(c.n),
        ])  # fmt: skip
    return Table(
        f"{benchmark}: {first} (A) vs {second} (B)",
        list(HEADERS),
        rows,
        [f"paired percentile bootstrap, {resamples} resamples, seed {seed}; McNemar exact"],
    )
