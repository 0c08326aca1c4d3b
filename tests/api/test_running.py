"""The Python API gives what the command line gives: for each benchmark, ``gavel.run`` and
``gavel run`` (the built-in ``scene`` model on ``gavel synth`` data, offline) write the same
results.json, per-sample scores and table; ``gavel.score`` and ``gavel score`` the same too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import gavel
from gavel.report.tables import FORMATS

#: The data ``gavel synth --benchmark NAME --out synth/`` writes, as ``--data`` takes it.
DATA = {
    "gavel": "synth/gavel.jsonl",
    "detailverify": "synth/real_test.jsonl",
    "videohallucer": "synth",
}


def make_data(root: Path, benchmark: str, gavel_main) -> None:
    root.mkdir()
    done = gavel_main("synth", "--benchmark", benchmark, "--n", "6", "--out", root / "synth")
    assert done.code == 0, done.text


def comparable(results: dict) -> dict:
    """results.json without what says who asked and when, so two runs compare equal.

    - ``manifest.command``: the process's command line (``gavel run ...`` or the Python
      interpreter's);
    - ``manifest.created_at``: the second the run was scored;
    - ``manifest.predictions_sha256``: each prediction line records its answer's latency
      (``latency_s``), which differs between two runs, so the files' hashes do; the answers
      are compared line by line instead (:func:`answers`);
    - ``manifest.settings.configuration[*].from``: where each setting came from (``command
      line`` there, ``python`` here); the values themselves are compared.
    """
    manifest = dict(results["manifest"])
    for name in ("command", "created_at", "predictions_sha256"):
        assert manifest.pop(name)
    settings = dict(manifest["settings"])
    settings["configuration"] = {
        flag: entry["value"] for flag, entry in settings["configuration"].items()
    }
    manifest["settings"] = settings
    return {**results, "manifest": manifest}


def elsewhere(results: dict) -> dict:
    """:func:`comparable` for runs written to different folders: without the ``out`` setting
    (each run names its own)."""
    kept = comparable(results)
    assert kept["manifest"]["settings"]["configuration"].pop("out")
    return kept


def answers(predictions: Path) -> list[dict]:
    """Each prediction line without its latency (see :func:`comparable`)."""
    lines = [json.loads(line) for line in predictions.read_text().splitlines()]
    return [{k: v for k, v in line.items() if k != "latency_s"} for line in lines]


def read(path: Path) -> dict:
    return json.loads(path.read_text())


@pytest.mark.parametrize("benchmark", list(DATA))
def test_run_gives_what_gavel_run_gives(benchmark, tmp_path, monkeypatch, gavel_main):
    cli, api = tmp_path / "cli", tmp_path / "api"
    for root in (cli, api):
        make_data(root, benchmark, gavel_main)
    monkeypatch.chdir(cli)  # the same relative paths, so the manifests name the same files
    done = gavel_main("run", "--benchmark", benchmark, "--data", DATA[benchmark],
                      "--model", "scene", "--out", "run", "--no-progress")  # fmt: skip
    assert done.code == 0, done.text
    monkeypatch.chdir(api)
    result = gavel.run(benchmark, data=DATA[benchmark], model="scene", out="run", no_progress=True)

    expected = read(cli / "run" / "results.json")
    assert comparable(read(api / "run" / "results.json")) == comparable(expected)
    assert (api / "run" / "results.scores.jsonl").read_bytes() == (
        cli / "run" / "results.scores.jsonl"
    ).read_bytes()
    assert answers(api / "run" / "predictions.jsonl") == answers(cli / "run" / "predictions.jsonl")
    made = read(api / "run" / "predictions.manifest.json")
    assert made["settings"]["configuration"]["model"] == {"value": "scene", "from": "python"}
    assert result.metrics == expected["metrics"] and result.counts == expected["counts"]
    assert result.counts["total"] > 0 and result.name == "scene"
    assert result.table() in done.out  # the table `gavel run` printed


@pytest.mark.parametrize("benchmark", list(DATA))
def test_score_gives_what_gavel_score_gives(benchmark, tmp_path, monkeypatch, gavel_main):
    make_data(tmp_path / "data", benchmark, gavel_main)
    monkeypatch.chdir(tmp_path / "data")
    made = gavel.generate(benchmark, data=DATA[benchmark], model="scene", out="pred.jsonl",
                          no_progress=True)  # fmt: skip
    assert made.samples == made.answered > 0 and made.errors == 0
    assert made.manifest == Path("pred.manifest.json") and made.manifest.is_file()
    tables = {}
    for style in FORMATS:  # the default format's run writes the files
        out = ["--out", "cli/results.json"] if style == "table" else []
        done = gavel_main("score", "--benchmark", benchmark, "--data", DATA[benchmark],
                          "--predictions", "pred.jsonl", "--bootstrap", "50", "--format", style,
                          *out)  # fmt: skip
        assert done.code == 0, done.text
        tables[style] = done.out
    result = gavel.score(benchmark, data=DATA[benchmark], predictions="pred.jsonl",
                         out="api/results.json", bootstrap=50)  # fmt: skip
    for style, printed in tables.items():
        if style == "json":  # the whole record per row: its provenance differs as below, and
            # it records the settings of its own command (--format json, no --out)
            (cli_row,) = json.loads(printed).values()
            (own_row,) = json.loads(result.table(style)).values()
            for row in (cli_row, own_row):
                for flag in ("format", "out"):
                    row["manifest"]["settings"]["configuration"].pop(flag)
                row.pop("files")  # the hashes of the files written with it (none there)
            assert comparable(own_row) == comparable(cli_row)
        else:
            assert result.table(style) == printed
    cli = read(Path("cli/results.json"))
    # Same predictions file here, so its hash is the same too.
    assert (
        cli["manifest"]["predictions_sha256"]
        == read(Path("api/results.json"))["manifest"]["predictions_sha256"]
    )
    assert elsewhere(read(Path("api/results.json"))) == elsewhere(cli)
    result.save("saved")  # save() writes what --out wrote
    assert (
        Path("saved/results.scores.jsonl").read_bytes()
        == Path("cli/results.scores.jsonl").read_bytes()
    )
    assert elsewhere(read(Path("saved/results.json"))) == elsewhere(cli)


def test_a_judged_run_gives_what_gavel_run_gives(tmp_path, monkeypatch, gavel_main):
    """The offline judge (no network): metrics.explanation and the judge's counts match."""
    make_data(tmp_path / "data", "gavel", gavel_main)
    monkeypatch.chdir(tmp_path / "data")
    done = gavel_main("run", "--data", DATA["gavel"], "--model", "scene", "--out", "cli",
                      "--judge", "offline", "--bootstrap", "0", "--no-progress")  # fmt: skip
    assert done.code == 0, done.text
    result = gavel.run("gavel", data=DATA["gavel"], model="scene", out="api", judge="offline",
                       bootstrap=0, no_progress=True)  # fmt: skip
    cli = read(Path("cli/results.json"))
    assert "explanation" in cli["metrics"]
    assert result.metrics["explanation"] == cli["metrics"]["explanation"]
    api, expected = elsewhere(read(Path("api/results.json"))), elsewhere(cli)
    # Each run names its own predictions file, in its folder.
    for manifest in (api["manifest"], expected["manifest"]):
        assert manifest.pop("predictions_file").endswith("/predictions.jsonl")
    assert api == expected


#: Settings other than the defaults, the benchmark's own among them, as keywords and as flags.
CHOSEN = {
    "gavel": {"match": "max", "limit": 4, "shuffle": True, "seed": 7, "bootstrap": 100},
    "detailverify": {"mode": "strict", "thinking": True, "empty_groups": "zero", "limit": 3},
    "videohallucer": {"answer_rule": "strict", "limit": 2, "shuffle": True, "bootstrap": 0},
}


def as_flags(settings: dict) -> list[str]:
    flags = []
    for name, value in settings.items():
        flag = "--" + name.replace("_", "-")
        if value is True:
            flags.append(flag)
        else:
            for one in value if isinstance(value, list) else [value]:
                flags += [flag, str(one)]
    return flags


@pytest.mark.parametrize("benchmark", list(DATA))
def test_chosen_settings_go_where_gavel_run_sends_them(
    benchmark, tmp_path, monkeypatch, gavel_main
):
    cli, api = tmp_path / "cli", tmp_path / "api"
    for root in (cli, api):
        make_data(root, benchmark, gavel_main)
    monkeypatch.chdir(cli)
    done = gavel_main("run", "--benchmark", benchmark, "--data", DATA[benchmark], "--model",
                      "scene", "--out", "run", "--no-progress", *as_flags(CHOSEN[benchmark]))  # fmt: skip
    assert done.code == 0, done.text
    monkeypatch.chdir(api)
    gavel.run(benchmark, data=DATA[benchmark], model="scene", out="run", no_progress=True,
              **CHOSEN[benchmark])  # fmt: skip
    expected = read(cli / "run" / "results.json")
    assert comparable(read(api / "run" / "results.json")) == comparable(expected)
    assert answers(api / "run" / "predictions.jsonl") == answers(cli / "run" / "predictions.jsonl")
    assert (
        expected["manifest"]["settings"]["configuration"][
            next(iter(CHOSEN[benchmark])).replace("_", "-")
        ]["from"]
        == "command line"
    )
