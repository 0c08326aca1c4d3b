"""The LLM judge in batch mode: the protocol's requests byte for byte, its reply checks (cut-off
and copied replies refused, then asked again), and ``gavel score --judge-batch``."""

from __future__ import annotations

import json
import re

from gavel.batch.runner import BatchSettings
from gavel.examples import example_dir
from gavel.judge.items import JUDGE_ERROR, OK, JudgeItem
from gavel.judge.llm import REPAIR_PROMPT, LLMJudge
from gavel.judge.protocol import SYSTEM_PROMPT, judge_messages
from gavel.models.openai_compat import OpenAIChatModel


def item(sample_id, column="Color", prediction="Hallucination: yes. It is blue.", truth="T"):
    hallucinated = column != "No hall."
    return JudgeItem(id=sample_id, column=column, hallucinated=hallucinated, verdict=True,
                     prediction=prediction, ground_truth=truth if hallucinated else "")  # fmt: skip


ITEMS = [
    item("a", "Color", "Hallucination: yes. The suit is orange, not blue. S4", "Suit is orange."),
    item("b", "No hall.", "Hallucination: no. The caption matches the image. S5"),
    item("c", "Object", "Hallucination: yes. There is no dog. S2", "No dog."),
]


def scored_by_marker(body):
    """The score named in the prediction ("S4" -> 4)."""
    found = re.search(r"\bS([1-5])\b", body["messages"][1]["content"])
    return json.dumps({"score": int(found.group(1)), "reason": "as told"})


def judge(server, tmp_path, name, batch=True, **options):
    model = OpenAIChatModel("judge-model", base_urls=server.url, api_key_env="GAVEL_TEST_KEY")
    settings = options.pop("settings", {})
    made = LLMJudge(model, replies=tmp_path / f"{name}.judge.jsonl", progress=False, retries=0,
                    **options)  # fmt: skip
    if batch:
        made.batch = BatchSettings(poll=0.05, **settings)
    return made


def as_json(body):
    return json.dumps(body, sort_keys=True)


def test_batch_requests_are_the_online_requests_and_score_alike(batch_server, tmp_path, api_key):
    batch_server.reply = scored_by_marker
    batched = judge(batch_server, tmp_path, "batch", cache=tmp_path / "cache.sqlite")
    by_batch = batched.judge(ITEMS)
    online = judge(batch_server, tmp_path, "online", batch=False).judge(ITEMS)
    assert [(j.id, j.status, j.score, j.reason) for j in by_batch] == [
        (j.id, j.status, j.score, j.reason) for j in online
    ]
    assert [j.score for j in by_batch] == [4, 5, 2]
    assert batch_server.created == 1 and batch_server.online == len(ITEMS)
    assert sorted(map(as_json, batch_server.bodies.values())) == sorted(
        map(as_json, batch_server.online_bodies)
    )
    for given in ITEMS:  # and both are the protocol's messages, word for word
        system, user = judge_messages(given.prediction, given.ground_truth, given.hallucinated)
        assert {"messages": [system, user]}.items() <= next(
            b for b in batch_server.bodies.values() if b["messages"][1] == user
        ).items()
        assert system["content"] == SYSTEM_PROMPT
    usage = batched.usage()
    assert (usage["answered"], usage["errors"], usage["sent"]) == (3, 0, 3)

    # Judged again (a rerun of score): the replies file answers, nothing is sent.
    again = judge(batch_server, tmp_path, "batch", cache=tmp_path / "cache.sqlite").judge(ITEMS)
    assert [j.score for j in again] == [4, 5, 2] and batch_server.created == 1


def test_cut_off_replies_are_refused_and_asked_in_the_next_round(
    batch_server, batch_fake, tmp_path, api_key
):
    batch_server.reply = scored_by_marker
    cut = '{ "score": 1'

    def plan(custom_id, body, before):
        if not before and "S4" in body["messages"][1]["content"]:
            return batch_fake.LineFault(reply=cut, finish_reason="length")
        return None

    batch_server.plan = plan
    made = judge(batch_server, tmp_path, "batch")
    judged = made.judge(ITEMS)
    assert [(j.status, j.score) for j in judged] == [(OK, 4), (OK, 5), (OK, 2)]
    assert batch_server.created == 2 and sorted(batch_server.sent.values()) == [1, 1, 2]
    # The refused reply was paid for: its tokens are counted with the rest.
    valid = sum(len(scored_by_marker(b).split()) for b in batch_server.bodies.values())
    assert made.usage()["completion_tokens"] == valid + len(cut.split())


def test_a_judge_that_only_copies_the_prompt_ends_in_judge_errors(
    batch_server, batch_fake, tmp_path, api_key
):
    batch_server.reply = lambda body: '{ "score": 1-5, "reason": "one short sentence" }'
    made = judge(batch_server, tmp_path, "batch", settings={"rounds": 2})
    judged = made.judge(ITEMS)
    assert {j.status for j in judged} == {JUDGE_ERROR}
    assert all("no valid score in the batch reply" in j.detail for j in judged)
    assert batch_server.created == 2 and set(batch_server.sent.values()) == {2}
    assert made.usage()["refused"] == len(ITEMS)


def test_score_with_judge_batch_writes_results_and_batch_status_lists_it(
    gavel_main, batch_server, tmp_path, api_key
):
    batch_server.reply = lambda body: '{"score": 4, "reason": "checked"}'
    photos = example_dir("photos")
    run = tmp_path / "run"
    done = gavel_main("score", "--data", photos / "gavel.jsonl",
                      "--predictions", photos / "predictions" / "gemini.jsonl",
                      "--out", run / "results.json", "--bootstrap", "0",
                      "--judge", "openai:judge-model", "--judge-base-url", batch_server.url,
                      "--judge-api-key-env", "GAVEL_TEST_KEY",
                      "--judge-cache", tmp_path / "c.sqlite",
                      "--judge-batch", "--judge-batch-poll", "0.05")  # fmt: skip
    assert done.code == 0, done.err
    result = json.loads((run / "results.json").read_text())
    asked = len(batch_server.sent)
    assert asked > 0 and batch_server.created == 1 and batch_server.online == 0
    assert result["metrics"]["explanation"]["judge"]["usage"]["answered"] == asked
    status = gavel_main("batch", "status", run)
    assert status.code == 0, status.err
    assert "results.judge.batch (judge, judge-model" in status.out
    assert f"batch batch_1 completed; merged: {asked} answered, 0 to ask again" in status.out


def test_judge_batch_flags_are_checked_before_any_work(gavel_main, tmp_path):
    photos = example_dir("photos")
    common = ["score", "--data", photos / "gavel.jsonl", "--predictions",
              photos / "predictions" / "gemini.jsonl"]  # fmt: skip
    no_out = gavel_main(*common, "--judge", "openai:j", "--judge-batch")
    assert no_out.code == 2 and "--judge-batch needs --out" in no_out.err
    offline = gavel_main(
        *common, "--out", tmp_path / "r.json", "--judge", "offline", "--judge-batch"
    )
    assert offline.code == 2 and "needs an LLM judge" in offline.err
    alone = gavel_main(*common, "--judge-batch-poll", "1")
    assert alone.code == 2 and "--judge-batch-poll: only with --judge-batch" in alone.err
    run = gavel_main("run", "--data", photos / "gavel.jsonl", "--model", "scene",
                     "--out", tmp_path / "run", "--judge-batch")  # fmt: skip
    assert run.code == 2 and "needs an LLM judge" in run.err
    assert not (tmp_path / "run" / "predictions.jsonl").exists()  # before the model was asked


def test_run_sends_the_model_and_the_judge_as_batches(
    gavel_main, batch_server, batch_fake, tmp_path
):
    def reply(body):
        if body["messages"][0]["role"] == "system":  # the judge's protocol has a system message
            return '{"score": 3, "reason": "fine"}'
        return f"echo: {batch_fake.prompt_of(body)}"

    batch_server.reply = reply
    photos = example_dir("photos")
    run = tmp_path / "run"
    done = gavel_main("run", "--data", photos / "gavel.jsonl", "--model", "openai:m",
                      "--base-url", batch_server.url, "--cache", tmp_path / "c.sqlite",
                      "--no-progress", "--batch", "--batch-poll", "0.05", "--bootstrap", "0",
                      "--judge", "openai:j", "--judge-base-url", batch_server.url,
                      "--judge-cache", tmp_path / "c.sqlite", "--judge-batch",
                      "--judge-batch-poll", "0.05", "--out", run)  # fmt: skip
    assert done.code == 0, done.err
    samples = len((photos / "gavel.jsonl").read_text().splitlines())
    assert batch_server.created == 2 and batch_server.online == 0
    assert len(batch_server.sent) == 2 * samples  # every sample once to the model, once judged
    assert len((run / "predictions.jsonl").read_text().splitlines()) == samples
    result = json.loads((run / "results.json").read_text())
    assert result["metrics"]["explanation"]["judge"]["usage"]["answered"] == samples
    status = gavel_main("batch", "status", run)
    assert "predictions.batch (generate, m" in status.out
    assert "results.judge.batch (judge, j" in status.out


def test_a_judge_server_that_refuses_the_upload_stops_the_judge_not_the_scoring(
    gavel, batch_server, tmp_path
):
    batch_server.refuse_uploads = True
    photos = example_dir("photos")
    run = tmp_path / "run"
    done = gavel("score", "--data", photos / "gavel.jsonl",
                 "--predictions", photos / "predictions" / "gemini.jsonl",
                 "--out", run / "results.json", "--bootstrap", "0",
                 "--judge", "openai:j", "--judge-base-url", batch_server.url,
                 "--no-judge-cache", "--judge-batch", "--judge-batch-poll", "0.05")  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr  # a process's real stderr
    assert "the judge did not finish" in done.stderr and "uploading" in done.stderr
    result = json.loads((run / "results.json").read_text())  # every other metric is written
    assert result["metrics"]["grounding"] and result["counts"]["judge_error"] > 0


def test_a_judge_batch_whose_create_reply_is_lost_is_found_not_made_again(
    batch_server, tmp_path, api_key
):
    batch_server.reply = scored_by_marker
    batch_server.create_faults = ["drop"]
    judged = judge(batch_server, tmp_path, "batch").judge(ITEMS)
    assert [j.score for j in judged] == [4, 5, 2]
    assert batch_server.created == 1
    assert len(batch_server.billed) == len(ITEMS) and set(batch_server.billed.values()) == {1}
    assert batch_server.batches["batch_1"]["metadata"]["gavel_output"] == "batch.judge.jsonl"


def test_judge_batch_keeps_to_the_budget(gavel, gavel_main, batch_server, tmp_path, api_key):
    batch_server.reply = lambda body: '{"score": 4, "reason": "checked"}'
    photos = example_dir("photos")
    run = tmp_path / "run"
    command = ["score", "--data", photos / "gavel.jsonl",
               "--predictions", photos / "predictions" / "gemini.jsonl",
               "--out", run / "results.json", "--bootstrap", "0",
               "--judge", "openai:judge-model", "--judge-base-url", batch_server.url,
               "--judge-api-key-env", "GAVEL_TEST_KEY", "--no-judge-cache",
               "--judge-price", "1000,1000", "--judge-batch", "--judge-batch-poll", "0.05",
               "--judge-batch-rounds", "20", "--judge-max-tokens", "16"]  # fmt: skip
    dry = gavel_main(*command, "--dry-run", "--dry-run-format", "json")
    assert dry.code == 0, dry.err
    rows = json.loads(dry.out)["sections"][0]["rows"]
    bound = next(r["value"] for r in rows if r["name"] == "cost (USD)")
    asked = next(r["value"] for r in rows if r["name"] == "to send")
    budget = bound / 2  # about half the requests
    stopped = gavel(*command, "--max-cost", f"{budget:.4f}")  # a process: no traceback
    assert stopped.returncode == 2 and "Traceback" not in stopped.stderr
    assert "the judge did not finish: stopped: the judge judge-model spent $" in stopped.stderr
    billed = sum(batch_server.billed_tokens.values()) / 1000
    assert 0 < billed <= budget and 0 < len(batch_server.billed) < asked
    done = gavel_main(*command, "--max-cost", f"{2 * bound:.4f}")
    assert done.code == 0, done.err
    assert len(batch_server.billed) == asked and set(batch_server.billed.values()) == {1}


PROSE = "Mostly right, I would say four."


def repaired_only(body):
    """A deterministic judge: the same request always gets the same prose; only a request
    that ends with the repair instruction gets a score."""
    if body["messages"][-1] == {"role": "user", "content": REPAIR_PROMPT}:
        return scored_by_marker(body)
    return PROSE


def replies_of(path):
    return {
        line["id"].split("#")[0]: line for line in map(json.loads, path.read_text().splitlines())
    }


def test_a_reply_without_a_score_is_repaired_in_the_next_round(batch_server, tmp_path, api_key):
    batch_server.reply = repaired_only
    cache = tmp_path / "cache.sqlite"
    made = judge(batch_server, tmp_path, "batch", cache=cache)
    judged = made.judge(ITEMS)
    assert [(j.status, j.score) for j in judged] == [(OK, 4), (OK, 5), (OK, 2)]
    assert batch_server.created == 2 and batch_server.online == 0
    # The second round's requests: the protocol's messages, the judge's reply, the repair.
    for given in ITEMS:
        system, user = judge_messages(given.prediction, given.ground_truth, given.hallucinated)
        body = next(b for b in batch_server.bodies.values() if b["messages"][1] == user)
        assert body["messages"] == [system, user, {"role": "assistant", "content": PROSE},
                                    {"role": "user", "content": REPAIR_PROMPT}]  # fmt: skip
    replies = replies_of(tmp_path / "batch.judge.jsonl")
    assert {key: line["meta"] for key, line in replies.items()} == {
        key: {"repaired": 1} for key in "abc"
    }
    assert made.usage()["repaired"] == 3
    # From the cache, into another replies file: the answers keep their mark.
    again = judge(batch_server, tmp_path, "again", cache=cache)
    assert [j.score for j in again.judge(ITEMS)] == [4, 5, 2] and batch_server.created == 2
    assert again.usage()["repaired"] == 3


def test_repairs_are_asked_online_with_the_online_fallback(batch_server, tmp_path, api_key):
    batch_server.reply = repaired_only
    made = judge(batch_server, tmp_path, "batch", settings={"fallback": "online"})
    judged = made.judge(ITEMS)
    assert [(j.status, j.score) for j in judged] == [(OK, 4), (OK, 5), (OK, 2)]
    assert batch_server.created == 1
    # One online request each: the repair itself, not the plain request asked once more.
    assert batch_server.online == len(ITEMS)
    assert all(body["messages"][-1]["content"] == REPAIR_PROMPT
               for body in batch_server.online_bodies)  # fmt: skip
    assert made.usage()["repaired"] == 3
    replies = replies_of(tmp_path / "batch.judge.jsonl")
    assert {line["meta"]["repaired"] for line in replies.values()} == {1}


def test_a_judge_that_never_scores_is_repaired_as_often_as_online_then_a_judge_error(
    batch_server, tmp_path, api_key
):
    batch_server.reply = lambda body: PROSE
    made = judge(batch_server, tmp_path, "batch", invalid_retries=1, settings={"rounds": 5})
    judged = made.judge(ITEMS)
    assert {j.status for j in judged} == {JUDGE_ERROR}
    # Once, then one repair (--judge-retries 1), as online: no third round of the same.
    assert batch_server.created == 2 and set(batch_server.sent.values()) == {2}
    lengths = sorted(len(b["messages"]) for b in batch_server.bodies.values())
    assert lengths == [4, 4, 4]  # the last ones sent were the repairs
    no_repair = judge(batch_server, tmp_path, "plain", invalid_retries=0, settings={"rounds": 5})
    assert {j.status for j in no_repair.judge(ITEMS)} == {JUDGE_ERROR}
    assert batch_server.created == 3  # --judge-retries 0: asked once, never again


def test_a_repair_round_merged_after_a_crash_keeps_its_mark(batch_server, tmp_path, api_key):
    batch_server.reply = repaired_only
    judge(batch_server, tmp_path, "batch").judge(ITEMS)  # no cache: read from the output
    folder, replies = tmp_path / "batch.judge.batch", tmp_path / "batch.judge.jsonl"
    state = json.loads((folder / "state.json").read_text())
    assert [part["round"] for part in state["parts"]] == [1, 2]
    # What a kill during the second round's merge leaves: its answers not all written.
    state["parts"][1]["merged"] = False
    (folder / "state.json").write_text(json.dumps(state))
    kept = replies.read_text().splitlines()[:1]
    replies.write_text("\n".join(kept) + "\n")
    made = judge(batch_server, tmp_path, "batch")
    assert [j.score for j in made.judge(ITEMS)] == [4, 5, 2]
    assert batch_server.created == 2  # merged from the recorded output, nothing sent
    assert {line["meta"]["repaired"] for line in replies_of(replies).values()} == {1}
    assert made.usage()["repaired"] == 3


def test_judge_results_that_cannot_be_downloaded_are_fetched_by_the_next_judging(
    batch_server, tmp_path, api_key
):
    batch_server.reply = scored_by_marker
    batch_server.download_faults = [404]
    made = judge(batch_server, tmp_path, "batch")
    judged = made.judge(ITEMS)
    assert {j.status for j in judged} == {JUDGE_ERROR}  # not judged yet, never a number
    assert "could not be downloaded" in made.stopped and "HTTP 404" in made.stopped
    assert all("not judged: the judge run stopped" in j.detail for j in judged)
    again = judge(batch_server, tmp_path, "batch")
    assert [j.score for j in again.judge(ITEMS)] == [4, 5, 2] and again.stopped is None
    assert batch_server.created == 1 and set(batch_server.billed.values()) == {1}
