"""``write_report``: one self-contained page for the demo's runs, escaped, offline, paged."""

from __future__ import annotations

import html
import json
import re
import time
from html.parser import HTMLParser
from pathlib import Path

import msgspec
import pytest
from PIL import Image

from gavel.benchmarks.registry import get_benchmark
from gavel.benchmarks.spec import RunSettings
from gavel.errors import ConfigError, DataError
from gavel.report.gallery import caption_segments, gavel_outcome
from gavel.report.html import best_rows, run_labels, write_report
from gavel.tables import Table

HOSTILE_CAPTION = "<script>alert(1)</script> A red square sits on the left."
HOSTILE_EXPLANATION = '<img src=x onerror="window.__pwned=1"> The square is blue.'
HOSTILE_ANSWER = "</script><script>window.__pwned=2</script> & it is blue"
HOSTILE_ID = '"><svg onload=alert(3)>'
HOSTILE_FOLDER = 'run"><img src=x onerror=window.__pwned=5>'
HOSTILE_DVB = "A <HALLUCINATION>red</HALLUCINATION> chart <script>window.__pwned=4</script> here."


def save_run(folder: Path, benchmark: str, data: Path, predictions: Path) -> Path:
    """Score with the registry and write results.json + scores as ``gavel score --out`` does."""
    result, scores = get_benchmark(benchmark).evaluate(
        data, predictions, RunSettings(resamples=200)
    )
    folder.mkdir(parents=True, exist_ok=True)
    encoder = msgspec.json.Encoder()
    (folder / "results.json").write_bytes(encoder.encode(result))
    (folder / "results.scores.jsonl").write_bytes(
        b"".join(encoder.encode(s) + b"\n" for s in scores)
    )
    return folder / "results.json"


def write_jsonl(path: Path, rows) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def gavel_run(root: Path, n: int, *, hostile: bool = False, images: int = 2) -> Path:
    """A GAVEL run of ``n`` samples over a few tiny images; the hostile one carries markup in
    its caption, explanations, id, model name and folder name."""
    data_dir = root / "data"
    (data_dir / "images").mkdir(parents=True, exist_ok=True)
    for i in range(images):
        Image.new("RGB", (64, 48), (40 * i, 120, 200)).save(data_dir / "images" / f"im{i}.png")
    categories = ["Color", "Obj", "Loc", None]
    rows, answers = [], []
    for i in range(n):
        category = categories[i % 4]
        rows.append(
            {
                "id": HOSTILE_ID if hostile and i == 0 else f"s{i:05d}",
                "image": f"images/im{i % images}.png",
                "caption": HOSTILE_CAPTION if hostile else f"caption {i}",
                "hallucinated": category is not None,
                "category": category,
                "explanation": HOSTILE_EXPLANATION if hostile else "gold reason",
                "boxes": [[8, 8, 20, 16]] if category else [],
                "width": 64,
                "height": 48,
            }
        )
        box = [[8, 8, 28, 24]] if i % 3 else [[40, 30, 60, 46]]
        response = {
            "hallucination": category is not None if i % 5 else category is None,
            "explanation": HOSTILE_ANSWER if hostile else f"answer {i}",
            "boxes": box if category else [],
        }
        answers.append(
            {
                "id": rows[-1]["id"],
                "response": json.dumps(response) if i % 7 else "I am not able to help with that.",
                "box_format": "pixel",
                "model": "<i>evil model</i>" if hostile else "toy",
            }
        )
    data = write_jsonl(data_dir / "gavel.jsonl", rows)
    predictions = write_jsonl(root / "predictions.jsonl", answers)
    folder = root / (HOSTILE_FOLDER if hostile else "run")
    return save_run(folder, "gavel", data, predictions)


def hostile_detailverify_run(root: Path) -> Path:
    line = {
        "filename": "chart.png",
        "category": "Chart",
        "GT_description": "A blue chart here.",
        "Modify": "Yes",
        "description_tag": HOSTILE_DVB,
        "hallucination_labels": [{"text": "red", "labels": ["Object Color Hallucination"]}],
    }
    data = write_jsonl(root / "data" / "real_test.jsonl", [line])
    answer = (
        "<result>A <HALLUCINATION>red chart</HALLUCINATION> <script>window.__pwned=4</script> "
        "here.</result>"
    )
    predictions = write_jsonl(root / "predictions.jsonl", [{"id": "chart.png", "response": answer}])
    return save_run(root / "run", "detailverify", data, predictions)


@pytest.fixture(scope="module")
def demo_runs(tmp_path_factory) -> list[Path]:
    """The demo's runs at a small size: five photo runs and one synthetic run per benchmark."""
    from gavel.api.demo import score_photos, score_synthetic

    root = tmp_path_factory.mktemp("demo")
    score_photos(root / "photos", "union")
    for benchmark, n in (("gavel", 4), ("detailverify", 3), ("videohallucer", 3)):
        score_synthetic(root / "synthetic", benchmark, "hard", n, 0, "union")
    runs = sorted((root / "photos").glob("*/results.json"))
    return runs + sorted((root / "synthetic").glob("*/hard"))


@pytest.fixture(scope="module")
def hostile_runs(tmp_path_factory) -> list[Path]:
    root = tmp_path_factory.mktemp("hostile")
    return [gavel_run(root / "gavel", 6, hostile=True), hostile_detailverify_run(root / "dvb")]


@pytest.fixture(scope="module")
def report(demo_runs, hostile_runs, tmp_path_factory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("report")
    page = write_report([*demo_runs, *hostile_runs], out, title="demo <report>", page_size=7)
    return page, page.read_text(encoding="utf-8")


class Tags(HTMLParser):
    """Every start tag with its attributes, and the text of each script element."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._in_script: dict[str, str | None] | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in_script = dict(attrs)
            self.scripts.append((self._in_script, ""))

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = None

    def handle_data(self, data):
        if self._in_script is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)


def parse(text: str) -> Tags:
    parser = Tags()
    parser.feed(text)
    return parser


def gallery_data(text: str, benchmark: str) -> dict:
    for attrs, body in parse(text).scripts:
        if attrs.get("id") == f"gallery-{benchmark}-data":
            return json.loads(body)
    raise AssertionError(f"no gallery data for {benchmark}")


def test_report_renders_every_benchmark_of_the_demo(report, demo_runs):
    page, text = report
    assert page.name == "index.html" and text.startswith("<!DOCTYPE html>")
    for benchmark in ("gavel", "detailverify", "videohallucer"):
        assert f'<section id="{benchmark}">' in text
        assert f'<table class="results" id="table-{benchmark}">' in text
    assert "<title>demo &lt;report&gt;</title>" in text
    # five GAVEL figures, embedded
    assert text.count('src="data:image/png;base64,') == 5
    # every referenced thumbnail and frame was written beside the page
    tags = parse(text).tags
    data = gallery_data(text, "gavel")
    thumbs = {s["img"] for s in data["samples"] if s["img"]}
    frames = {f for item in gallery_data(text, "videohallucer")["items"]
              for side in item["sides"] for f in side["fr"]}  # fmt: skip
    assert thumbs and frames
    for relative in thumbs | frames:
        assert (page.parent / relative).is_file(), relative
    assert all(not a.get("src", "").startswith(("thumbs/", "frames/")) for _, a in tags)
    # one card per scored sample and run
    photo_scores = len(demo_runs[0].with_name("results.scores.jsonl").read_text().splitlines())
    assert sum(1 for item in data["items"] if data["runs"][item["r"]] == "gemini") == photo_scores


def test_tables_carry_intervals_and_mark_the_best_value(report):
    _, text = report
    gavel = text.split('id="table-gavel"')[1].split("</table>")[0]
    assert '<span class="ci">[' in gavel
    assert '<td class="best"><b>' in gavel
    rows = re.findall(r"<tr>(.*?)</tr>", gavel.split("<tbody>")[1])
    assert [re.search(r'<th scope="row">(.*?)</th>', r).group(1) for r in rows[:2]] == [
        "gemini",
        "gpt",
    ]
    videohallucer = text.split('id="table-videohallucer"')[1].split("</table>")[0]
    assert '<span class="ci">[' in videohallucer  # per-category and overall intervals


def test_best_value_rules():
    table = Table(
        "t",
        ["Method", "A@0.5", "log2 area", "n", "F1"],
        [["a", "50.0", "-0.50", "10", "–"], ["b", "70.0", "0.20", "12", "40.0"],
         ["c", "70.0", "1.00", "9", "–"]],
        [],
    )  # fmt: skip
    assert best_rows(table, 1) == {1, 2}  # ties are all bold
    assert best_rows(table, 2) == {1}  # closest to zero
    assert best_rows(table, 3) == set()  # counts are not ranked
    assert best_rows(table, 4) == set()  # a single value is not "best"


def test_hostile_text_is_escaped_everywhere(report):
    _, text = report
    parsed = parse(text)
    for needle in (HOSTILE_CAPTION, HOSTILE_EXPLANATION, HOSTILE_ANSWER, HOSTILE_ID, "<i>evil",
                   HOSTILE_FOLDER):  # fmt: skip
        assert needle not in text
    assert "<script>alert(1)" not in text and "<svg" not in text
    # the runs table shows the folder and model names as text
    assert html.escape(HOSTILE_FOLDER) in text and "&lt;i&gt;evil model&lt;/i&gt;" in text
    # no element carries an event handler, and the only executable script is the page's own
    assert not [(t, a) for t, a in parsed.tags for k in a if k.lower().startswith("on")]
    executable = [a for a, _ in parsed.scripts if a.get("type") != "application/json"]
    assert len(executable) == 1
    # the texts survive intact inside the gallery data (the script inserts them as text)
    data = gallery_data(text, "gavel")
    assert HOSTILE_CAPTION in {s["cap"] for s in data["samples"]}
    assert HOSTILE_EXPLANATION in {s["ex"] for s in data["samples"]}
    assert HOSTILE_ID in {s["id"] for s in data["samples"]}
    assert any(item["ax"] == HOSTILE_ANSWER for item in data["items"])
    dvb = gallery_data(text, "detailverify")
    shown = ["".join(part for part, _ in item["seg"]) for item in dvb["items"] if item["seg"]]
    assert "A red chart <script>window.__pwned=4</script> here." in shown
    # the page's script never parses data as HTML
    script = next(body for a, body in parsed.scripts if a.get("type") != "application/json")
    assert "innerHTML" not in script and "insertAdjacentHTML" not in script
    assert "document.write" not in script and "eval(" not in script


def test_the_page_loads_nothing_from_the_network(report):
    _, text = report
    urls = [
        value
        for _, attrs in parse(text).tags
        for key, value in attrs.items()
        if key in ("src", "href", "action", "srcset", "poster", "data") and value
    ]
    assert urls
    for url in urls:
        assert not re.match(r"\s*(https?:)?//", url, re.IGNORECASE), url
        assert url.startswith(("#", "data:image/png;base64,", "thumbs/", "frames/")), url
    assert not re.search(r"url\(\s*['\"]?\s*(https?:)?//", text, re.IGNORECASE)
    assert "@import" not in text and "http://" not in text and "https://" not in text
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', text).group(1)
    assert "default-src &#x27;none&#x27;" in policy and "unsafe-eval" not in policy


def test_filters_and_paging_markup(report):
    _, text = report
    gallery = text.split('id="gallery-gavel"')[0].rsplit("<div", 1)[1]
    assert 'data-page-size="7"' in gallery
    section = text.split('id="gallery-gavel"')[1].split('id="gallery-gavel-data"')[0]
    for key in ("r", "c", "o"):
        assert f'<select data-filter="{key}">' in section
    for outcome in ("hit", "miss", "unparseable"):
        assert f'<option value="{outcome}">' in section
    for name in ("gemini", "gpt", "internvl3.5", "qwen2.5-vl", "qwen3-vl"):
        assert f">{name} (" in section
    assert section.count('class="pager"') == 2
    for button in ("first", "prev", "next", "last"):
        assert f'class="{button}"' in section
    assert '<div class="cards"></div>' in section  # cards are drawn a page at a time


def test_gallery_outcomes_and_token_segments():
    base = {"outcome": "ok", "verdict_true": True, "verdict_pred": True, "n_gold_boxes": 1}
    assert gavel_outcome(base | {"iou": 0.5}) == "hit"
    assert gavel_outcome(base | {"iou": 0.49}) == "miss"
    clean = {"outcome": "ok", "verdict_true": False, "n_gold_boxes": 0}
    assert gavel_outcome(clean | {"verdict_pred": False}) == "hit"
    assert gavel_outcome(clean | {"verdict_pred": True}) == "miss"
    assert gavel_outcome({"outcome": "model_error"}) == "error"
    assert gavel_outcome({"outcome": "missing"}) == "missing"
    assert gavel_outcome({"outcome": "unparseable", "iou": 0.0}) == "unparseable"
    # tokens: The(0) big(1) red(2) car(3) is(4) here(5); gold 1,2; predicted 2,3
    segments = caption_segments("The big red car is here.", [1, 2], [2, 3])
    # the blank between two flagged tokens takes the flag both share, so phrases stay whole
    assert segments == [["The ", 0], ["big ", 2], ["red", 1], [" car", 3], [" is here.", 0]]
    assert caption_segments("big red car", [0, 1], None) == [["big red", 2], [" car", 0]]


def test_run_labels_are_the_shortest_telling_suffix(tmp_path):
    paths = [tmp_path / "a" / "gpt" / "results.json", tmp_path / "b" / "gpt" / "results.json",
             tmp_path / "b" / "gemini" / "results.json", tmp_path / "b" / "other.json"]  # fmt: skip
    assert run_labels(paths) == ["a/gpt", "b/gpt", "b/gemini", "b/other"]


def test_a_large_run_stays_light(tmp_path):
    results = gavel_run(tmp_path / "big", 5000, images=3)
    started = time.perf_counter()
    page = write_report([results.parent], tmp_path / "out", page_size=100)
    elapsed = time.perf_counter() - started
    assert elapsed < 20
    text = page.read_text()
    data = gallery_data(text, "gavel")
    assert len(data["items"]) == 5000
    assert len(list((tmp_path / "out" / "thumbs").iterdir())) == 3  # one per image, shared
    assert len(text) < 4_000_000
    assert "<article" not in text  # no card is in the markup: the script draws 100 at a time


def test_missing_data_and_scores_still_give_a_page(tmp_path, demo_runs):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(demo_runs[0].parent, run)
    result = json.loads((run / "results.json").read_text())
    result["manifest"]["data_file"] = str(tmp_path / "gone.jsonl")
    (run / "results.json").write_text(json.dumps(result))
    page = write_report([run], tmp_path / "out")
    text = page.read_text()
    assert "not found" in text
    data = gallery_data(text, "gavel")
    assert data["items"] and all(s["img"] is None for s in data["samples"])
    (run / "results.scores.jsonl").unlink()
    text = write_report([run / "results.json"], tmp_path / "out2").read_text()
    assert "no per-sample scores" in text


def test_bad_inputs_are_clear_errors(tmp_path):
    with pytest.raises(DataError, match="results file not found"):
        write_report([tmp_path / "nowhere"], tmp_path / "out")
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(DataError, match="not a gavel results file"):
        write_report([tmp_path / "bad.json"], tmp_path / "out")
    with pytest.raises(ConfigError):
        write_report([tmp_path / "bad.json"], tmp_path / "out", page_size=0)
    with pytest.raises(ConfigError):
        write_report([], tmp_path / "out")


def test_judged_runs_get_an_explanation_figure_and_judge_lines_in_the_gallery(tmp_path):
    pytest.importorskip("onnxruntime", reason="the offline judge needs the judge extra")
    from gavel.api.demo import offline_judge, score_photos

    score_photos(tmp_path / "photos", "union", offline_judge())
    runs = sorted((tmp_path / "photos").glob("*/results.json"))
    page = write_report(runs, tmp_path / "report", title="judged")
    text = page.read_text(encoding="utf-8")
    assert text.count('src="data:image/png;base64,') == 6
    assert "Explanation per category" in text and "offline embedding proxy" in text
    assert "Avg (proxy)" in text.split('id="table-gavel"')[1].split("</table>")[0]
    items = gallery_data(text, "gavel")["items"]
    assert all(item["js"] for item in items)
    assert any(item["js"].startswith(("1/5", "2/5", "3/5", "4/5", "5/5")) for item in items)


def test_videohallucer_cards_show_what_each_answer_rule_cannot_read(tmp_path, demo_runs):
    demo = next(run for run in demo_runs if run.parent.name == "videohallucer")
    lines = [json.loads(line) for line in (demo / "predictions.jsonl").read_text().splitlines()]
    lines[0]["response"] = "The sum of the angles is not less than 180 degrees."
    lines[1]["response"] = "No, it cannot fit behind the guitar, though some would say yes."
    predictions = write_jsonl(tmp_path / "predictions.jsonl", lines)
    run = save_run(tmp_path / "run", "videohallucer", demo / "data", predictions)
    assert json.loads(run.read_text())["metrics"]["unread"]["strict"]["total"] == 2
    page = write_report([run], tmp_path / "report")
    data = gallery_data(page.read_text(encoding="utf-8"), "videohallucer")
    notes = " ".join(data["notes"])
    assert "the strict rule could not read 2 of" in notes
    assert "no_opening_word 1, other_word_too 1" in notes
    assert "not less than 180 degrees" in notes
    sides = {side["raw"]: side["u"] for item in data["items"] for side in item["sides"]}
    assert sides[lines[1]["response"]] == {"official": "both", "strict": "other_word_too"}
    labels = {item["u"] for item in data["items"]}
    assert "read by both rules" in labels and "unread: official and strict" in labels
    assert 'data-filter="u"' in page.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("damage", "words"),
    [
        (lambda m: m["grounding"].pop("A@0.3"), "lacks 'A@0.3'"),
        (lambda m: m.pop("verification"), "lacks 'verification'"),
        (lambda m: m.update(grounding=5), "not subscriptable"),
    ],
)
def test_a_results_file_lacking_a_metric_is_named_not_an_internal_error(
    tmp_path, demo_runs, damage, words
):
    import shutil

    good, bad = tmp_path / "good", tmp_path / "bad"
    shutil.copytree(demo_runs[0].parent, good)
    shutil.copytree(demo_runs[0].parent, bad)
    result = json.loads((bad / "results.json").read_text())
    damage(result["metrics"])
    (bad / "results.json").write_text(json.dumps(result))
    with pytest.raises(DataError, match=words) as raised:
        write_report([good, bad], tmp_path / "out")
    assert raised.value.path == str((bad / "results.json").resolve())
    assert raised.value.field == "metrics"
