"""The report's figures as PNG bytes (matplotlib's Agg canvas; pyplot and its global state are
never touched, so drawing a report does not change a caller's backend).

Every function takes plain numbers (lists and dicts read from ``results.json`` and the per-sample
scores) and returns the bytes of one PNG, so each figure can be tested without a run.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from typing import Any

from gavel.metrics.agreement import OVERALL, SCALE
from gavel.records import CATEGORY_COLUMNS

#: Gold and predicted box colours, shared with the gallery's CSS.
GOLD = "#1a9850"
PRED = "#d6267b"
DPI = 100


def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _png(figure) -> bytes:
    buffer = io.BytesIO()
    # No "Software" text chunk: the page then holds no URL at all, not even inside a PNG.
    figure.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def _short(name: str, limit: int = 28) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "…"


def area_ratio_plot(runs: Sequence[tuple[str, Sequence[float]]]) -> bytes:
    """The paper's Figure 3: log2(predicted / gold area) per run, box plot with the points.

    0 is a box of the right size; +1 twice too large, −1 half as large.
    """
    figure = _figure(max(5.0, 1.1 * len(runs) + 2.5), 4.0)
    axes = figure.add_subplot()
    values = [[v for v in vs if v is not None and math.isfinite(v)] for _, vs in runs]
    positions = list(range(1, len(runs) + 1))
    filled = [(p, v) for p, v in zip(positions, values, strict=True) if v]
    if filled:
        axes.boxplot(
            [v for _, v in filled],
            positions=[p for p, _ in filled],
            widths=0.55,
            showfliers=False,
            medianprops={"color": PRED, "linewidth": 2},
        )
        for position, vs in filled:
            # A fixed, deterministic jitter so the same run always draws the same picture.
            offsets = [((i * 0.618) % 1.0 - 0.5) * 0.3 for i in range(len(vs))]
            axes.scatter(
                [position + o for o in offsets], vs, s=9, alpha=0.45, color="#4477aa", zorder=3
            )
    axes.axhline(0.0, color=GOLD, linewidth=1, linestyle="--")
    axes.set_xticks(
        positions, [f"{_short(n)}\nn={len(v)}" for (n, _), v in zip(runs, values, strict=True)]
    )
    axes.tick_params(axis="x", labelrotation=30 if len(runs) > 4 else 0, labelsize=8)
    axes.set_xlim(0.4, len(runs) + 0.6)
    axes.set_ylabel("log2(predicted area / gold area)")
    axes.set_title("Predicted / gold box area (0 = right size)")
    axes.grid(axis="y", alpha=0.3)
    return _png(figure)


def box_size_histogram_plot(datasets: Sequence[tuple[str, Mapping[str, int]]]) -> bytes:
    """The paper's Figure 6: gold boxes per decade of pixel area, one bar group per bin."""
    bins = list(datasets[0][1]) if datasets else []
    figure = _figure(max(6.0, 0.9 * len(bins) + 2), 3.8)
    axes = figure.add_subplot()
    width = 0.8 / max(1, len(datasets))
    for index, (name, hist) in enumerate(datasets):
        xs = [i + (index - (len(datasets) - 1) / 2) * width for i in range(len(bins))]
        axes.bar(xs, [hist.get(b, 0) for b in bins], width=width, label=_short(name, 40))
    axes.set_xticks(range(len(bins)), [f"{b}" for b in bins], fontsize=8)
    axes.set_xlabel("gold box area (pixels, decade bins)")
    axes.yaxis.get_major_locator().set_params(integer=True)
    axes.set_ylabel("boxes")
    axes.set_title("Gold box sizes")
    axes.grid(axis="y", alpha=0.3)
    if datasets:
        axes.legend(fontsize=8)
    return _png(figure)


def category_plot(datasets: Sequence[tuple[str, Mapping[str, int]]]) -> bytes:
    """The paper's Figure 2: samples per hallucination category (and without one)."""
    columns = [c for c in CATEGORY_COLUMNS if any(counts.get(c) for _, counts in datasets)]
    columns = columns or list(CATEGORY_COLUMNS)
    figure = _figure(max(6.0, 0.75 * len(columns) + 2), 3.8)
    axes = figure.add_subplot()
    width = 0.8 / max(1, len(datasets))
    for index, (name, counts) in enumerate(datasets):
        xs = [i + (index - (len(datasets) - 1) / 2) * width for i in range(len(columns))]
        axes.bar(xs, [counts.get(c, 0) for c in columns], width=width, label=_short(name, 40))
    axes.set_xticks(range(len(columns)), columns, fontsize=8)
    axes.yaxis.get_major_locator().set_params(integer=True)
    axes.set_ylabel("samples")
    axes.set_title("Samples per category")
    axes.grid(axis="y", alpha=0.3)
    if datasets:
        axes.legend(fontsize=8)
    return _png(figure)


def confusion_plot(runs: Sequence[tuple[str, Mapping[str, int]]]) -> bytes:
    """Verification confusion matrix per run (hallucinated = positive): rows gold, columns
    prediction, counts from ``metrics.verification`` (failed answers count as wrong)."""
    count = max(1, len(runs))
    columns = min(4, count)
    rows = math.ceil(count / columns)
    figure = _figure(2.9 * columns + 0.4, 2.7 * rows + 0.3)
    grid = figure.subplots(rows, columns, squeeze=False)
    for index, cell in enumerate(grid.flat):
        if index >= len(runs):
            cell.set_axis_off()
            continue
        name, v = runs[index]
        matrix = [[v.get("tp", 0), v.get("fn", 0)], [v.get("fp", 0), v.get("tn", 0)]]
        peak = max(1, *matrix[0], *matrix[1])
        cell.imshow(matrix, cmap="Blues", vmin=0, vmax=peak)
        for r in range(2):
            for c in range(2):
                value = matrix[r][c]
                colour = "white" if value > peak * 0.6 else "black"
                cell.text(c, r, str(value), ha="center", va="center", color=colour, fontsize=11)
        cell.set_xticks([0, 1], ["halluc.", "clean"], fontsize=8)
        cell.set_yticks([0, 1], ["halluc.", "clean"], fontsize=8)
        cell.set_xlabel("predicted", fontsize=8)
        cell.set_ylabel("gold", fontsize=8)
        cell.set_title(_short(name, 34), fontsize=9)
    return _png(figure)


def category_accuracy_plot(
    runs: Sequence[tuple[str, Mapping[str, float | None]]],
    metric: str = "A@0.5",
    ylabel: str | None = None,
) -> bytes:
    """A per-category value on 0–100 (``A@0.5`` by default) per run, grouped by category;
    absent categories are left empty."""
    columns = [c for c in CATEGORY_COLUMNS if any(v.get(c) is not None for _, v in runs)]
    columns = columns or [c for c in CATEGORY_COLUMNS if c != "No hall."]
    figure = _figure(min(16.0, max(6.0, 0.3 * len(columns) * max(1, len(runs)) + 2.5)), 4.4)
    axes = figure.add_subplot()
    width = 0.85 / max(1, len(runs))
    for index, (name, values) in enumerate(runs):
        xs = [i + (index - (len(runs) - 1) / 2) * width for i in range(len(columns))]
        heights = [values.get(c) for c in columns]
        bars = axes.bar(
            [x for x, h in zip(xs, heights, strict=True) if h is not None],
            [h for h in heights if h is not None],
            width=width,
            label=_short(name, 40),
        )
        for bar, height in zip(bars, [h for h in heights if h is not None], strict=True):
            if height == 0:  # a zero would be invisible, and look like an absent category
                axes.text(bar.get_x() + bar.get_width() / 2, 1, "0", ha="center", fontsize=6)
    axes.set_xticks(range(len(columns)), columns, fontsize=8)
    axes.set_ylim(0, 100)
    axes.set_ylabel(ylabel or f"{metric} (%)")
    axes.set_title(f"{metric} per category")
    axes.grid(axis="y", alpha=0.3)
    if runs:
        figure.legend(fontsize=8, ncols=min(6, len(runs)), loc="outside lower center")
    return _png(figure)


def score_agreement_plot(pairs: Sequence[Mapping[str, Any]]) -> bytes:
    """Judge agreement: a 5x5 heatmap of score counts per pair of raters (rows: the first,
    columns: the second), counts written in the cells, pairs in a near-square grid. ``pairs``
    are the records of ``gavel judge-agreement`` (``a``, ``b``, ``n``, ``confusion``, and the
    overall QWK under ``agreement[OVERALL]["qwk"]``)."""
    scale = SCALE
    columns = max(1, math.ceil(math.sqrt(len(pairs))))
    rows = max(1, math.ceil(len(pairs) / columns))
    figure = _figure(3.4 * columns, 3.4 * rows)
    for index, pair in enumerate(pairs):
        axes = figure.add_subplot(rows, columns, index + 1)
        counts = pair["confusion"]
        top = max(max(row) for row in counts) or 1
        axes.imshow(counts, cmap="Blues", vmin=0, vmax=top)
        for i, row in enumerate(counts):
            for j, count in enumerate(row):
                colour = "white" if count > top / 2 else "black"
                axes.text(j, i, str(count), ha="center", va="center", color=colour, fontsize=9)
        ticks = list(range(len(scale)))
        axes.set_xticks(ticks, [str(s) for s in scale])
        axes.set_yticks(ticks, [str(s) for s in scale])
        axes.set_xlabel(_short(pair["b"], 26))
        axes.set_ylabel(_short(pair["a"], 26))
        qwk = pair["agreement"][OVERALL]["qwk"]
        axes.set_title(f"n={pair['n']}, QWK {'–' if qwk is None else f'{qwk:.3f}'}", fontsize=10)
    return _png(figure)
