"""Reading finished runs: an HTML report of them, or a paired comparison of two.

What ``gavel report`` and ``gavel compare`` do, as functions, so a notebook gets the same page
and the same numbers (and, with ``format``, the same text) as the command line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gavel.report.compare import Comparison

__all__ = ["COMPARE_FORMATS", "ComparedRuns", "compare", "report"]

#: The ``format`` values :func:`compare` renders (``gavel compare --format``).
COMPARE_FORMATS = ("table", "markdown", "csv", "latex", "json")


def report(
    runs: Iterable[str | Path],
    out: str | Path,
    *,
    title: str | None = None,
    page_size: int = 100,
    image_root: str | Path | None = None,
) -> Path:
    """Write one self-contained HTML page (``out/index.html``) for the runs named (results.json
    files, run folders, or folders holding run folders; any of the three benchmarks); returns
    the page's path. Images are read as ``gavel report --image-root`` says."""
    from gavel.report.html import write_report
    from gavel.report.runs import expand_runs

    if isinstance(runs, str | Path):  # one run, not the characters of its name
        runs = [runs]
    found = expand_runs(Path(run) for run in runs)
    root = Path(image_root) if image_root is not None else None
    return write_report(found, Path(out), title=title, page_size=page_size, image_root=root)


@dataclass(frozen=True)
class ComparedRuns:
    """A comparison of two scored runs: the records, what to warn about, and ``text``, the
    rendering in the format asked for (what ``gavel compare`` prints)."""

    benchmark: str
    comparisons: list[Comparison]
    warnings: list[str]
    text: str


def compare(
    first: str | Path,
    second: str | Path,
    *,
    resamples: int = 2000,
    seed: int = 0,
    format: str = "table",
) -> ComparedRuns:
    """Paired bootstrap (every metric) and McNemar's exact test (right/wrong metrics) of run A
    (``first``) against run B, on the per-sample scores beside each results.json; A − B > 0
    favours A. ``format`` is one of :data:`COMPARE_FORMATS`."""
    from gavel.report.compare import compare_runs
    from gavel.report.compare_table import comparison_table
    from gavel.report.tables import render
    from gavel.setting_checks import MAX_BOOTSTRAP, MAX_SEED, Bound, check_choice

    resamples = int(Bound(int, 100, MAX_BOOTSTRAP).check("--bootstrap", resamples))
    seed = int(Bound(int, 0, MAX_SEED).check("--seed", seed))
    check_choice("--format", format, COMPARE_FORMATS)
    first, second = Path(first), Path(second)
    benchmark, comparisons, warnings = compare_runs(first, second, resamples=resamples, seed=seed)
    if format == "json":
        records = {"benchmark": benchmark, "comparisons": [asdict(c) for c in comparisons]}
        text = json.dumps(records, indent=2) + "\n"
    else:
        table = comparison_table(
            benchmark, comparisons, first, second, resamples=resamples, seed=seed
        )
        text = render(table, format)
    return ComparedRuns(benchmark, comparisons, warnings, text)
