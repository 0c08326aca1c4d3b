"""A setting the command line refuses is refused by the Python API with the same words, as a
GavelError, before anything is asked or written; and ``import gavel`` stays light."""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

import gavel
from gavel.errors import ConfigError, GavelError

#: (API settings, the same as flags); each is refused by both.
REFUSED = [
    ({"concurrency": 0}, ["--concurrency", "0"]),
    ({"max_tokens": 0}, ["--max-tokens", "0"]),
    ({"temperature": -1}, ["--temperature", "-1"]),
    ({"seed": -1}, ["--seed", "-1"]),
    ({"executor": "threads"}, ["--executor", "threads"]),
    ({"dtype": "int8"}, ["--dtype", "int8"]),
    ({"workers": 2}, ["--workers", "2"]),  # only with --executor ray
    ({"batch_size": 4}, ["--batch-size", "4"]),  # only hf: models take it
    ({"frames": 4}, ["--frames", "4"]),  # only video benchmarks
    ({"max_failures": "lots"}, ["--max-failures", "lots"]),
    ({"extra_body": "[1]"}, ["--extra-body", "[1]"]),
    ({"limit": 0}, ["--limit", "0"]),
    ({"sample_id": ["nope"]}, ["--sample-id", "nope"]),
]


@pytest.fixture
def data(tmp_path, monkeypatch) -> str:
    monkeypatch.chdir(tmp_path)
    return str(gavel.synthesize("gavel", out="synth", n=3))


def cli_message(text: str) -> str:
    """What the command line said after ``Error:`` (click) or ``error:`` (gavel)."""
    line = next(line for line in text.splitlines() if line.lower().startswith("error: "))
    return line.partition(": ")[2]


@pytest.mark.parametrize(("settings", "flags"), REFUSED, ids=[str(s) for s, _ in REFUSED])
def test_a_refused_setting_says_what_the_command_line_says(data, gavel_main, settings, flags):
    done = gavel_main("generate", "--data", data, "--model", "scene", "--out", "cli.jsonl",
                      "--no-progress", *flags)  # fmt: skip
    assert done.code == 2
    with pytest.raises(GavelError) as refused:
        gavel.generate("gavel", data=data, model="scene", out="api.jsonl", no_progress=True,
                       **settings)  # fmt: skip
    assert str(refused.value) == cli_message(done.err)
    assert not Path("api.jsonl").exists() and not Path("cli.jsonl").exists()


def test_score_settings_are_checked_as_gavel_score_checks_them(data, gavel_main):
    gavel.generate("gavel", data=data, model="scene", out="pred.jsonl", no_progress=True)
    done = gavel_main("score", "--data", data, "--predictions", "pred.jsonl", "--bootstrap", "-1")
    with pytest.raises(ConfigError) as refused:
        gavel.score("gavel", data=data, predictions="pred.jsonl", bootstrap=-1)
    assert str(refused.value) == cli_message(done.err)
    done = gavel_main("score", "--data", data, "--predictions", "pred.jsonl", "--judge",
                      "offline", "--benchmark", "gavel", "--judge-max-tokens", "-3")  # fmt: skip
    with pytest.raises(ConfigError) as refused:
        gavel.score("gavel", data=data, predictions="pred.jsonl", judge="offline",
                    judge_max_tokens=-3)  # fmt: skip
    assert str(refused.value) == cli_message(done.err)
    for flag, value in (("--match", "best"), ("--mode", "strict")):  # GAVEL's; DetailVerify's
        done = gavel_main("score", "--data", data, "--predictions", "pred.jsonl", flag, value)
        with pytest.raises(ConfigError) as refused:
            gavel.score("gavel", data=data, predictions="pred.jsonl", **{flag[2:]: value})
        assert done.code == 2 and str(refused.value) == cli_message(done.err)
    done = gavel_main("score", "--benchmark", "nope", "--data", data, "--predictions", "x")
    with pytest.raises(ConfigError) as refused:
        gavel.score("nope", data=data, predictions="x")
    assert done.code == 2 and str(refused.value) == cli_message(done.err)


def test_a_missing_data_file_is_the_command_lines_error(tmp_path, monkeypatch, gavel_main):
    monkeypatch.chdir(tmp_path)
    done = gavel_main("run", "--data", "nowhere.jsonl", "--model", "scene", "--out", "run")
    with pytest.raises(GavelError) as refused:
        gavel.run("gavel", data="nowhere.jsonl", model="scene", out="run")
    assert done.code == 2 and str(refused.value) == cli_message(done.err)


def test_a_setting_no_command_takes_is_named(data):
    with pytest.raises(ConfigError, match=r"'max_token' is not a setting of gavel generate"):
        gavel.generate("gavel", data=data, model="scene", out="x.jsonl", max_token=5)
    with pytest.raises(ConfigError, match=r"'dry_run' is not offered by the Python API yet"):
        gavel.run("gavel", data=data, model="scene", out="run", dry_run=True)
    with pytest.raises(ConfigError, match=r"'dry_run_format' is not offered"):
        gavel.run("gavel", data=data, model="scene", out="run", dry_run_format="json")
    # Their defaults given explicitly ask for nothing the API lacks.
    done = gavel.run("gavel", data=data, model="scene", out="run", dry_run=False,
                     dry_run_format="table", bootstrap=0)  # fmt: skip
    assert done.counts["total"] == 3
    with pytest.raises(ConfigError, match=r"unknown benchmark 'nope'"):
        gavel.benchmark("nope")
    with pytest.raises(ConfigError, match=r"'mode' is not a setting of gavel generate"):
        gavel.generate("gavel", data=data, model="scene", out="x.jsonl", mode="strict")
    with pytest.raises(ConfigError, match="'--temperature': nan is not a finite number"):
        gavel.generate("gavel", data=data, model="scene", out="x.jsonl", temperature=math.nan)


def test_synth_writes_the_files_gavel_synth_writes(tmp_path, monkeypatch, gavel_main):
    monkeypatch.chdir(tmp_path)
    assert gavel_main("synth", "--benchmark", "detailverify", "--n", "3", "--out", "cli").code == 0
    path = gavel.synthesize("detailverify", out="api", n=3)
    assert path == Path("api/real_test.jsonl")
    assert path.read_bytes() == Path("cli/real_test.jsonl").read_bytes()


def test_a_benchmark_says_its_options_and_what_it_asks(data):
    assert "mode" in gavel.benchmark("detailverify").options  # --mode, not its inner name
    bench = gavel.benchmark("gavel")
    assert bench.options["match"].flag == "--match" and "score" in bench.options["match"].commands
    prepared = bench.prepare(data, model="scene")
    requests = list(prepared.requests)
    assert prepared.total == len(requests) == 3
    assert prepared.template.name == "gavel_v1"
    assert [r.sample_id for r in requests] == ["synth-00000", "synth-00001", "synth-00002"]
    with pytest.raises(ConfigError, match="'mode' is not an option of the gavel benchmark"):
        bench.prepare(data, mode="strict")


#: Lists the modules ``import gavel`` (then a look at its public names) imports.
PROBE = """
import json, sys
import gavel
before = sorted(sys.modules)
names = sorted(gavel.__all__)
print(json.dumps({"modules": before, "names": names}))
"""


def test_importing_gavel_imports_nothing_heavy():
    from tests.cli.test_main import HEAVY

    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          timeout=120, check=True)  # fmt: skip
    seen = json.loads(done.stdout)
    ours = [name for name in seen["modules"] if name.startswith("gavel")]
    assert ours == ["gavel"]  # the API is imported on first use
    top = {name.partition(".")[0] for name in seen["modules"]}
    assert not top & {*HEAVY, "click", "msgspec", "numpy", "rich"}
    assert {"generate", "score", "run", "benchmark", "Result"} <= set(seen["names"])


#: The API's modules whose import needs no numpy: every one but the demo (which renders images).
LIGHT_API_MODULES = [
    "gavel.api",
    "gavel.api.annotation",
    "gavel.api.batches",
    "gavel.api.benchmarks",
    "gavel.api.curation",
    "gavel.api.data",
    "gavel.api.generation",
    "gavel.api.judges",
    "gavel.api.listing",
    "gavel.api.models",
    "gavel.api.replies",
    "gavel.api.reports",
    "gavel.api.running",
    "gavel.api.scoring",
    "gavel.api.synthesis",
    "gavel.api.tasks",
    "gavel.api.training",
]


@pytest.mark.parametrize("module", LIGHT_API_MODULES)
def test_importing_an_api_module_imports_no_numpy(module):
    """numpy (and what needs it) is imported when a function that computes is called, not
    when the module that offers it is imported: a shell reading one command's flags stays
    light."""
    from tests.cli.test_main import HEAVY

    probe = f"import json, sys, {module}; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120, check=True)  # fmt: skip
    top = {name.partition(".")[0] for name in json.loads(done.stdout)}
    assert not top & {*HEAVY, "numpy"}, module


def test_every_public_name_resolves():
    for name in gavel.__all__:
        assert getattr(gavel, name) is not None
        # A subpackage of that name would replace the function once imported (gavel.synth).
        assert importlib.util.find_spec(f"gavel.{name}") is None
    assert gavel.Result.__module__ == "gavel.api.scoring"
    with pytest.raises(AttributeError):
        gavel.nothing_here  # noqa: B018
