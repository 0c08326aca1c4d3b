"""Tables rendered as a terminal table, Markdown, CSV, LaTeX or JSON.

Values are on 0–100 with one decimal, as in the paper. A table is built once as plain rows
(:class:`Table`) and every output format renders those same rows, so the formats cannot disagree.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

from gavel.records import Result
from gavel.tables import Table

FORMATS = ("table", "markdown", "csv", "latex", "json")


def render(table: Table, style: str, results: Sequence[tuple[str, Result]] = ()) -> str:
    if style == "markdown":
        lines = ["| " + " | ".join(table.headers) + " |", "|" + "---|" * len(table.headers)]
        lines += ["| " + " | ".join(row) + " |" for row in table.rows]
        lines += ["", *(f"*{caveat}*" for caveat in table.caveats)] if table.caveats else []
        return "\n".join(lines) + "\n"
    if style == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(table.headers)
        writer.writerows(table.rows)
        writer.writerows([f"# {caveat}"] for caveat in table.caveats)  # comment rows
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
    lines.append("\\bottomrule")
    for caveat in table.caveats:
        columns = len(table.headers)
        lines.append(f"\\multicolumn{{{columns}}}{{l}}{{{_escape_latex(caveat)}}} \\\\")
    lines.append("\\end{tabular}")
    return "\n".join(lines) + "\n"


def _rich(table: Table) -> str:
    """A terminal table; columns empty in every row (a category no run has) are left out."""
    from rich.console import Console
    from rich.table import Table as RichTable

    keep = [
        i for i in range(len(table.headers)) if i == 0 or any(row[i] != "–" for row in table.rows)
    ]
    rich_table = RichTable(title=table.title, caption="\n".join(table.notes + table.caveats))
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
