"""``gavel.api.reports``: the report page and the comparison of two runs, as the command gives."""

from __future__ import annotations

import json

import pytest

from gavel.api.reports import COMPARE_FORMATS, compare, report
from gavel.errors import GavelError


@pytest.fixture
def runs(tmp_path, gavel_main):
    """Two scored runs of the same synthetic data: the scene model, and the same answers with
    the second half answered "no hallucination"."""
    assert gavel_main("synth", "--n", "6", "--out", tmp_path / "set").code == 0
    data = tmp_path / "set" / "gavel.jsonl"
    pred = tmp_path / "a.jsonl"
    assert gavel_main("generate", "--data", data, "--model", "scene", "--out", pred).code == 0
    lines = [json.loads(line) for line in pred.read_text().splitlines()]
    for line in lines[3:]:
        line["response"] = json.dumps({"hallucination": False, "explanation": "", "boxes": []})
    (tmp_path / "b.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    results = []
    for name in ("a", "b"):
        out = tmp_path / "runs" / name / "results.json"
        done = gavel_main("score", "--data", data, "--predictions", tmp_path / f"{name}.jsonl",
                          "--out", out, "--bootstrap", "0")  # fmt: skip
        assert done.code == 0, done.text
        results.append(out)
    return results


def test_compare_gives_the_commands_text_in_every_format(runs, gavel_main):
    first, second = runs
    for style in COMPARE_FORMATS:
        compared = compare(first, second, resamples=200, seed=1, format=style)
        done = gavel_main("compare", first, second, "--bootstrap", "200", "--seed", "1",
                          "--format", style)  # fmt: skip
        assert done.code == 0 and done.out == compared.text
    assert compared.benchmark == "gavel" and compared.warnings == []
    assert {c.metric for c in compared.comparisons} >= {"accuracy"}
    assert json.loads(compared.text)["comparisons"][0]["metric"] == compared.comparisons[0].metric


def test_report_finds_every_run_below_a_folder(runs, tmp_path):
    page = report([tmp_path / "runs"], tmp_path / "page", title="two runs")
    assert page == tmp_path / "page" / "index.html"
    assert "<title>two runs" in page.read_text()
    (tmp_path / "empty").mkdir()
    with pytest.raises(GavelError, match=r"no results\.json in it or below it"):
        report([tmp_path / "empty"], tmp_path / "other")


def test_one_run_given_alone_is_that_run_and_bad_settings_are_refused(runs, tmp_path):
    """``report("runs/a")`` is one folder (not its characters, the first of which is the
    root); compare's settings are checked as its flags are."""
    page = report(runs[0].parent, tmp_path / "one")
    assert "results.json" not in str(page) and page.is_file()
    first, second = runs
    for bad, words in (({"resamples": 0}, "--bootstrap"), ({"resamples": "200"}, "a str was given"),
                       ({"seed": -1}, "--seed"), ({"format": "bogus"}, "'bogus' is not one of")):  # fmt: skip
        with pytest.raises(GavelError, match=words):
            compare(first, second, **bad)
