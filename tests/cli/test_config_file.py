"""``--config`` files on generate, score and run: values, precedence, errors naming the key,
the benchmark chosen by the file, and the resolved configuration in manifests and dry runs."""

from __future__ import annotations

import json
import os

import pytest


@pytest.fixture
def synth(gavel_main, tmp_path):
    done = gavel_main("synth", "--n", "6", "--out", tmp_path / "s")
    assert done.code == 0, done.text
    return tmp_path / "s" / "gavel.jsonl"


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("suffix", [".toml", ".yaml", ".yml"])
def test_flags_come_from_the_file_and_the_command_line_wins(gavel_main, synth, tmp_path, suffix):
    out = tmp_path / "p.jsonl"
    if suffix == ".toml":
        text = f'data = "{synth}"\nmodel = "scene"\nout = "{out}"\nno_progress = true\nlimit = 4\n'
    else:
        text = f"data: {synth}\nmodel: scene\nout: {out}\nno-progress: true\nlimit: 4\n"
    config = _write(tmp_path / f"run{suffix}", text)
    done = gavel_main("generate", "--config", config, "--limit", "2")
    assert done.code == 0, done.text
    assert len(out.read_text().splitlines()) == 2  # the command line's --limit, not the file's
    settings = json.loads((tmp_path / "p.manifest.json").read_text())["settings"]
    resolved = settings["configuration"]
    assert resolved["config"] == {"value": str(config), "from": "command line"}
    assert resolved["limit"] == {"value": 2, "from": "command line"}
    assert resolved["model"] == {"value": "scene", "from": "config"}
    assert resolved["data"] == {"value": str(synth), "from": "config"}
    assert resolved["no-progress"] == {"value": True, "from": "config"}
    assert resolved["seed"] == {"value": 0, "from": "default"}
    assert resolved["base-url"] == {"value": [], "from": "default"}
    assert settings["selection"]["limit"] == 2


def test_score_records_the_configuration_and_benchmark_options_come_from_the_file(
    gavel_main, tmp_path
):
    done = gavel_main("synth", "--benchmark", "videohallucer", "--n", "3", "--out", tmp_path / "v")
    assert done.code == 0, done.text
    data = tmp_path / "v"
    gen = _write(tmp_path / "gen.toml", f'benchmark = "videohallucer"\ndata = "{data}"\n'
                 f'model = "scene"\nout = "{tmp_path / "p.jsonl"}"\nno-progress = true\n')  # fmt: skip
    assert gavel_main("generate", "--config", gen).code == 0
    config = _write(tmp_path / "score.toml", 'benchmark = "videohallucer"\n'
                    'answer-rule = "strict"\nbootstrap = 0\n')  # fmt: skip
    done = gavel_main("score", "--config", config, "--data", data, "--predictions",
                      tmp_path / "p.jsonl", "--out", tmp_path / "r.json")  # fmt: skip
    assert done.code == 0, done.text
    settings = json.loads((tmp_path / "r.json").read_text())["manifest"]["settings"]
    assert settings["answer_rule"] == "strict"  # the benchmark option took the file's value
    assert settings["resamples"] == 0
    resolved = settings["configuration"]
    assert resolved["benchmark"] == {"value": "videohallucer", "from": "config"}
    assert resolved["answer-rule"] == {"value": "strict", "from": "config"}
    assert resolved["predictions"]["from"] == "command line"


def test_the_files_benchmark_chooses_which_options_it_takes(gavel_main, synth, tmp_path):
    config = _write(tmp_path / "c.toml", 'benchmark = "detailverify"\nmode = "strict"\n')
    done = gavel_main("score", "--config", config, "--help")
    assert done.code == 0, done.text
    assert "--mode" in done.out and "--box-format" not in done.out
    # Another benchmark's option in the file is refused by name, naming its owner.
    wrong = _write(tmp_path / "w.toml", 'mode = "strict"\n')
    done = gavel_main("score", "--config", wrong, "--data", synth, "--predictions", synth)
    assert done.code == 2
    assert (
        f"{wrong}: key 'mode' is a detailverify option; this run's benchmark is gavel" in done.err
    )
    # The command line's --benchmark wins over the file's.
    done = gavel_main("score", "--config", config, "--benchmark", "gavel", "--help")
    assert done.code == 2 and "key 'mode' is a detailverify option" in done.err


def test_an_unknown_key_is_an_error_naming_it_and_the_file(gavel_main, synth, tmp_path):
    config = _write(tmp_path / "c.yaml", "model: scene\nmax_tokenz: 5\n")
    done = gavel_main("generate", "--config", config, "--data", synth, "--out", tmp_path / "p")
    assert done.code == 2
    assert done.err.strip() == (
        f"error: {config}: unknown key 'max-tokenz' (not a flag of gavel generate)"
    )
    assert not (tmp_path / "p").exists()


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('max-tokens = "many"', "key 'max-tokens' must be a whole number, not str 'many'"),
        ("max-tokens = true", "key 'max-tokens' must be a whole number, not bool True"),
        ("max-tokens = 0", "key 'max-tokens': 0 is not in the range x>=1."),
        ("temperature = [1]", "key 'temperature' must be a number, not list [1]"),
        ("no-cache = 1", "key 'no-cache' must be true or false, not int 1"),
        ('executor = "cloud"', "key 'executor': 'cloud' is not one of 'local', 'ray'."),
        ("base-url = [1, 2]", "key 'base-url' must be a list of text (or text), not int 1"),
    ],
)
def test_a_wrong_type_names_the_key_and_what_was_expected(gavel_main, synth, tmp_path, line,
                                                          message):  # fmt: skip
    config = _write(tmp_path / "c.toml", line + "\n")
    done = gavel_main("generate", "--config", config, "--data", synth, "--model", "scene",
                      "--out", tmp_path / "p.jsonl")  # fmt: skip
    assert done.code == 2, done.text
    assert done.err.strip() == f"error: {config}: {message}"


def test_repeated_flags_take_lists(gavel_main, synth, tmp_path):
    config = _write(
        tmp_path / "c.toml", 'sample-id = ["synth-00000", "synth-00002"]\nmodel = "scene"\n'
    )
    done = gavel_main("generate", "--config", config, "--data", synth, "--out",
                      tmp_path / "p.jsonl", "--no-progress")  # fmt: skip
    assert done.code == 0, done.text
    ids = [json.loads(line)["id"] for line in (tmp_path / "p.jsonl").open()]
    assert ids == ["synth-00000", "synth-00002"]
    settings = json.loads((tmp_path / "p.manifest.json").read_text())["settings"]
    assert settings["configuration"]["sample-id"] == {
        "value": ["synth-00000", "synth-00002"],
        "from": "config",
    }


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("c.toml", "model = \n", "not valid TOML"),
        ("c.yaml", "model: [scene\n", "not valid YAML"),
        ("c.yaml", "- scene\n", "a config file holds flag = value pairs at its top level"),
        ("c.json", "{}", "a config file is .toml, .yaml or .yml"),
        ("c.toml", "config = 'other.toml'\n", "unknown key 'config'"),
        ("c.toml", "a = " + "[" * 100_000 + "]" * 100_000 + "\n", "nested too deeply"),
        ("c.yaml", "a: " + "[" * 100_000 + "]" * 100_000 + "\n", "nested too deeply"),
        ("c.toml", "seed = " + "7" * 5000 + "\n", "a number with too many digits"),
        ("c.yaml", "seed: " + "7" * 5000 + "\n", "a number with too many digits"),
        ("c.yaml", 'out: "\\udfff"\n', "key 'out' holds a lone surrogate"),
        ("c.yaml", 'out: "a\\0b"\n', "key 'out' holds a NUL character"),
        ("c.toml", 'out = "a\\u0000b"\n', "key 'out' holds a NUL character"),
        ("c.yaml", "seed: -1\n", "key 'seed': -1 is not in the range"),
    ],
)
def test_a_bad_file_is_one_message(gavel_main, synth, tmp_path, name, text, message):
    config = _write(tmp_path / name, text)
    done = gavel_main("score", "--config", config, "--data", synth, "--predictions", synth)
    assert done.code == 2
    lines = done.err.strip().splitlines()
    assert lines[0].startswith(f"error: {config}: ") and message in done.err
    missing = gavel_main("score", "--config", tmp_path / "none.toml", "--data", synth,
                         "--predictions", synth)  # fmt: skip
    assert missing.code == 2 and "none.toml: no such config file" in missing.err


def test_run_uses_the_file_for_both_halves_and_records_it_twice(gavel_main, synth, tmp_path):
    config = _write(tmp_path / "run.toml", f'data = "{synth}"\nmodel = "scene"\n'
                    'bootstrap = 0\nlimit = 3\nno-progress = true\n')  # fmt: skip
    done = gavel_main("run", "--config", config, "--out", tmp_path / "run")
    assert done.code == 0, done.text
    made = json.loads((tmp_path / "run" / "predictions.manifest.json").read_text())
    result = json.loads((tmp_path / "run" / "results.json").read_text())
    assert made["settings"]["configuration"] == result["manifest"]["settings"]["configuration"]
    resolved = made["settings"]["configuration"]
    assert resolved["bootstrap"] == {"value": 0, "from": "config"}
    assert resolved["out"] == {"value": str(tmp_path / "run"), "from": "command line"}
    assert result["manifest"]["settings"]["resamples"] == 0
    assert len((tmp_path / "run" / "predictions.jsonl").read_text().splitlines()) == 3
    assert result["manifest"]["settings"]["selection"]["chosen"] == 3


def test_the_dry_run_prints_the_resolved_configuration(gavel_main, synth, tmp_path):
    config = _write(tmp_path / "run.toml", 'model = "scene"\nseed = 7\n')
    done = gavel_main("generate", "--config", config, "--data", synth, "--out",
                      tmp_path / "p.jsonl", "--dry-run", "--dry-run-format", "json")  # fmt: skip
    assert done.code == 0, done.text
    report = json.loads(done.out)
    (section,) = [s for s in report["sections"] if s["title"] == "configuration"]
    rows = {row["name"]: (row["value"], row["how"]) for row in section["rows"]}
    assert rows["seed"] == (7, "config")
    assert rows["model"] == ("scene", "config")
    assert rows["dry-run"] == (True, "command line")
    assert rows["concurrency"] == (None, "default")
    assert not (tmp_path / "p.jsonl").exists()
    done = gavel_main("score", "--config", _write(tmp_path / "s.toml", "seed = 3\n"), "--data",
                      synth, "--predictions", synth, "--dry-run")  # fmt: skip
    assert done.code == 0, done.text
    assert "Configuration" in done.out and "no LLM judge" in done.out
    (seed,) = [line for line in done.out.splitlines() if "│ seed " in line]
    assert "3" in seed and "config" in seed


def test_a_password_in_a_url_is_not_recorded(gavel_main, synth, tmp_path):
    config = _write(tmp_path / "c.toml", 'base-url = ["http://user:SECRET@127.0.0.1:9/v1"]\n')
    done = gavel_main("generate", "--config", config, "--data", synth, "--model", "openai:m",
                      "--out", tmp_path / "p.jsonl", "--dry-run", "--dry-run-format", "json")  # fmt: skip
    assert done.code == 0, done.text
    assert "SECRET" not in done.out
    assert "http://***@127.0.0.1:9/v1" in done.out


def test_commands_without_config_files_do_not_read_one(gavel_main, tmp_path):
    config = _write(tmp_path / "c.toml", "not a key = at all\n")
    done = gavel_main("synth", "--config", config, "--out", tmp_path / "s")
    assert done.code == 2
    assert "No such option '--config'" in done.err and "TOML" not in done.err


def alias_bomb(levels: int = 9) -> str:
    """A "billion laughs" YAML file: each level names the one below nine times (9**10 in all,
    in about 400 bytes)."""
    lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for level in range(1, levels + 1):
        below = chr(ord("a") + level - 1)
        lines.append(
            f"{chr(ord('a') + level)}: &{chr(ord('a') + level)} ["
            + ", ".join([f"*{below}"] * 9)
            + "]"
        )
    return "\n".join(lines) + "\n"


def test_a_yaml_alias_bomb_is_refused_before_it_expands(gavel_main, synth, tmp_path):
    config = _write(tmp_path / "bomb.yaml", alias_bomb())
    assert len(config.read_bytes()) < 500
    done = gavel_main("score", "--config", config, "--data", synth, "--predictions", synth)
    assert done.code == 2 and "expands to more than 10000 values" in done.err, done.err
    few = _write(tmp_path / "few.yaml", "a: &n [1, 2]\nb: *n\n")  # ordinary aliases still work
    done = gavel_main("score", "--config", few, "--data", synth, "--predictions", synth)
    assert done.code == 2 and "unknown key 'a'" in done.err


def test_only_a_small_regular_file_is_read(gavel_main, synth, tmp_path):
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)  # nobody writes to it: reading it would wait forever
    zero = tmp_path / "zero.yaml"
    zero.symlink_to("/dev/zero")  # reading it would fill memory
    big = _write(tmp_path / "big.toml", "# padding\n" * 200_000)
    for config, message in [
        (fifo, "is a FIFO (named pipe): gavel reads regular files only"),
        (zero, "is a device: gavel reads regular files only"),
        (big, "larger than 1024 KiB, too large for a config file"),
    ]:
        done = gavel_main("score", "--config", config, "--data", synth, "--predictions", synth)
        assert done.code == 2 and f"error: {config}: {message}" in done.err, done.err
