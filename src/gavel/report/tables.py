"""The paper's Table 1 layout, rendered as a terminal table, Markdown, CSV or JSON.

Values are on 0–100 with one decimal, as in the paper. A table is built once as plain rows
(:class:`Table`) and every output format renders those same rows, so the formats cannot disagree.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gavel.records import CATEGORY_COLUMNS, Result

FORMATS = ("table", "markdown", "csv", "latex", "json")


@dataclass
class Table:
    title: str
    headers: list[str]
    rows: list[list[str]]
    notes: list[str]


def fmt(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def gavel_table(runs: Sequence[tuple[str, Result]]) -> Table:
    """One row per run: grounding, verification, explanation (when judged) and failures."""
    judges = {
        name: r.metrics["explanation"]["judge"]
        for name, r in runs
        if r.metrics.get("explanation") and isinstance(r.metrics["explanation"].get("judge"), dict)
    }
    with_explanation = any(r.metrics.get("explanation") for _, r in runs)
    any_proxy = any(j.get("proxy") for j in judges.values())
    headers = ["Method", "A@0.3", "A@0.5", "A@0.7", "Acc", "P", "R", "F1"]
    if with_explanation:
        headers += ["Avg (proxy)" if any_proxy else "Avg", *CATEGORY_COLUMNS]
    headers += ["log2 area", "n", "failed"]
    rows = []
    for name, result in runs:
        g = result.metrics["grounding"]
        v = result.metrics["verification"]
        row = [name, fmt(g["A@0.3"]), fmt(g["A@0.5"]), fmt(g["A@0.7"])]
        row += [fmt(v["accuracy"]), fmt(v["precision"]), fmt(v["recall"]), fmt(v["f1"])]
        if with_explanation:
            e = result.metrics.get("explanation") or {}
            row += [fmt(e.get("Avg"), 0)] + [fmt(e.get(c), 0) for c in CATEGORY_COLUMNS]
        c = result.counts
        failed = c.get("missing", 0) + c.get("model_error", 0) + c.get("unparseable", 0)
        row += [fmt(result.metrics["area_ratio"]["median_log2"], 2), str(c["total"]), str(failed)]
        rows.append(row)
    match = runs[0][1].manifest.settings.get("match") if runs else None
    notes = [
        f"A@t: % of samples with a gold box whose IoU >= t (match: {match})",
        "Acc/P/R/F1: verification, hallucinated = positive",
        "failed = missing + model errors + unparseable (all counted as wrong)",
    ]
    for judge in dict.fromkeys(_describe_judge(j) for j in judges.values()):
        notes.append(judge)
    return Table("GAVEL", headers, rows, notes)


def _describe_judge(judge: dict[str, Any]) -> str:
    name = judge.get("name", "?")
    if judge.get("proxy"):
        return (
            f"Avg and categories: explanation score x20 by {name}, an offline embedding PROXY, "
            "not the paper's LLM-judge protocol"
        )
    return f"Avg and categories: explanation score x20 by the LLM judge {name} (paper protocol)"


def render(table: Table, style: str, results: Sequence[tuple[str, Result]] = ()) -> str:
    if style == "markdown":
        lines = ["| " + " | ".join(table.headers) + " |", "|" + "---|" * len(table.headers)]
        lines += ["| " + " | ".join(row) + " |" for row in table.rows]
        return "\n".join(lines) + "\n"
    if style == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(table.headers)
        writer.writerows(table.rows)
        return buffer.getvalue()
    if style == "latex":
        return _latex(table)
    if style == "json":
        import msgspec

        payload: dict[str, Any] = {name: msgspec.to_builtins(r) for name, r in results}
        return json.dumps(payload, indent=2) + "\n"
    return _rich(table)


_LATEX_SPECIAL = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
                  "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                  "\\": r"\textbackslash{}", "–": "--", "−": "$-$"}  # fmt: skip


def _escape_latex(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def _latex(table: Table) -> str:
    """A booktabs tabular, text escaped (model names may hold _ or &)."""
    spec = "l" + "r" * (len(table.headers) - 1)
    lines = [f"\\begin{{tabular}}{{{spec}}}", "\\toprule"]
    lines.append(" & ".join(_escape_latex(h) for h in table.headers) + r" \\")
    lines.append("\\midrule")
    lines += [" & ".join(_escape_latex(cell) for cell in row) + r" \\" for row in table.rows]
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


def _rich(table: Table) -> str:
    """A terminal table; columns empty in every row (a category no run has) are left out."""
    from rich.console import Console
    from rich.table import Table as RichTable

    keep = [
        i for i in range(len(table.headers)) if i == 0 or any(row[i] != "–" for row in table.rows)
    ]
    rich_table = RichTable(title=table.title, caption="\n".join(table.notes))
    for index in keep:
        if index == 0:
            rich_table.add_column(table.headers[index], justify="left", no_wrap=True)
        else:
            rich_table.add_column(table.headers[index], justify="right")
    for row in table.rows:
        rich_table.add_row(*(row[i] for i in keep))
    console = Console(file=io.StringIO(), width=max(100, 10 * len(keep) + 20), force_terminal=False)
    console.print(rich_table)
    return console.file.getvalue()  # type: ignore[attr-defined]
