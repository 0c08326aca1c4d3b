"""What the tests against real third-party servers (``transformers serve``, ``llama-server``)
share: synthetic data, the ``gavel`` command lines they run, and the structure every answer
must have. Their answers mean nothing (random weights), so structure is asserted, not text."""

from __future__ import annotations

import json
import socket
from pathlib import Path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def synth(gavel, benchmark: str, folder: Path) -> tuple[Path, int]:
    """A data set of ``benchmark`` and how many requests it makes, counted from its files."""
    n = "2" if benchmark == "videohallucer" else "3"
    done = gavel("synth", "--benchmark", benchmark, "--n", n, "--out", folder)
    assert done.returncode == 0, done.stderr
    if benchmark == "gavel":
        data = folder / "gavel.jsonl"
        return data, len(data.read_text().splitlines())
    if benchmark == "detailverify":
        data = folder / "real_test.jsonl"
        return data, len(data.read_text().splitlines())
    pairs = sum(len(json.loads(f.read_text())) for f in folder.glob("*/*.json"))
    return folder, 2 * pairs  # a basic and a hallucinated question per pair


def generate(gavel, url: str, model: str, benchmark: str, data: Path, out: Path, *flags: str,
             max_tokens: str, concurrency: str):  # fmt: skip
    return gavel("generate", "--benchmark", benchmark, "--data", data,
                 "--model", f"openai:{model}", "--base-url", url, "--max-tokens", max_tokens,
                 "--no-cache", "--no-progress", "--concurrency", concurrency, "--out", out,
                 *flags)  # fmt: skip


def judge(gavel, url: str, model: str, tmp_path: Path, data: Path, predictions: Path, *flags: str):
    return gavel("score", "--data", data, "--predictions", predictions,
                 "--out", tmp_path / "run" / "results.json", "--bootstrap", "0",
                 "--judge", f"openai:{model}", "--judge-base-url", url,
                 "--judge-max-tokens", "16", "--judge-concurrency", "2", "--judge-retries", "0",
                 "--no-judge-cache", *flags)  # fmt: skip


def check_answered_and_scored(gavel, tmp_path: Path, benchmark: str, data: Path, out: Path,
                              expected: int, max_tokens: str) -> list[dict]:  # fmt: skip
    """One answer line per request, each a real completion within ``max_tokens``; then the
    file scores. Returns the lines for the caller's own checks."""
    written = lines(out)
    assert len(written) == len({line["id"] for line in written}) == expected
    for line in written:
        assert line.get("error") is None, line
        assert isinstance(line["response"], str)
        assert line["finish_reason"] in ("length", "stop")
        assert 0 < line["completion_tokens"] <= int(max_tokens)  # max_tokens was obeyed
    scored = gavel("score", "--benchmark", benchmark, "--data", data, "--predictions", out,
                   "--out", tmp_path / "run" / "results.json", "--bootstrap", "0")  # fmt: skip
    assert scored.returncode == 0, scored.stderr
    assert json.loads((tmp_path / "run" / "results.json").read_text())["benchmark"] == benchmark
    return written


def check_every_sample_is_judge_error(run: Path, predictions: Path) -> None:
    """A random-weight judge writes no ``{"score": N}``: every sample is judge_error, none is
    scored, and every reply is kept raw with why it was refused."""
    result = json.loads((run / "results.json").read_text())
    scores = lines(run / "results.scores.jsonl")
    asked = len(lines(predictions))
    assert result["counts"]["judge_error"] == asked
    assert all(s.get("judge_score") is None for s in scores)
    errors = [s for s in scores if s.get("judge_status") == "judge_error"]
    assert len(errors) == asked and all("no valid score" in s["judge_detail"] for s in errors)
    replies = lines(run / "results.judge.jsonl")
    assert len(replies) == asked
    assert all(r["error_kind"] == "invalid_answer" and "last reply" in r["error"] for r in replies)
