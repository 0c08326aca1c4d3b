"""One self-contained HTML page for one or more scored runs: ``gavel report RUN... --out DIR``.

The page (``DIR/index.html``) opens from disk with no network: CSS and script are inline,
figures are embedded PNGs, and image thumbnails and video frames are small JPEG files written
beside it (``DIR/thumbs/``, ``DIR/frames/``) and referenced relatively. Runs are grouped by
benchmark; each group gets the benchmark's official table (with 95% intervals where the results
carry them, the best value of each column in bold), figures (GAVEL), and a paged, filterable
gallery of the samples.

Safety: every text that comes from a data file, a model or a path is escaped before it enters
the markup, and the gallery's data is embedded as JSON that the script only ever inserts with
``textContent``. A Content-Security-Policy allows no network at all and runs only the page's own
script (by its hash), so even a text that slipped through could not run or load anything.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import html
import json
import math
import os
import re
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import msgspec

from gavel.errors import ConfigError, DataError, GavelError
from gavel.io.jsonl import field_of, parse_json, refuse_non_finite
from gavel.io.reading import bounded_lines, read_regular
from gavel.io.run_files import check_run_files, scores_path
from gavel.records import CATEGORY_COLUMNS, Result
from gavel.report.gallery import (
    GAVEL_OUTCOMES,
    RunView,
    detailverify_gallery,
    gavel_gallery,
    videohallucer_gallery,
)
from gavel.tables import Table
from gavel.version import __version__

TITLES = {"gavel": "GAVEL", "detailverify": "DetailVerifyBench", "videohallucer": "VideoHallucer"}


def slug(text: str) -> str:
    """An element id made from a benchmark name (safe in an attribute and a fragment)."""
    return re.sub(r"[^a-z0-9_-]", "-", text.lower()) or "benchmark"


def esc(value: Any) -> str:
    """Text for HTML content or a quoted attribute."""
    return html.escape(str(value), quote=True)


# --- loading --------------------------------------------------------------------------------


def results_file(run: Path) -> Path:
    """A run folder (holding ``results.json``) or a results file itself."""
    run = Path(run)
    return run / "results.json" if run.is_dir() else run


def load_run(run: Path) -> RunView:
    path = results_file(run)
    try:
        payload = read_regular(path)
    except FileNotFoundError:
        raise DataError(
            path, None, None, "results file not found (written by `gavel score`)"
        ) from None
    except OSError as error:
        raise DataError(path, None, None, f"cannot read ({error.strerror})") from None
    payload = payload.removeprefix(b"\xef\xbb\xbf")  # a BOM, as the data readers take it
    try:
        result = msgspec.json.decode(payload, type=Result)
    except msgspec.ValidationError as error:
        message = str(error).split(" - at ")[0]
        raise DataError(
            path, None, field_of(error), f"not a gavel results file ({message})"
        ) from None
    except (msgspec.DecodeError, RecursionError):
        # names the problem: not UTF-8, too deep, a lone surrogate, NaN or infinity's field
        refuse_non_finite(parse_json(payload, path), path)
        raise DataError(path, None, None, "not a gavel results file (not standard JSON)") from None
    raw = json.loads(payload)
    scores_file = scores_path(path)
    scores: list[dict[str, Any]] | None = None
    notes = []
    if scores_file.is_file():
        check_run_files(path, result.files)
        scores = []
        first_line: dict[str, int] = {}
        with scores_file.open("rb") as handle:
            for number, line in enumerate(bounded_lines(handle, scores_file), 1):
                if not line.strip():
                    continue
                record = parse_json(line, scores_file, number)
                if not isinstance(record, dict):
                    raise DataError(scores_file, number, None, "expected a JSON object")
                sample = record.get("id")
                if not isinstance(sample, str):
                    raise DataError(scores_file, number, "id", "missing or not a string")
                if sample in first_line:
                    raise DataError(
                        scores_file, number, "id",
                        f"duplicate id {sample!r} (first on line {first_line[sample]})",
                    )  # fmt: skip
                first_line[sample] = number
                scores.append(record)
    else:
        notes.append(f"no per-sample scores ({scores_file.name}) beside the results")
    return RunView(name="", path=path, result=result, raw=raw, scores=scores, notes=notes)


def _label_parts(path: Path) -> tuple[str, ...]:
    parts = path.resolve().parent.parts
    return parts if path.name == "results.json" else (*parts, path.stem)


def printable(text: str) -> str:
    """Text every writer can encode: a path that is not valid UTF-8 (a folder name in another
    encoding) keeps its odd bytes as visible ``\\udcXX`` escapes."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def run_labels(paths: Sequence[Path]) -> list[str]:
    """The shortest trailing part of each run's path that tells the runs apart
    (``photos/gpt/results.json`` and ``photos/gemini/results.json`` -> ``gpt``, ``gemini``)."""
    parts = [_label_parts(p) for p in paths]
    longest = max((len(p) for p in parts), default=1)
    for depth in range(1, longest + 1):
        labels = ["/".join(p[-depth:]) or str(p) for p in parts]
        if len(set(labels)) == len(labels):
            return labels
    return ["/".join(p) for p in parts]


def load_runs(runs: Sequence[Path]) -> list[RunView]:
    paths = list(dict.fromkeys(results_file(Path(r)).resolve() for r in runs))
    if not paths:
        raise ConfigError("no runs given")
    views = [load_run(p) for p in paths]
    groups: dict[str, list[RunView]] = {}
    for view in views:
        groups.setdefault(view.benchmark, []).append(view)
    for group in groups.values():  # names need to differ only within a benchmark's table
        for view, label in zip(group, run_labels([v.path for v in group]), strict=True):
            view.name = printable(label)
    return views


# --- tables ---------------------------------------------------------------------------------

#: Columns never ranked: counts, and bias measures with no "better" direction.
NOT_RANKED = {"n", "failed", "valid", "invalid", "YesDiff", "FPRatio"}
#: Columns whose best value is the one closest to zero.
CLOSEST_TO_ZERO = {"log2 area"}
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")


def ci_path(benchmark: str, header: str) -> tuple[str, ...] | None:
    """Where a table column's 95% interval lies in ``result.ci`` (None: no interval)."""
    if benchmark == "gavel":
        if header.startswith("A@"):
            return ("grounding", header)
        names = {"Acc": "accuracy", "P": "precision", "R": "recall", "F1": "f1"}
        return ("verification", names[header]) if header in names else None
    if benchmark == "detailverify":
        kinds = {"Tok": "token", "Sent": "sentence"}
        names = {"P": "precision", "R": "recall", "F1": "f1", "IoU": "iou"}
        kind, _, name = header.partition(" ")
        return (kinds[kind], names[name]) if kind in kinds and name in names else None
    if benchmark == "videohallucer":
        from gavel.benchmarks.videohallucer.table import SHORT_NAMES

        sides = {"Basic": "basic", "Halluc": "hallucination", "Overall": "paired"}
        if header == "Overall":
            return ("overall",)
        if header in ("Basic", "Halluc"):
            return (f"overall_{sides[header]}",)
        short, _, side = header.partition(" ")
        category = {v: k for k, v in SHORT_NAMES.items()}.get(short)
        return ("per_category", category, sides[side]) if category and side in sides else None
    return None


def _interval(ci: dict[str, Any], path: tuple[str, ...] | None) -> list[float] | None:
    node: Any = ci
    for key in path or ():
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    if (
        isinstance(node, list)
        and len(node) == 2
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in node)
    ):
        return [float(node[0]), float(node[1])]
    return None


def _value(cell: str) -> float | None:
    return float(cell) if _NUMBER.match(cell.strip()) else None


def best_rows(table: Table, column: int) -> set[int]:
    """Rows holding the best value of a column (ties all); none when fewer than two rows have
    a value, or the column is a count or a bias measure."""
    header = table.headers[column]
    if column == 0 or header in NOT_RANKED or header.split(" (")[0] in NOT_RANKED:
        return set()
    values = {i: _value(row[column]) for i, row in enumerate(table.rows)}
    present = {i: v for i, v in values.items() if v is not None}
    if len(present) < 2:
        return set()
    score: Callable[[float], float] = (lambda v: -abs(v)) if header in CLOSEST_TO_ZERO else float
    top = max(score(v) for v in present.values())
    return {i for i, v in present.items() if score(v) == top}


def table_html(
    benchmark: str, table: Table, results: Sequence[dict[str, Any]], *, table_id: str
) -> str:
    """The table as HTML: columns empty in every row left out, intervals under the values,
    best values bold."""
    keep = [
        i
        for i in range(len(table.headers))
        if i == 0 or any(row[i] not in ("–", "") for row in table.rows)
    ]
    best = {i: best_rows(table, i) for i in keep}
    head = "".join(f'<th scope="col">{esc(table.headers[i])}</th>' for i in keep)
    body = []
    for r, row in enumerate(table.rows):
        ci = results[r].get("ci") or {} if r < len(results) else {}
        cells = []
        for i in keep:
            if i == 0:
                cells.append(f'<th scope="row">{esc(row[i])}</th>')
                continue
            text = esc(row[i])
            if r in best[i]:
                text = f"<b>{text}</b>"
            interval = _interval(ci, ci_path(benchmark, table.headers[i]))
            if interval is not None and _value(row[i]) is not None:
                low, high = interval
                text += f'<span class="ci">[{low:.1f}, {high:.1f}]</span>'
            cls = ' class="best"' if r in best[i] else ""
            cells.append(f"<td{cls}>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    notes = "".join(f"<li>{esc(n)}</li>" for n in table.notes + table.caveats)
    notes += (
        "<li>Small brackets: 95% confidence interval (bootstrap, from the results). "
        "Bold: best among these runs (log2 area: closest to 0; counts and bias not ranked).</li>"
    )
    return (
        f'<div class="table-wrap"><table class="results" id="{table_id}">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
        f'<ul class="notes">{notes}</ul>'
    )


# --- figures --------------------------------------------------------------------------------


def _png(png: bytes, alt: str, caption: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return (
        f'<figure><img alt="{esc(alt)}" src="data:image/png;base64,{data}">'
        f"<figcaption>{esc(caption)}</figcaption></figure>"
    )


def _dataset_labels(runs: Sequence[RunView]) -> list[tuple[str, RunView]]:
    """One run per distinct data file (by hash), labelled by the shortest telling path part."""
    seen: dict[str, RunView] = {}
    for run in runs:
        key = run.result.manifest.data_sha256 or run.result.manifest.data_file or run.name
        seen.setdefault(key, run)
    chosen = list(seen.values())
    files = [Path(r.result.manifest.data_file or r.name) for r in chosen]
    parts = [f.parts for f in files]
    labels = []
    for depth in range(1, max((len(p) for p in parts), default=1) + 1):
        labels = ["/".join(p[-depth:]) for p in parts]
        if len(set(labels)) == len(labels):
            break
    return list(zip(labels, chosen, strict=True))


def gavel_figures(runs: Sequence[RunView]) -> str:
    try:
        import matplotlib  # noqa: F401
    except ImportError:  # a dependency; a broken install still gets tables and samples
        return '<p class="note">Figures need matplotlib, which is not installed.</p>'
    from gavel.report import plots

    figures = []
    with_scores = [r for r in runs if r.scores is not None]
    if with_scores:
        areas = [
            (r.name, [s["area_log2"] for s in r.scores or [] if _finite(s.get("area_log2"))])
            for r in with_scores
        ]
        figures.append(
            _png(
                plots.area_ratio_plot(areas),
                "box plot of log2 predicted/gold area per run",
                "Area ratio (paper Fig. 3): log2 of predicted over gold box area per sample "
                "with a valid predicted box; 0 = right size, +1 = twice too large.",
            )
        )
    datasets = _dataset_labels(runs)
    hists = [(label, r.raw["metrics"].get("gold_box_size_hist") or {}) for label, r in datasets]
    if any(h for _, h in hists):
        figures.append(
            _png(
                plots.box_size_histogram_plot([(label, h) for label, h in hists if h]),
                "histogram of gold box areas in decade bins",
                "Gold box sizes (paper Fig. 6): gold boxes per decade of pixel area, per data file.",
            )
        )
    counts = [
        (
            label,
            {c: int((r.raw["per_category"].get(c) or {}).get("n") or 0) for c in CATEGORY_COLUMNS},
        )
        for label, r in datasets
    ]
    figures.append(
        _png(
            plots.category_plot(counts),
            "bar chart of samples per category",
            "Categories (paper Fig. 2): samples per hallucination category, per data file.",
        )
    )
    figures.append(
        _png(
            plots.confusion_plot([(r.name, r.raw["metrics"]["verification"]) for r in runs]),
            "verification confusion matrices",
            "Verification per run: rows gold, columns the model's verdict (hallucinated = "
            "positive); failed answers count as wrong.",
        )
    )
    per_category = [
        (
            r.name,
            {
                c: ((r.raw["per_category"].get(c) or {}).get("grounding") or {}).get("A@0.5")
                for c in CATEGORY_COLUMNS
            },
        )
        for r in runs
    ]
    figures.append(
        _png(
            plots.category_accuracy_plot(per_category, "A@0.5"),
            "bar chart of A@0.5 per category and run",
            "Grounding per category: A@0.5 (% of samples with IoU >= 0.5) per category and run.",
        )
    )
    judged = [(r.name, r.raw["metrics"].get("explanation")) for r in runs]
    judged = [(name, e) for name, e in judged if isinstance(e, dict)]
    if judged:
        judges = sorted({str((e.get("judge") or {}).get("name", "?")) for _, e in judged})
        proxies = [e.get("judge") or {} for _, e in judged]
        proxies = [judge for judge in proxies if judge.get("proxy")]
        proxy = bool(proxies)
        embedding = all(judge.get("kind") == "embedding" for judge in proxies)
        figures.append(
            _png(
                plots.category_accuracy_plot(
                    [(name, {c: e.get(c) for c in CATEGORY_COLUMNS}) for name, e in judged],
                    "Explanation score",
                    "judge score x20",
                ),
                "bar chart of the explanation score per category and run",
                f"Explanation per category: the judge's 1-5 score x20, by {', '.join(judges)}"
                + (
                    f" ({'an offline embedding proxy' if embedding else 'a proxy'}, not the "
                    "paper's LLM-judge protocol)."
                    if proxy
                    else "."
                ),
            )
        )
    return '<div class="figures">' + "".join(figures) + "</div>"


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


# --- galleries ------------------------------------------------------------------------------


def json_script(element_id: str, data: Any) -> str:
    """Data for the script: JSON that cannot close its element (``<``, ``>``, ``&`` escaped)."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f'<script type="application/json" id="{element_id}">{text}</script>'


def _select(key: str, label: str, options: list[tuple[str, str, int]]) -> str:
    choices = "".join(
        f'<option value="{esc(value)}">{esc(text)} ({count})</option>'
        for value, text, count in options
    )
    return (
        f'<label>{esc(label)} <select data-filter="{key}">'
        f'<option value="">all</option>{choices}</select></label>'
    )


def _counts(items: list[dict[str, Any]], key: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in items:
        counts[str(item.get(key))] = counts.get(str(item.get(key)), 0) + 1
    return counts


def _ordered(counts: dict[str, int], order: Sequence[str]) -> list[str]:
    known = [v for v in order if v in counts]
    return known + sorted(v for v in counts if v not in order)


PAGER = (
    '<div class="pager"><button type="button" class="first" title="first page">«</button>'
    '<button type="button" class="prev">‹ previous</button>'
    '<span class="page-status" aria-live="polite"></span>'
    '<button type="button" class="next">next ›</button>'
    '<button type="button" class="last" title="last page">»</button></div>'
)


def gallery_html(
    element_id: str,
    data: dict[str, Any],
    *,
    page_size: int,
    filters: list[tuple[str, str, Sequence[str]]],
    legend: str = "",
) -> str:
    """The gallery's frame (filters, pagers, empty card list); the script fills the cards."""
    items = data["items"]
    selects = []
    for key, label, order in filters:
        counts = _counts(items, key)
        if key == "r":
            options = [
                (str(i), name, counts[str(i)])
                for i, name in enumerate(data["runs"])
                if str(i) in counts
            ]
        else:
            options = [(v, v, counts[v]) for v in _ordered(counts, order)]
        selects.append(_select(key, label, options))
    notes = "".join(f'<p class="note">{esc(n)}</p>' for n in data.get("notes", []))
    return (
        f'<div class="gallery" data-source="{element_id}-data" data-page-size="{page_size}" '
        f'id="{element_id}">{notes}'
        f'<div class="controls">{"".join(selects)}'
        f'<span class="match-count"></span></div>{legend}{PAGER}'
        '<div class="cards"></div>'
        f"{PAGER}"
        '<noscript><p class="note">The gallery is drawn by the page\'s script; '
        "allow JavaScript for this file to see the samples.</p></noscript>"
        "</div>" + json_script(f"{element_id}-data", data)
    )


GAVEL_LEGEND = (
    '<p class="legend"><span class="swatch gold"></span> gold box '
    '<span class="swatch pred"></span> predicted box · outcome: <b>hit</b> = IoU ≥ 0.5 with a '
    "gold box (right verdict when the sample has none), <b>miss</b> = parsed but not a hit. "
    "Click an image to enlarge it.</p>"
)
DVB_LEGEND = (
    '<p class="legend"><span class="tok tp">both</span> flagged by gold and model · '
    '<span class="tok fn">gold only</span> missed · '
    '<span class="tok fp">model only</span> false alarm</p>'
)


# --- the page -------------------------------------------------------------------------------


def _runs_table(runs: Sequence[RunView]) -> str:
    rows = []
    for run in runs:
        m = run.result.manifest
        warnings = run.result.warnings + run.notes
        notes = "".join(f"<li>{esc(w)}</li>" for w in warnings)
        rows.append(
            "<tr>"
            f'<th scope="row">{esc(run.name)}</th>'
            f"<td>{esc(TITLES.get(run.benchmark, run.benchmark))}</td>"
            f"<td>{esc(m.model or '–')}</td>"
            f'<td class="path">{esc(m.data_file or "–")}</td>'
            f'<td class="path">{esc(m.predictions_file or "–")}</td>'
            f'<td class="path">{esc(run.path)}</td>'
            f"<td>{esc(m.created_at)}</td>"
            f"<td>{esc((m.git_revision or '–')[:12])}</td>"
            f'<td><ul class="warnings">{notes}</ul></td>'
            "</tr>"
        )
    head = "".join(
        f'<th scope="col">{h}</th>'
        for h in (
            "Run",
            "Benchmark",
            "Model",
            "Data",
            "Predictions",
            "Results",
            "Scored",
            "Revision",
            "Warnings",
        )
    )
    return (
        '<div class="table-wrap"><table class="runs"><thead><tr>'
        f"{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def _incomplete(benchmark: str, spec: Any, runs: list[RunView], error: Exception) -> DataError:
    """The results file whose metrics lack what the benchmark's table reads (a file edited by
    hand, cut short or written by another tool): named, instead of an internal error."""
    culprit = runs[0]
    for run in runs:  # the table of each run alone finds the one that lacks a field
        try:
            spec.table([(run.name, run.result)])
        except (KeyError, TypeError, IndexError, AttributeError):
            culprit = run
            break
    what = f"lacks {error.args[0]!r}" if isinstance(error, KeyError) and error.args else str(error)
    return DataError(
        culprit.path, None, "metrics", f"not a complete {benchmark} results file ({what})"
    )


def _section(
    benchmark: str, runs: list[RunView], out: Path, page_size: int, image_root: Path | None
) -> str:
    title = TITLES.get(benchmark, benchmark)
    parts = [f'<section id="{slug(benchmark)}"><h2>{esc(title)}</h2>']
    try:
        from gavel.benchmarks.registry import get_benchmark

        spec = get_benchmark(benchmark)
    except GavelError as error:
        parts.append(f'<p class="note">{esc(error)}</p></section>')
        return "".join(parts)
    try:
        table = spec.table([(r.name, r.result) for r in runs])
    except (KeyError, TypeError, IndexError, AttributeError) as error:
        raise _incomplete(benchmark, spec, runs, error) from None
    parts.append(table_html(benchmark, table, [r.raw for r in runs], table_id=f"table-{benchmark}"))
    element = f"gallery-{benchmark}"
    if benchmark == "gavel":
        parts.append("<h3>Figures</h3>" + gavel_figures(runs))
        data = gavel_gallery(runs, out, image_root=image_root)
        parts.append("<h3>Samples</h3>")
        parts.append(
            gallery_html(
                element,
                data,
                page_size=page_size,
                filters=[
                    ("r", "Model", ()),
                    ("c", "Category", CATEGORY_COLUMNS),
                    ("o", "Outcome", GAVEL_OUTCOMES),
                ],
                legend=GAVEL_LEGEND,
            )
        )
    elif benchmark == "detailverify":
        data = detailverify_gallery(runs, out)
        parts.append("<h3>Samples</h3>")
        parts.append(
            gallery_html(
                element,
                data,
                page_size=page_size,
                filters=[("r", "Model", ()), ("c", "Domain", ()), ("o", "Outcome", ())],
                legend=DVB_LEGEND,
            )
        )
    elif benchmark == "videohallucer":
        data = videohallucer_gallery(runs, out)
        parts.append("<h3>Pairs</h3>")
        parts.append(
            gallery_html(
                element,
                data,
                page_size=page_size,
                filters=[
                    ("r", "Model", ()),
                    ("c", "Category", ()),
                    ("o", "Outcome", ("pair right", "pair wrong", "unparseable", "error")),
                    ("u", "Answer rules", ("read by both rules",)),
                ],
            )
        )
    parts.append("</section>")
    return "".join(parts)


def _asset(name: str) -> str:
    return resources.files("gavel.report").joinpath("assets", name).read_text(encoding="utf-8")


def render_page(title: str, runs: list[RunView], sections: list[tuple[str, str]]) -> str:
    style = _asset("report.css")
    script = _asset("report.js")
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    policy = (
        "default-src 'none'; img-src 'self' data: file:; style-src 'unsafe-inline'; "
        f"script-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'"
    )
    nav = " · ".join(f'<a href="#{slug(b)}">{esc(TITLES.get(b, b))}</a>' for b, _ in sections)
    made = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(policy)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{style}</style></head><body>"
        f"<header><h1>{esc(title)}</h1>"
        f'<p class="meta">gavel {esc(__version__)} · made {esc(made)} · {len(runs)} run(s) · '
        f'<a href="#runs">Runs</a> · {nav}</p></header><main>'
        + "".join(html for _, html in sections)
        + f'<section id="runs"><h2>Runs</h2>{_runs_table(runs)}</section>'
        + f"</main><script>{script}</script></body></html>\n"
    )


def write_report(
    runs: list[Path],
    out: Path,
    *,
    title: str | None = None,
    page_size: int = 100,
    image_root: Path | None = None,
) -> Path:
    """Write ``out/index.html`` (and its ``thumbs/`` and ``frames/``) for the given runs (run
    folders or ``results.json`` files, any mix of benchmarks); returns the page's path.

    GAVEL images are read from inside the data file's folder, or from ``image_root`` when the
    user names one (``gavel report --image-root``); a folder recorded in a results file is
    never followed outside the data folder on its own."""
    if page_size < 1:
        raise ConfigError(f"page size must be at least 1, got {page_size}")
    views = load_runs(runs)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    groups: dict[str, list[RunView]] = {}
    for view in views:
        groups.setdefault(view.benchmark, []).append(view)
    order = [b for b in TITLES if b in groups] + [b for b in groups if b not in TITLES]
    sections = [(b, _section(b, groups[b], out, page_size, image_root)) for b in order]
    page = render_page(title or "gavel report", views, sections)
    target = out / "index.html"
    temp = out / f".index.html.{os.getpid()}.tmp"
    try:
        # a plain file mode, unlike mkstemp's 0600; a path that is not valid UTF-8 (a folder
        # name in another encoding) is shown with its odd bytes as \\udcXX escapes
        temp.write_bytes(page.encode("utf-8", "backslashreplace"))
        os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)
    return target
