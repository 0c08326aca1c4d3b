"""Plugins through entry points: the documented example package run end to end, laziness,
built-ins winning a name, and a broken plugin that breaks nothing else."""

from __future__ import annotations

import json
import sys

import pytest

from gavel.benchmarks.registry import benchmark_names, get_benchmark
from gavel.models.registry import load_model, spec_prefixes

BROKEN = {
    "entry_points": {"gavel.benchmarks": {"broken": "gavel_broken:BENCHMARK"}},
    "files": {"gavel_broken/__init__.py": "import numpyy  # a dependency that is not there\n"},
}


def _letters_data(gavel_main, tmp_path):
    done = gavel_main("synth", "--benchmark", "letters", "--n", "12", "--out", tmp_path / "data")
    assert done.code == 0, done.text
    return tmp_path / "data" / "letters.jsonl"


def test_a_plugin_benchmark_and_model_run_end_to_end_in_a_new_process(plugin_site, gavel,
                                                                      tmp_path):  # fmt: skip
    plugin_site.install_documented_example()
    data = tmp_path / "letters.jsonl"
    rows = [("1", "banana", "a", 3), ("2", "gavel", "g", 1), ("3", "mississippi", "s", 4)]
    data.write_text("".join(
        json.dumps({"id": i, "word": w, "letter": c, "count": n}) + "\n" for i, w, c, n in rows
    ))  # fmt: skip
    done = gavel("run", "--benchmark", "letters", "--data", data, "--model", "counter",
                 "--out", tmp_path / "run", "--no-progress")  # fmt: skip
    assert done.returncode == 0, done.stderr
    predictions = [json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").open()]
    assert {p["id"]: p["response"] for p in predictions} == {"1": "3", "2": "1", "3": "4"}
    result = json.loads((tmp_path / "run" / "results.json").read_text())
    assert result["benchmark"] == "letters"
    assert result["metrics"]["accuracy"] == 100.0
    assert result["counts"]["ok"] == 3
    assert "Letters" in done.stdout


def test_a_plugin_benchmark_option_and_model_argument(plugin_site, gavel_main, tmp_path):
    plugin_site.install_documented_example()
    data = _letters_data(gavel_main, tmp_path)
    run = tmp_path / "off"
    done = gavel_main("run", "--benchmark", "letters", "--data", data, "--model", "counter:1",
                      "--out", run, "--no-progress")  # fmt: skip
    assert done.code == 0, done.text
    assert json.loads((run / "results.json").read_text())["metrics"]["accuracy"] == 0.0
    done = gavel_main("score", "--benchmark", "letters", "--data", data, "--predictions",
                      run / "predictions.jsonl", "--tolerance", "1", "--out", tmp_path / "r.json")  # fmt: skip
    assert done.code == 0, done.text
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["metrics"]["accuracy"] == 100.0
    assert result["manifest"]["settings"]["tolerance"] == 1
    # The option is the plugin's own: another benchmark refuses it by name.
    done = gavel_main("score", "--data", data, "--predictions", run / "predictions.jsonl",
                      "--tolerance", "1")  # fmt: skip
    assert done.code == 2
    assert "--tolerance is a letters option" in done.text


def test_names_are_found_without_importing_the_plugin(plugin_site):
    plugin_site.install_documented_example()
    assert "letters" in benchmark_names()
    assert "counter" in spec_prefixes()
    assert "gavel_letters" not in sys.modules
    assert get_benchmark("letters").name == "letters"
    assert "gavel_letters" in sys.modules
    assert "gavel_letters.model" not in sys.modules  # the model is imported when named
    assert load_model("counter:2").name == "counter-2"


def test_a_built_in_wins_over_a_plugin_of_the_same_name(plugin_site, gavel, gavel_main,
                                                       tmp_path):  # fmt: skip
    plugin_site.install("gavel-impostor", "9.9", {"gavel.benchmarks": {"gavel": "nowhere:X"},
                                                  "gavel.models": {"scene": "nowhere:Y"}}, {})  # fmt: skip
    data = tmp_path / "synth"
    done = gavel("synth", "--n", "4", "--out", data)
    assert done.returncode == 0, done.stderr
    warning = "warning: the built-in benchmark 'gavel' is used; the plugin of the same name "
    assert done.stderr.count(warning) == 1, done.stderr  # once, though looked up several times
    assert "distribution gavel-impostor 9.9" in done.stderr
    done = gavel_main("run", "--data", data / "gavel.jsonl", "--model", "scene", "--out",
                      tmp_path / "run", "--no-progress")  # fmt: skip
    assert done.code == 0, done.text
    assert benchmark_names().count("gavel") == 1


def test_a_broken_plugin_is_one_message_when_used_and_breaks_nothing_else(plugin_site, gavel,
                                                                          gavel_main, tmp_path):  # fmt: skip
    plugin_site.install("gavel-broken", "0.2", **BROKEN)
    plugin_site.install_documented_example()
    done = gavel_main("run", "--benchmark", "broken", "--data", tmp_path / "x.jsonl", "--model",
                      "scene", "--out", tmp_path / "run")  # fmt: skip
    assert done.code == 2
    assert done.out == ""
    lines = done.err.strip().splitlines()
    assert len(lines) == 1, done.err
    assert "distribution gavel-broken 0.2" in lines[0]
    assert "entry point gavel.benchmarks: broken = gavel_broken:BENCHMARK" in lines[0]
    assert "ModuleNotFoundError: No module named 'numpyy'" in lines[0]
    # The same in a new process, with no traceback; and every other command still works.
    fresh = gavel("score", "--benchmark", "broken", "--help")
    assert fresh.returncode == 2 and "Traceback" not in fresh.stderr
    assert "gavel-broken 0.2" in fresh.stderr
    assert gavel("--help").returncode == 0
    helped = gavel("score", "--help")
    assert helped.returncode == 0 and "broken" in helped.stdout and "letters" in helped.stdout
    data = _letters_data(gavel_main, tmp_path)
    done = gavel_main("run", "--benchmark", "letters", "--data", data, "--model", "counter",
                      "--out", tmp_path / "ok", "--no-progress")  # fmt: skip
    assert done.code == 0, done.text
    photos = gavel_main("synth", "--n", "3", "--out", tmp_path / "g")
    assert photos.code == 0, photos.text


def test_a_plugin_that_is_not_a_benchmark_is_refused_by_name(plugin_site, gavel_main, tmp_path):
    plugin_site.install("gavel-odd", "1.0", {"gavel.benchmarks": {"odd": "gavel_odd:THING"}},
                        {"gavel_odd/__init__.py": "THING = 42\n"})  # fmt: skip
    done = gavel_main("synth", "--benchmark", "odd", "--out", tmp_path / "o")
    assert done.code == 2
    assert "the benchmark plugin 'odd' (distribution gavel-odd 1.0" in done.err
    assert "is a int, not a gavel.benchmarks.spec.Benchmark" in done.err
    del sys.modules["gavel_odd"]


def test_a_plugin_judge_scores_explanations(plugin_site, gavel_main, tmp_path):
    from gavel.examples import example_dir

    plugin_site.install_documented_example()
    photos = example_dir("photos")
    out = tmp_path / "results.json"
    done = gavel_main("score", "--data", photos / "gavel.jsonl", "--predictions",
                      photos / "predictions" / "qwen2.5-vl.jsonl", "--box-format",
                      "resized-pixel", "--judge", "agree", "--bootstrap", "0", "--out", out)  # fmt: skip
    assert done.code == 0, done.text
    result = json.loads(out.read_text())
    scores = [json.loads(line) for line in out.with_name("results.scores.jsonl").open()]
    # By hand: 5 for a right verdict, 1 otherwise, on the 0-100 scale (x20), over all samples.
    points = [5 if s.get("verdict_pred") == s["verdict_true"] else 1 for s in scores]
    assert 1 in points and 5 in points  # both kinds occur, so the mean tells them apart
    explanation = result["metrics"]["explanation"]
    assert explanation["Avg"] == pytest.approx(20 * sum(points) / len(points))
    assert result["manifest"]["judge"]["name"] == "agree"
    assert [s["judge_score"] for s in scores] == points


def test_a_plugin_factory_that_fails_is_one_message_naming_it(plugin_site, gavel_main, tmp_path):
    plugin_site.install("gavel-buggy", "0.3", {"gavel.models": {"buggy": "gavel_buggy:make"}},
                        {"gavel_buggy/__init__.py": "def make(argument, **options):\n"
                                                    "    return {}['missing']\n"})  # fmt: skip
    done = gavel_main("synth", "--n", "2", "--out", tmp_path / "s")
    assert done.code == 0, done.text
    done = gavel_main("generate", "--data", tmp_path / "s" / "gavel.jsonl", "--model", "buggy",
                      "--out", tmp_path / "p.jsonl")  # fmt: skip
    assert done.code == 2
    assert done.err.strip() == (
        "error: the model plugin 'buggy' (distribution gavel-buggy 0.3, entry point "
        "gavel.models: buggy = gavel_buggy:make) failed: KeyError: 'missing'"
    )
    del sys.modules["gavel_buggy"]


def test_a_plugin_installed_after_the_command_was_imported_is_a_choice(plugin_site, gavel_main,
                                                                       tmp_path):  # fmt: skip
    import gavel.cli.synth  # noqa: F401  (its --benchmark choices read before the install)

    plugin_site.install_documented_example()
    done = gavel_main("synth", "--benchmark", "letters", "--n", "2", "--out", tmp_path / "d")
    assert done.code == 0, done.text
    assert (tmp_path / "d" / "letters.jsonl").is_file()


@pytest.mark.parametrize(
    ("code", "shown"),
    [
        ("import sys\nsys.exit(0)\n", "failed to load: it called sys.exit(0)"),
        ("def make(argument, **options):\n    raise SystemExit(7)\n",
         "failed: it called sys.exit(7)"),
        ("def make(argument, **options):\n    return 'a model'\n",
         "returned a str, not a model (a model has name, capabilities, settings and answer"),
    ],
    ids=["exit on import", "exit in the factory", "not a model"],
)  # fmt: skip
def test_a_plugin_that_exits_or_makes_no_model_is_a_plugin_error(plugin_site, gavel_main,
                                                                  tmp_path, code, shown):  # fmt: skip
    plugin_site.install("gavel-exits", "0.1", {"gavel.models": {"exits": "gavel_exits:make"}},
                        {"gavel_exits/__init__.py": code})  # fmt: skip
    done = gavel_main("synth", "--n", "2", "--out", tmp_path / "s")
    assert done.code == 0, done.text
    done = gavel_main("generate", "--data", tmp_path / "s" / "gavel.jsonl", "--model", "exits",
                      "--out", tmp_path / "p.jsonl")  # fmt: skip
    assert done.code == 2, done.text
    assert done.err.startswith("error: the model plugin 'exits' (distribution gavel-exits 0.1")
    assert shown in done.err and len(done.err.strip().splitlines()) == 1, done.err
    assert not (tmp_path / "p.jsonl").exists()
    sys.modules.pop("gavel_exits", None)
