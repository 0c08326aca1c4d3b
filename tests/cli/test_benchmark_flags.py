"""Each benchmark's own options become flags of the benchmark chosen with --benchmark only."""

from __future__ import annotations

import json

import pytest

from gavel.benchmarks.registry import get_benchmark
from gavel.benchmarks.spec import RunSettings
from gavel.errors import ConfigError
from gavel.examples import example_dir

PHOTOS = example_dir("photos")


def flags_in(text: str) -> set[str]:
    return {word.rstrip(",") for word in text.split() if word.startswith("--")}


@pytest.mark.parametrize(
    ("command", "benchmark", "shown", "hidden"),
    [
        ("score", "gavel", {"--match", "--box-format"}, {"--mode", "--thinking", "--answer-rule"}),
        ("score", "detailverify", {"--mode", "--thinking", "--empty-groups"}, {"--match",
         "--box-format", "--answer-rule"}),
        ("score", "videohallucer", {"--answer-rule"}, {"--match", "--mode", "--thinking"}),
        ("generate", "gavel", {"--prompt"}, {"--thinking", "--match"}),
        ("generate", "detailverify", {"--thinking"}, {"--prompt", "--mode"}),
        ("run", "detailverify", {"--thinking", "--mode", "--empty-groups"}, {"--prompt",
         "--match", "--answer-rule"}),
        ("run", "gavel", {"--prompt", "--match", "--box-format"}, {"--thinking", "--mode"}),
        ("synth", "gavel", {"--clean-share", "--categories"}, {"--thinking"}),
        ("synth", "videohallucer", set(), {"--clean-share", "--categories"}),
    ],
)  # fmt: skip
def test_help_lists_the_chosen_benchmarks_options_only(gavel_main, command, benchmark, shown,
                                                        hidden):  # fmt: skip
    done = gavel_main(command, "--benchmark", benchmark, "--help")
    assert done.code == 0, done.err
    flags = flags_in(done.out)
    assert shown <= flags and not hidden & flags
    assert {"--benchmark", "--data"} & flags  # the common flags stay


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("score", "--mode", "strict"), "--mode is a detailverify option; this run's benchmark "
         "is gavel"),
        (("score", "--benchmark", "detailverify", "--match=max"), "--match is a gavel option; "
         "this run's benchmark is detailverify"),
        (("score", "--benchmark", "videohallucer", "--thinking"), "--thinking is a detailverify "
         "option; this run's benchmark is videohallucer"),
        (("generate", "--prompt", "gavel_v1", "--benchmark", "videohallucer"), "--prompt is a "
         "gavel option; this run's benchmark is videohallucer"),
        (("synth", "--benchmark", "videohallucer", "--clean-share", "0.5"), "--clean-share is a "
         "gavel and detailverify option; this run's benchmark is videohallucer"),
        (("run", "--answer-rule", "strict"), "--answer-rule is a videohallucer option; this "
         "run's benchmark is gavel"),
    ],
)  # fmt: skip
def test_an_option_of_another_benchmark_is_one_usage_error(gavel_main, tmp_path, args, message):
    done = gavel_main(*args, "--data", tmp_path / "d.jsonl", "--out", tmp_path / "o")
    assert done.code == 2
    assert message in done.err
    assert "Traceback" not in done.err and not (tmp_path / "o").exists()


def test_an_unknown_benchmark_is_named(gavel_main):
    done = gavel_main("score", "--benchmark", "nope", "--help")
    assert done.code == 2 and "'nope' is not one of 'gavel', 'detailverify'" in done.err


def test_defaults_are_kept(gavel_main, tmp_path):
    """Without the flags, each benchmark scores with the defaults it always had."""
    out = tmp_path / "results.json"
    done = gavel_main("score", "--data", PHOTOS / "gavel.jsonl", "--predictions",
                      PHOTOS / "predictions" / "gpt.jsonl", "--out", out, "--bootstrap", "0")  # fmt: skip
    assert done.code == 0, done.err
    settings = json.loads(out.read_text())["manifest"]["settings"]
    assert settings["match"] == "union" and settings["box_format"] is None
    assert "selection" not in settings


def test_python_callers_pass_values_by_name_and_a_wrong_name_is_refused(tmp_path):
    gavel = get_benchmark("gavel")
    assert gavel.values({"match": "max"}) == {"prompt": None, "box_format": None,
                                              "match": "max", "clean_share": None,
                                              "categories": None}  # fmt: skip
    with pytest.raises(ConfigError, match="'dvb_mode' is not an option of the gavel benchmark"):
        gavel.evaluate(PHOTOS / "gavel.jsonl", PHOTOS / "predictions" / "gpt.jsonl",
                       RunSettings({"dvb_mode": "strict"}))  # fmt: skip
    assert [o.flag for o in get_benchmark("detailverify").options_for("score")] == [
        "--mode",
        "--thinking",
        "--empty-groups",
    ]
