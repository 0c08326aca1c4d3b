"""``gavel score --judge openai:MODEL`` end to end, with a real judge server on loopback."""

from __future__ import annotations

import json
import re

import pytest

from gavel.examples import example_dir

pytest.importorskip("openai", reason="the LLM judge needs the api extra (openai)")

#: Most commands here run in-process: an exception that a thread or a finalizer would print as
#: a traceback on the console fails the test instead of passing unseen.
pytestmark = pytest.mark.filterwarnings(
    "error::pytest.PytestUnhandledThreadExceptionWarning",
    "error::pytest.PytestUnraisableExceptionWarning",
)


def by_marker(body, number):
    """Scores from words in the prediction: 'orange' -> 5, 'globe' -> 4, else 2."""
    text = body["messages"][-1]["content"]
    prediction = re.search(r"Prediction: (.*)", text).group(1)
    score = 5 if "orange" in prediction else 4 if "globe" in prediction else 2
    return f'Here you go:\n```json\n{{"score": {score}, "reason": "checked"}}\n```'


def score_with_judge(gavel_main, server, tmp_path, *extra):
    photos = example_dir("photos")
    return gavel_main(
        "score",
        "--data", photos / "gavel.jsonl",
        "--predictions", photos / "predictions" / "gemini.jsonl",
        "--out", tmp_path / "run" / "results.json",
        "--bootstrap", "0",
        "--judge", "openai:judge-model",
        "--judge-base-url", server.url,
        "--judge-api-key-env", "GAVEL_TEST_KEY",
        "--judge-cache", tmp_path / "cache.sqlite",
        *extra,
    )  # fmt: skip


def test_judge_scores_land_in_results_scores_manifest_and_ledger(
    gavel_main, server, tmp_path, api_key
):
    server.reply = by_marker
    done = score_with_judge(gavel_main, server, tmp_path, "--judge-price", "0.5,2")
    assert done.code == 0, done.err
    run = tmp_path / "run"
    results = json.loads((run / "results.json").read_text())
    explanation = results["metrics"]["explanation"]
    scores = [json.loads(line) for line in (run / "results.scores.jsonl").read_text().splitlines()]
    data = [
        json.loads(line)
        for line in (example_dir("photos") / "gavel.jsonl").read_text().splitlines()
    ]
    # Recompute the means from the per-sample scores, independently of gavel's code.
    judged = [s for s in scores if s.get("judge_score") is not None]
    assert len(judged) == len(data) == explanation["counts"]["total"]
    assert explanation["Avg"] == pytest.approx(
        20 * sum(s["judge_score"] for s in judged) / len(judged)
    )
    for column in {s["column"] for s in scores}:
        values = [s["judge_score"] for s in judged if s["column"] == column]
        assert explanation[column] == pytest.approx(20 * sum(values) / len(values))
    assert results["counts"]["judge_error"] == 0
    judge = results["manifest"]["judge"]
    assert judge["name"] == "judge-model" and judge["proxy"] is False
    assert judge["prompt_version"] == "gavel-paper-a3"
    sent = [s for s in scores if s["judge_status"] == "ok"]
    assert judge["usage"]["sent"] == len(sent) == len(data) - explanation["counts"]["not_answered"]
    assert all(s["judge_score"] == 1 for s in scores if s["judge_status"] == "not_answered")
    assert api_key not in (run / "results.json").read_text()
    ledger = [json.loads(line) for line in (run / "judge-ledger.jsonl").read_text().splitlines()]
    assert ledger[0]["judge"] == "judge-model" and ledger[0]["prompt_tokens"] > 0
    # --judge-price is in USD per million tokens.
    expected = ledger[0]["prompt_tokens"] / 1e6 * 0.5 + ledger[0]["completion_tokens"] / 1e6 * 2
    assert ledger[0]["cost"] == pytest.approx(expected)
    assert len((run / "results.judge.jsonl").read_text().splitlines()) == len(sent)
    assert "Avg" in done.out and "LLM judge judge-model" in done.out

    # Scoring again resumes: nothing is sent, the numbers are the same.
    hits = server.hits
    again = score_with_judge(gavel_main, server, tmp_path, "--no-judge-cache")
    assert again.code == 0, again.err
    assert server.hits == hits
    rerun = json.loads((run / "results.json").read_text())["metrics"]["explanation"]
    assert rerun["Avg"] == explanation["Avg"]


def test_judge_replies_ledger_line_and_scores_change_with_results_or_not_at_all(
    gavel_main, server, tmp_path, api_key
):
    import hashlib

    server.reply = by_marker
    assert score_with_judge(gavel_main, server, tmp_path).code == 0
    run = tmp_path / "run"

    def sha(data: bytes) -> str:
        return hashlib.sha256(data).hexdigest()

    files = json.loads((run / "results.json").read_text())["files"]
    (line,) = (run / "judge-ledger.jsonl").read_bytes().splitlines()
    assert files == {
        "results.scores.jsonl": sha((run / "results.scores.jsonl").read_bytes()),
        "results.judge.jsonl": sha((run / "results.judge.jsonl").read_bytes()),
        "judge-ledger.jsonl#entry": sha(line),
    }
    assert gavel_main("judge-agreement", run, run).code == 0
    # The ledger cannot be appended to (it is a folder now): the results, scores and ledger
    # stay as they were; the paid replies are kept (the judge's resume log), so the old results
    # no longer match them and are refused until scored again, which sends nothing.
    ledger = run / "judge-ledger.jsonl"
    ledger.rename(tmp_path / "ledger-kept")
    ledger.mkdir()
    kept = ("results.json", "results.scores.jsonl")
    before = {name: (run / name).read_bytes() for name in kept}
    failed = score_with_judge(gavel_main, server, tmp_path, "--judge-temperature", "0.5")
    assert failed.code == 2 and "Traceback" not in failed.err
    assert f"{ledger}: it is a folder" in failed.err
    assert {name: (run / name).read_bytes() for name in kept} == before
    ledger.rmdir()
    (tmp_path / "ledger-kept").rename(ledger)
    assert ledger.read_bytes() == line + b"\n"
    refused = gavel_main("judge-agreement", run, run)
    assert refused.code == 2 and "results.judge.jsonl: does not match" in refused.err
    hits = server.hits
    assert score_with_judge(gavel_main, server, tmp_path, "--judge-temperature", "0.5").code == 0
    assert server.hits == hits
    assert gavel_main("judge-agreement", run, run).code == 0
    # A ledger without the run's line: refused too.
    ledger.write_text("")
    refused = gavel_main("judge-agreement", run, run)
    assert refused.code == 2 and "has no line for the judge run" in refused.err


def test_a_judge_that_never_answers_validly_is_reported_not_averaged(
    gavel_main, server, tmp_path, api_key
):
    server.reply = lambda body, number: "Looks fine to me."
    done = score_with_judge(gavel_main, server, tmp_path, "--judge-retries", "1")
    assert done.code == 0, done.err
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    explanation = results["metrics"]["explanation"]
    asked = 12 - explanation["counts"]["not_answered"]
    assert results["counts"]["judge_error"] == explanation["counts"]["judge_error"] == asked
    # Only the samples the model never answered have a score (1); errors are not zeros.
    assert explanation["n"]["Avg"] == explanation["counts"]["not_answered"]
    assert "judge_error" in done.err
    assert server.hits == 2 * asked  # each sample: one reply and one re-ask
    assert f"0 answered (0 from the cache), {asked} failed" in done.err


def test_scores_that_came_from_a_repair_are_counted_on_the_console_and_in_results(
    gavel_main, server, tmp_path, api_key
):
    from gavel.judge.llm import REPAIR_PROMPT

    def reply(body, number):  # deterministic: a score only when told to give only the JSON
        if body["messages"][-1]["content"] == REPAIR_PROMPT:
            return '{"score": 3, "reason": "repaired"}'
        return "Three, I would say."

    server.reply = reply
    done = score_with_judge(gavel_main, server, tmp_path)
    assert done.code == 0, done.err
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    explanation = results["metrics"]["explanation"]
    asked = 12 - explanation["counts"]["not_answered"]
    assert server.hits == 2 * asked  # each sample: the request, then one repair
    assert f"{asked} answered (0 from the cache), 0 failed, {asked} scored after a repair" in (
        done.err
    )
    assert explanation["judge"]["usage"]["repaired"] == asked
    assert explanation["judge"]["repair"] is True


def test_a_parroting_judge_on_more_samples_than_the_budget_still_writes_results(
    gavel_main, server, tmp_path, api_key
):
    """25 samples whose judge only repeats its prompt: more refused replies in a row than the
    runner's failure budget (20) allows for failures. Scoring finishes with every metric."""
    photos = example_dir("photos")
    rows = (photos / "gavel.jsonl").read_text().splitlines()
    predictions = (photos / "predictions" / "gemini.jsonl").read_text().splitlines()
    data, preds = tmp_path / "data.jsonl", tmp_path / "pred.jsonl"
    with data.open("w") as d, preds.open("w") as p:
        for k in range(3):  # three copies of each sample and of each prediction, ids renamed
            for row in map(json.loads, rows):
                d.write(json.dumps(row | {"id": f"{row['id']}-{k}"}) + "\n")
            for prediction in map(json.loads, predictions):
                p.write(json.dumps(prediction | {"id": f"{prediction['id']}-{k}"}) + "\n")
    out = tmp_path / "run" / "results.json"
    done = gavel_main(
        "score", "--data", data, "--predictions", preds, "--out", out, "--bootstrap", "0",
        "--image-root", photos, "--judge", "openai:judge-model", "--judge-base-url", server.url,
        "--judge-api-key-env", "GAVEL_TEST_KEY", "--no-judge-cache", "--judge-retries", "0",
    )  # fmt: skip
    assert done.code == 0, done.err
    results = json.loads(out.read_text())
    asked = results["counts"]["total"] - results["metrics"]["explanation"]["counts"]["not_answered"]
    assert asked > 20 and results["counts"]["judge_error"] == asked
    assert results["metrics"]["grounding"]["n"] > 0  # the grounding metrics are there
    scores = [json.loads(line) for line in (out.parent / "results.scores.jsonl").open()]
    errors = [s for s in scores if s.get("judge_status") == "judge_error"]
    assert len(errors) == asked and all("no valid score" in s["judge_detail"] for s in errors)


def test_a_judge_error_from_the_server_is_in_the_per_sample_scores(
    gavel, server, fake, tmp_path, api_key
):
    server.plan = lambda body, number: fake.Fault(status=401, message="Incorrect API key given")
    # In a subprocess: the stop drops requests in flight, and the server (a thread of this
    # process) may print its own traceback about it, which is not the command's stderr.
    done = score_with_judge(gavel, server, tmp_path)
    # A wrong key stops the judging after a few requests; everything else is written.
    assert done.returncode == 2 and "the judge did not finish" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and "--judge-api-key-env" in done.stderr
    run = tmp_path / "run"
    scores = [json.loads(line) for line in (run / "results.scores.jsonl").open()]
    errors = [s for s in scores if s.get("judge_status") == "judge_error"]
    assert errors and all("401" in s["judge_detail"] for s in errors)
    assert all("Incorrect API key given" in s["judge_detail"] for s in errors)
    assert api_key not in (run / "results.scores.jsonl").read_text()


def test_judge_flags_are_checked_before_any_work(gavel_main, tmp_path):
    photos = example_dir("photos")
    common = ["score", "--data", photos / "gavel.jsonl",
              "--predictions", photos / "predictions" / "gpt.jsonl"]  # fmt: skip
    done = gavel_main(*common, "--judge", "gpt-5")
    assert done.code == 2 and "use 'offline' or 'openai:MODEL'" in done.err
    done = gavel_main(*common, "--judge", "openai:x", "--judge-extra-body", "{oops")
    assert done.code == 2 and "--judge-extra-body is not JSON" in done.err


def test_run_takes_the_judge_flags_too(gavel_main, tmp_path):
    pytest.importorskip("onnxruntime", reason="the offline judge needs the judge extra")
    assert gavel_main("synth", "--n", "6", "--out", tmp_path / "set").code == 0
    done = gavel_main(
        "run", "--data", tmp_path / "set" / "gavel.jsonl", "--model", "scene",
        "--out", tmp_path / "run", "--bootstrap", "0", "--judge", "offline", "--no-progress",
    )  # fmt: skip
    assert done.code == 0, done.err
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["metrics"]["explanation"]["judge"]["proxy"] is True
    assert results["metrics"]["explanation"]["counts"]["total"] == 6
    assert "Avg (proxy)" in done.out
    assert not (tmp_path / "run" / "judge-ledger.jsonl").exists()  # nothing paid, no ledger


def test_run_checks_the_judge_flags_before_asking_the_model(gavel_main, tmp_path):
    assert gavel_main("synth", "--n", "4", "--out", tmp_path / "set").code == 0
    done = gavel_main(
        "run", "--data", tmp_path / "set" / "gavel.jsonl", "--model", "scene",
        "--out", tmp_path / "run", "--judge", "openai:x", "--judge-price", "nan,1",
    )  # fmt: skip
    assert done.code == 2 and "--judge-price" in done.err
    assert not (tmp_path / "run" / "predictions.jsonl").exists()  # nothing was generated


def nowhere(userinfo: str = ""):
    """A server at a loopback port nothing listens on (``url``, with ``userinfo`` in it)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    class Nowhere:
        url = f"http://{userinfo}127.0.0.1:{port}/v1"

    return Nowhere


def test_an_unreachable_judge_stops_fast_but_every_other_metric_is_written(
    gavel_main, tmp_path, api_key
):
    Nowhere = nowhere()
    done = score_with_judge(gavel_main, Nowhere, tmp_path)
    assert done.code == 2 and "Traceback" not in done.err
    assert f"the judge did not finish: stopped: cannot reach {Nowhere.url}" in done.err
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["metrics"]["grounding"]["n"] > 0 and results["metrics"]["verification"]
    explanation = results["metrics"]["explanation"]
    asked = explanation["counts"]["total"] - explanation["counts"]["not_answered"]
    assert results["counts"]["judge_error"] == asked > 0
    scores = [json.loads(line) for line in (tmp_path / "run" / "results.scores.jsonl").open()]
    errors = [s for s in scores if s.get("judge_status") == "judge_error"]
    assert len(errors) == asked
    assert all("connection refused" in s["judge_detail"] for s in errors)
    assert any("rerun the same command to judge the rest" in w for w in results["warnings"])


def test_a_judge_model_the_server_does_not_serve_fails_at_once(
    gavel_main, server, tmp_path, api_key
):
    server.served = [{"id": "gpt-judge", "object": "model", "owned_by": "vllm"}]
    done = score_with_judge(gavel_main, server, tmp_path)
    assert done.code != 0 and "Traceback" not in done.err
    assert "does not serve the model 'judge-model'" in done.err and "gpt-judge" in done.err
    assert "--judge openai:NAME" in done.err and "--judge-base-url" in done.err
    assert server.hits == 0


def test_no_judge_model_check_judges_with_a_list_that_omits_the_judge(
    gavel_main, server, tmp_path, api_key
):
    server.served = [{"id": "gpt-judge", "object": "model", "owned_by": "provider"}]
    server.reply = by_marker
    done = score_with_judge(gavel_main, server, tmp_path, "--no-judge-model-check")
    assert done.code == 0, done.err
    assert server.models_asked == 0 and server.hits > 0
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["counts"]["judge_error"] == 0


def test_a_judge_refusing_every_request_stops_with_the_servers_words(
    gavel_main, server, fake, tmp_path, api_key
):
    server.plan = lambda body, number: fake.fastapi_detail(
        "Unexpected fields in the request: {'temperature'}"
    )
    done = score_with_judge(gavel_main, server, tmp_path, "--judge-concurrency", "1")
    assert done.code == 2 and "Traceback" not in done.err
    assert server.hits == 3
    assert "HTTP 422: Unexpected fields in the request: {'temperature'}" in done.err
    assert "--judge-temperature" in done.err


PASSWORD = "hunter2-correct-horse"  # no prefix a key scanner knows: only the URL says it is one


def test_an_unreachable_judge_with_a_password_in_its_url_records_and_prints_none(
    gavel_main, tmp_path, api_key
):
    Nowhere = nowhere(f"someone:{PASSWORD}@")
    done = score_with_judge(gavel_main, Nowhere, tmp_path)
    assert done.code == 2 and "Traceback" not in done.err
    assert f"cannot reach {Nowhere.url.replace(f'someone:{PASSWORD}', '***')}" in done.err
    run = tmp_path / "run"
    scores = (run / "results.scores.jsonl").read_text()
    assert "judge_error" in scores and "connection refused" in scores
    written = scores + (run / "results.json").read_text()
    assert PASSWORD not in written + done.out + done.err


def test_a_judge_that_does_not_serve_the_model_is_named_without_its_password(
    gavel_main, server, tmp_path, api_key
):
    server.served = [{"id": "gpt-judge", "object": "model", "owned_by": "vllm"}]

    class WithPassword:
        url = server.url.replace("http://", f"http://someone:{PASSWORD}@")

    done = score_with_judge(gavel_main, WithPassword, tmp_path)
    assert done.code == 2 and "does not serve the model 'judge-model'" in done.err
    assert PASSWORD not in done.out + done.err
    assert server.url.replace("http://", "http://***@") in done.err
