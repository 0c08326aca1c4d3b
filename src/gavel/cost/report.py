"""The dry-run report: one record, rendered by one function as a table or as JSON.

The record is a list of named sections, so more can be added without touching the renderer:
the estimate of each model is one section, the total another, and the resolved configuration
(every flag's value and whether it came from the default, a ``--config`` file or the command
line) the last.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gavel.cost.estimate import Estimate
from gavel.cost.prices import TABLE_DATE

STYLES = ("table", "json")


@dataclass
class Section:
    title: str
    #: (label, value, how it was found) rows, in order.
    rows: list[tuple[str, Any, str]] = field(default_factory=list)

    def add(self, label: str, value: Any, note: str = "") -> None:
        self.rows.append((label, value, note))


@dataclass
class DryRunReport:
    sections: list[Section] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "dry_run": True,
            "sections": [
                {
                    "title": s.title,
                    "rows": [{"name": n, "value": v, "how": h} for n, v, h in s.rows],
                }
                for s in self.sections
            ],
            "notes": self.notes,
        }


def estimate_section(part: Estimate) -> Section:
    section = Section(f"{part.role}: {part.model}")
    section.add("requests", part.requests, "in the run")
    section.add("already in the resume file", part.resumed, "not sent")
    section.add("answered by the cache", part.cached, "not sent")
    section.add("to send", part.to_send, "")
    section.add("input tokens (text)", part.text_tokens, part.text_method)
    if part.images:
        section.add("images and frames", part.images, "")
        section.add("input tokens (images)", part.image_tokens, part.image_method)
    section.add("input tokens", part.input_tokens, "")
    section.add("output tokens", part.output_tokens, part.output_method)
    if part.price is None:
        section.add("cost (USD)", None, "no price: give --price IN,OUT (USD per million tokens)")
    else:
        how = f"${part.price.input:g} in / ${part.price.output:g} out per million, "
        how += part.price.source + (" - approximate" if part.price.approximate else "")
        section.add("cost (USD)", round(part.cost or 0.0, 6), how)
    return section


def configuration_section(resolved: dict[str, dict[str, Any]]) -> Section:
    """Every parameter's final value and where it came from (``gavel.cli.config_file``)."""
    section = Section("configuration")
    for name, entry in resolved.items():
        section.add(name, entry["value"], entry["from"])
    return section


def build_report(
    parts: list[Estimate], configuration: dict[str, dict[str, Any]] | None = None
) -> DryRunReport:
    """The report of a dry run of these models' requests (and of the run's configuration)."""
    report = DryRunReport([estimate_section(p) for p in parts])
    if len(parts) > 1:
        total = Section("total")
        known = [p.cost for p in parts if p.cost is not None]
        total.add("requests to send", sum(p.to_send for p in parts), "")
        complete = len(known) == len(parts)
        total.add("cost (USD)", round(sum(known), 6) if known else None,
                  "" if complete else "only the parts with a price")  # fmt: skip
        report.sections.append(total)
    if configuration is not None:
        report.sections.append(configuration_section(configuration))
    for part in parts:
        report.notes.extend(f"{part.role}: {note}" for note in part.notes)
        if part.price is not None and part.price.approximate:
            report.notes.append(
                f"{part.role}: the built-in prices were checked in {TABLE_DATE} and are "
                "approximate; give the current ones with a price flag"
            )
    report.notes.append("dry run: nothing was sent")
    return report


def dry_run_text(parts: list[Estimate], configuration: Mapping[str, Any] | None, style: str) -> str:
    """The ``--dry-run`` report of ``parts`` (a generation's, a judge's estimate) with the
    run's resolved configuration, in ``style`` (``table`` or ``json``), as commands print it."""
    return render(build_report(parts, dict(configuration) if configuration else None), style)


def render(report: DryRunReport, style: str = "table") -> str:
    """The report as a rich table (text) or as JSON."""
    if style == "json":
        return json.dumps(report.to_dict(), indent=2) + "\n"
    from rich.console import Console
    from rich.table import Table

    def new_table(title: str) -> Table:
        table = Table(title=title, show_lines=False)
        for column in ("", "value", "how"):
            table.add_column(column)
        return table

    # The configuration's long values (paths) get a table of their own, so they do not
    # squeeze the estimate's explanations.
    tables = {"": new_table("Dry run"), "configuration": new_table("Configuration")}
    for section in report.sections:
        table = tables["configuration" if section.title == "configuration" else ""]
        if section.title != "configuration":
            table.add_section()
            table.add_row(f"[bold]{section.title}[/bold]", "", "")
        for label, value, how in section.rows:
            table.add_row(label, _shown(value), how)
    buffer = io.StringIO()
    console = Console(file=buffer, width=120, no_color=True)
    for table in tables.values():
        if table.row_count:
            console.print(table)
    for note in report.notes:
        buffer.write(f"note: {note}\n")
    return buffer.getvalue()


def _shown(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, list):
        return ", ".join(map(str, value)) if value else "-"
    return str(value)
