"""``--rpm`` / ``--tpm`` and ``--judge-rpm`` / ``--judge-tpm`` on the command line, against a
real server on loopback that records when each request arrived."""

from __future__ import annotations

import json
import re

import pytest

from gavel.examples import example_dir

pytest.importorskip("openai")


def arrivals(server) -> list[float]:
    return sorted(when for when, _, _ in server.received)


def assert_paced(times: list[float], per_minute: float) -> None:
    """No more requests in any stretch than the budget allows, with the one a bucket may
    hold: the k-th request after the first arrives no sooner than (k - 1) intervals later,
    give or take 0.1 s of the server's own scheduling (unpaced, all would come at once)."""
    interval = 60.0 / per_minute
    for k in range(2, len(times)):
        assert times[k] - times[0] >= (k - 1) * interval - 0.1, (k, times[k] - times[0])


def test_generate_keeps_within_rpm_and_records_it(gavel, server, tmp_path, api_key):
    data = example_dir("photos") / "gavel.jsonl"
    out = tmp_path / "pred.jsonl"
    done = gavel("generate", "--data", data, "--model", "openai:m", "--base-url", server.url,
                 "--api-key-env", "GAVEL_TEST_KEY", "--no-cache", "--no-progress",
                 "--rpm", "300", "--tpm", "1000000", "--out", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert len(out.read_text().splitlines()) == 12 == server.hits
    assert_paced(arrivals(server), 300)
    manifest = json.loads((tmp_path / "pred.manifest.json").read_text())
    assert manifest["settings"]["rate_limits"] == {"rpm": 300.0, "tpm": 1000000.0}
    assert "rpm" not in manifest["adapter"]  # not part of what made the answers (nor the cache key)


def test_rate_flags_are_refused_for_models_run_here(gavel, tmp_path):
    data = example_dir("photos") / "gavel.jsonl"
    done = gavel("generate", "--data", data, "--model", "scene", "--rpm", "60",
                 "--out", tmp_path / "p.jsonl")  # fmt: skip
    assert done.returncode == 2
    assert "--rpm applies to openai: models only" in done.stderr
    assert not (tmp_path / "p.jsonl").exists()
    bad = gavel("generate", "--data", data, "--model", "openai:m", "--tpm", "0",
                "--out", tmp_path / "p.jsonl")  # fmt: skip
    assert bad.returncode == 2 and "--tpm" in bad.stderr
    ray = gavel("generate", "--data", data, "--model", "openai:m", "--rpm", "60",
                "--executor", "ray", "--out", tmp_path / "p.jsonl")  # fmt: skip
    assert ray.returncode == 2 and "--rpm: only with the local executor" in ray.stderr


def judge_reply(body, number):
    return '{"score": 4, "reason": "checked"}'


def test_score_paces_the_judge_with_judge_rpm(gavel, server, tmp_path, api_key):
    server.reply = judge_reply
    photos = example_dir("photos")
    done = gavel("score", "--data", photos / "gavel.jsonl",
                 "--predictions", photos / "predictions" / "gemini.jsonl",
                 "--out", tmp_path / "results.json", "--bootstrap", "0",
                 "--judge", "openai:judge-model", "--judge-base-url", server.url,
                 "--judge-api-key-env", "GAVEL_TEST_KEY", "--no-judge-cache",
                 "--judge-rpm", "300", "--judge-tpm", "500000")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert server.hits >= 3
    assert_paced(arrivals(server), 300)


def test_the_flags_are_on_generate_run_and_score(gavel):
    for command, flags in (
        ("generate", ["--rpm", "--tpm"]),
        ("run", ["--rpm", "--tpm", "--judge-rpm", "--judge-tpm"]),
        ("score", ["--judge-rpm", "--judge-tpm"]),
    ):
        shown = gavel(command, "--help")
        assert shown.returncode == 0, shown.stderr
        for flag in flags:
            assert re.search(rf"{flag}\b", shown.stdout), (command, flag)
    assert "--rpm" not in re.sub(r"--judge-rpm", "", gavel("score", "--help").stdout)
