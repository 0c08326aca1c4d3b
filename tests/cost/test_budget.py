"""``--max-cost``: the run stops once its recorded usage reaches the limit, keeps everything,
and a rerun with a higher limit continues without asking anything twice."""

from __future__ import annotations

import json
import re

import pytest

from gavel.examples import example_dir
from gavel.io.run_files import check_run_files

pytest.importorskip("openai", reason="served models need the api extra (openai)")

#: USD per million tokens: a thousandth of a dollar a token, so a few requests reach a dollar.
PRICE = "1000,1000"


def spent_in(text: str) -> float:
    return float(re.search(r"spent \$([0-9.]+)", text).group(1))


def line_cost(line: dict) -> float:
    return (line["prompt_tokens"] + line["completion_tokens"]) * 1000 / 1e6


def test_generation_stops_at_the_limit_and_a_higher_one_goes_on(
    gavel_main, counting_server, tmp_path, api_key
):
    code, text = gavel_main("synth", "--n", "10", "--out", tmp_path / "set")
    assert code == 0, text
    server, out = counting_server, tmp_path / "p.jsonl"
    command = ["generate", "--data", tmp_path / "set" / "gavel.jsonl", "--model", "openai:m",
               "--base-url", server.url, "--api-key-env", "GAVEL_TEST_KEY", "--no-cache",
               "--concurrency", "1", "--price", PRICE, "--no-progress", "--out", out]  # fmt: skip

    done = gavel_main(*command, "--max-cost", "2")
    assert done.code == 2, done.text
    assert "reached --max-cost $2" in done.err and "rerun with a higher --max-cost" in done.err
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert 0 < len(lines) == server.hits < 10  # every answer received is kept
    assert all(line.get("error") is None for line in lines)
    costs = [line_cost(line) for line in lines]
    assert spent_in(done.err) == pytest.approx(sum(costs), abs=1e-4)
    assert sum(costs) >= 2 > sum(costs[:-1])  # it stopped at the first answer that reached it
    assert (tmp_path / "p.manifest.json").is_file()

    hits = server.hits
    done = gavel_main(*command, "--max-cost", "2")  # the same limit: already reached
    assert done.code == 2 and server.hits == hits and "reached --max-cost" in done.err

    done = gavel_main(*command, "--max-cost", "100")
    assert done.code == 0, done.text
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == len({line["id"] for line in lines}) == 10
    assert server.hits == 10 and set(server.prompts.values()) == {1}  # nothing asked twice


def test_the_judge_stops_at_the_limit_with_the_run_written(
    gavel_main, counting_server, tmp_path, api_key
):
    server = counting_server
    server.reply = lambda body, number: '{"score": 3, "reason": "fine"}'
    photos = example_dir("photos")
    out = tmp_path / "run" / "results.json"
    command = ["score", "--data", photos / "gavel.jsonl",
               "--predictions", photos / "predictions" / "gemini.jsonl", "--out", out,
               "--bootstrap", "0", "--judge", "openai:judge-model", "--judge-base-url",
               server.url, "--judge-api-key-env", "GAVEL_TEST_KEY", "--no-judge-cache",
               "--judge-concurrency", "1", "--judge-price", PRICE]  # fmt: skip

    done = gavel_main(*command, "--max-cost", "1")
    assert done.code == 2, done.text
    assert "the judge did not finish" in done.err and "reached --max-cost $1" in done.err
    replies = [json.loads(line) for line in (out.parent / "results.judge.jsonl").open()]
    assert 0 < len(replies) == server.hits
    costs = [line_cost(reply) for reply in replies]
    assert sum(costs) >= 1 > sum(costs[:-1])
    results = json.loads(out.read_text())  # written, with the rest as judge errors
    assert results["counts"]["judge_error"] > 0
    check_run_files(out, results["files"])  # the run's files belong together

    done = gavel_main(*command, "--max-cost", "100")
    assert done.code == 0, done.text
    assert json.loads(out.read_text())["counts"]["judge_error"] == 0
    assert set(server.prompts.values()) == {1}  # the first replies were not asked again


def test_a_limit_needs_a_price(gavel_main, server, tmp_path, api_key):
    assert gavel_main("synth", "--n", "2", "--out", tmp_path / "set").code == 0
    done = gavel_main("generate", "--data", tmp_path / "set" / "gavel.jsonl", "--model",
                      "openai:my-model", "--base-url", server.url, "--api-key-env",
                      "GAVEL_TEST_KEY", "--out", tmp_path / "p.jsonl", "--max-cost", "5")  # fmt: skip
    assert done.code == 2 and "--max-cost needs the price of my-model" in done.err
    assert server.hits == 0 and not (tmp_path / "p.jsonl").exists()


def test_run_shares_one_limit_between_the_model_and_the_judge(
    gavel_main, counting_server, tmp_path, api_key
):
    code, text = gavel_main("synth", "--n", "6", "--out", tmp_path / "set")
    assert code == 0, text
    server = counting_server
    server.reply = lambda body, number: (
        '{"score": 3, "reason": "fine"}' if body["messages"][0]["role"] == "system" else "no"
    )

    def run(folder, limit):
        return gavel_main("run", "--data", tmp_path / "set" / "gavel.jsonl", "--model",
                          "openai:m", "--base-url", server.url, "--api-key-env", "GAVEL_TEST_KEY",
                          "--no-cache", "--concurrency", "1", "--price", PRICE, "--no-progress",
                          "--judge", "openai:j", "--judge-base-url", server.url,
                          "--judge-api-key-env", "GAVEL_TEST_KEY", "--no-judge-cache",
                          "--judge-concurrency", "1", "--judge-price", PRICE, "--bootstrap", "0",
                          "--out", folder, "--max-cost", limit)  # fmt: skip

    done = run(tmp_path / "whole", "1000")
    assert done.code == 0, done.text
    model = sum(map(line_cost, map(json.loads, (tmp_path / "whole" / "predictions.jsonl").open())))
    judge = sum(
        map(line_cost, map(json.loads, (tmp_path / "whole" / "results.judge.jsonl").open()))
    )
    assert model > 0 and judge > 0.5

    # Enough for the model and about half the judge: the model finishes, the judge stops.
    limit = model + judge / 2
    done = run(tmp_path / "half", f"{limit:.4f}")
    assert done.code == 2, done.text
    assert "the run ($" in done.err and "by the model, the rest by the judge j) spent" in done.err
    assert f"reached --max-cost ${float(f'{limit:.4f}'):g}" in done.err
    generated = (tmp_path / "half" / "predictions.jsonl").read_text().splitlines()
    judged = (tmp_path / "half" / "results.judge.jsonl").read_text().splitlines()
    assert len(generated) == 6 and 0 < len(judged) < 6
    assert model + sum(line_cost(json.loads(line)) for line in judged) >= limit


def test_a_limit_is_refused_where_nothing_is_paid(gavel_main, tmp_path):
    assert gavel_main("synth", "--n", "2", "--out", tmp_path / "set").code == 0
    data = tmp_path / "set" / "gavel.jsonl"
    done = gavel_main("generate", "--data", data, "--model", "scene", "--out",
                      tmp_path / "p.jsonl", "--max-cost", "1")  # fmt: skip
    assert done.code == 2 and "--max-cost applies to served models" in done.err
    done = gavel_main("score", "--data", data, "--predictions", tmp_path / "p.jsonl",
                      "--max-cost", "1")  # fmt: skip
    assert done.code == 2 and "costs nothing without an LLM judge" in done.err


def test_the_limit_holds_back_only_requests_not_answered_yet():
    from gavel.cost.budget import Budget
    from gavel.cost.prices import Price
    from gavel.requests import Request
    from gavel.runner.async_runner import AsyncRunSummary

    def ask(*ids):
        return [Request(sample_id=i, task="t", prompt=i) for i in ids]

    dollar_a_token = Price(1_000_000, 0)
    summary = AsyncRunSummary()
    budget = Budget(1.0, dollar_a_token, done=frozenset({"c"}))
    handed = []
    for request in budget.limit(ask("a", "c", "b", "d"), summary):
        handed.append(request.sample_id)
        summary.prompt_tokens += request.sample_id != "c"  # a new answer costs a dollar
    # After a: $1 spent, the limit. c is already answered (the runner skips it): handed out.
    assert handed == ["a", "c"] and budget.reached and budget.spent() == 1.0
    finished = Budget(1.0, dollar_a_token, done=frozenset({"c"}))
    assert [r.sample_id for r in finished.limit(ask("a", "c"), AsyncRunSummary())] == ["a", "c"]
    assert not finished.reached


def test_the_python_run_shares_the_limit_as_gavel_run_does(
    gavel_main, counting_server, tmp_path, api_key, monkeypatch
):
    """``gavel.run(..., max_cost=)`` is ``gavel run --max-cost``: one budget, the same stop."""
    import gavel
    from gavel.errors import GavelError

    monkeypatch.chdir(tmp_path)
    assert gavel_main("synth", "--n", "6", "--out", "set").code == 0
    server = counting_server
    server.reply = lambda body, number: (
        '{"score": 3, "reason": "fine"}' if body["messages"][0]["role"] == "system" else "no"
    )
    served = {"base_url": server.url, "api_key_env": "GAVEL_TEST_KEY", "no_cache": True,
              "concurrency": 1, "price": PRICE, "no_progress": True,
              "judge_base_url": server.url, "judge_api_key_env": "GAVEL_TEST_KEY",
              "no_judge_cache": True, "judge_concurrency": 1, "judge_price": PRICE,
              "bootstrap": 0}  # fmt: skip
    flags = [f"--{name.replace('_', '-')}" for name in served]
    args = [part for flag, value in zip(flags, served.values(), strict=True)
            for part in ([flag] if value is True else [flag, str(value)])]  # fmt: skip
    limit = "3"  # the model's answers (about $2.3) and some of the judge's
    done = gavel_main("run", "--data", "set/gavel.jsonl", "--model", "openai:m", "--judge",
                      "openai:j", "--out", "cli", "--max-cost", limit, *args)  # fmt: skip
    assert done.code == 2, done.text
    with pytest.raises(GavelError) as stopped:
        gavel.run("gavel", data="set/gavel.jsonl", model="openai:m", judge="openai:j", out="api",
                  max_cost=float(limit), **served)  # fmt: skip
    assert str(stopped.value).replace("api/", "cli/") in done.err
    lines = {}
    for name in ("predictions.jsonl", "results.judge.jsonl"):
        cli = (tmp_path / "cli" / name).read_text().splitlines()
        api = (tmp_path / "api" / name).read_text().splitlines()
        assert len(api) == len(cli)
        lines[name] = len(api)
    assert lines["predictions.jsonl"] == 6 and 0 < lines["results.judge.jsonl"] < 6
    configuration = json.loads((tmp_path / "api" / "results.json").read_text())["manifest"][
        "settings"
    ]["configuration"]
    assert configuration["max-cost"] == {"value": float(limit), "from": "python"}
