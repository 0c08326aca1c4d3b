"""``gavel score --judge openai:M --dry-run`` (text only) and ``gavel run --dry-run`` against a
loopback judge whose usage is counted with a real tokenizer."""

from __future__ import annotations

import json
import re

import pytest

from gavel.examples import example_dir

pytest.importorskip("openai", reason="the LLM judge needs the api extra (openai)")


def judge_reply(body, number):
    return '{"score": 4, "reason": "checked"}'


def rows(report: str, title_start: str) -> dict:
    (section,) = [s for s in json.loads(report)["sections"] if s["title"].startswith(title_start)]
    return {row["name"]: row["value"] for row in section["rows"]}


def score(server, out, tokenizer, *extra):
    photos = example_dir("photos")
    return ["score", "--data", photos / "gavel.jsonl",
            "--predictions", photos / "predictions" / "gemini.jsonl", "--out", out,
            "--bootstrap", "0", "--judge", "openai:judge-model", "--judge-base-url", server.url,
            "--judge-api-key-env", "GAVEL_TEST_KEY", "--judge-tokenizer", tokenizer,
            "--judge-cache", out.parent.parent / "judge-cache.sqlite", *extra]  # fmt: skip


def test_judge_estimate_within_ten_percent_and_exact_counts(
    gavel_main, counting_server, tokenizer_dir, tmp_path, api_key
):
    server = counting_server
    server.reply = judge_reply
    server.served = [{"id": "judge-model"}]
    out = tmp_path / "run" / "results.json"
    command = score(server, out, tokenizer_dir, "--judge-price", "1.25,10")

    done = gavel_main(*command, "--dry-run", "--dry-run-format", "json")
    assert done.code == 0, done.text
    assert server.hits == 0 and server.models_asked == 0 and not out.parent.exists()
    before = rows(done.out, "judge")
    assert before["to send"] == before["requests"] > 0
    assert "tokenizer" in json.dumps(json.loads(done.out))

    done = gavel_main(*command)
    assert done.code == 0, done.text
    assert server.hits == before["to send"]
    (entry,) = [json.loads(line) for line in (out.parent / "judge-ledger.jsonl").open()]
    assert entry["sent"] == before["to send"]
    assert abs(before["input tokens"] - entry["prompt_tokens"]) <= 0.10 * entry["prompt_tokens"]
    # --judge-price is per million tokens, as the ledger's cost shows.
    expected = (entry["prompt_tokens"] * 1.25 + entry["completion_tokens"] * 10) / 1e6
    assert entry["cost"] == pytest.approx(expected)

    done = gavel_main(*command, "--dry-run", "--dry-run-format", "json")
    again = rows(done.out, "judge")
    assert (again["already in the resume file"], again["to send"]) == (before["to send"], 0)

    elsewhere = tmp_path / "other" / "results.json"  # no replies file there: the cache answers
    done = gavel_main(*score(server, elsewhere, tokenizer_dir), "--dry-run",
                      "--dry-run-format", "json")  # fmt: skip
    cached = rows(done.out, "judge")
    assert (cached["answered by the cache"], cached["to send"]) == (before["to send"], 0)
    assert cached["cost (USD)"] is None or cached["cost (USD)"] == 0


def test_score_dry_run_without_an_llm_judge_sends_nothing(gavel_main, tmp_path):
    photos = example_dir("photos")
    done = gavel_main("score", "--data", photos / "gavel.jsonl", "--predictions",
                      photos / "predictions" / "gemini.jsonl", "--dry-run")  # fmt: skip
    assert done.code == 0 and "costs nothing" in done.out


def test_run_dry_run_reports_the_model_and_the_judge_it_will_need(
    gavel_main, counting_server, tokenizer_dir, tmp_path, api_key
):
    code, text = gavel_main("synth", "--n", "6", "--out", tmp_path / "set")
    assert code == 0, text
    server = counting_server
    done = gavel_main("run", "--data", tmp_path / "set" / "gavel.jsonl", "--model", "openai:m",
                      "--base-url", server.url, "--api-key-env", "GAVEL_TEST_KEY",
                      "--max-tokens", "50", "--price", "1,2", "--no-cache",
                      "--judge", "openai:gpt-4o-mini", "--judge-base-url", server.url,
                      "--judge-api-key-env", "GAVEL_TEST_KEY", "--no-judge-cache",
                      "--out", tmp_path / "run", "--dry-run", "--dry-run-format", "json")  # fmt: skip
    assert done.code == 0, done.text
    assert server.hits == 0 and not (tmp_path / "run").exists()
    model, judge, total = rows(done.out, "model"), rows(done.out, "judge"), rows(done.out, "total")
    assert model["to send"] == judge["to send"] == 6  # every answer will be judged
    assert judge["output tokens"] == 6 * 1024  # --judge-max-tokens, an upper bound
    assert total["requests to send"] == 12
    # The judge's price came from the dated table (approximate), the model's from --price.
    assert total["cost (USD)"] == pytest.approx(model["cost (USD)"] + judge["cost (USD)"])
    notes = " ".join(json.loads(done.out)["notes"])
    assert re.search(r"judge: the built-in prices were checked in \d{4}-\d\d", notes)
    assert "answers not generated yet" in notes
