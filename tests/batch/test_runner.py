"""``gavel generate --batch`` end to end against a real Files + Batches server on loopback:
answers as online ones, partial failures asked again, expiry, and kills at every step."""

from __future__ import annotations

import json
import sqlite3
import time
from collections import Counter
from pathlib import Path

import pytest

from gavel.examples import example_dir

DATA = example_dir("photos") / "gavel.jsonl"
SAMPLES = len(DATA.read_text().splitlines())
#: What the lines of a batch run and an online run must agree on.
SAME = ("id", "response", "finish_reason", "prompt_tokens", "completion_tokens", "sent_size",
        "box_format", "model", "error", "error_kind")  # fmt: skip


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def state_of(out: Path) -> dict:
    return json.loads((out.with_suffix(".batch") / "state.json").read_text())


def cached(cache: Path) -> int:
    with sqlite3.connect(cache) as db:
        return db.execute("SELECT COUNT(*) FROM answers").fetchone()[0]


def generate(server, tmp_path, out, *extra, batch=True):
    return ["generate", "--data", DATA, "--model", "openai:batch-model", "--preset", "gpt",
            "--base-url", server.url, "--api-key-env", "GAVEL_TEST_KEY", "--max-tokens", "64",
            "--cache", tmp_path / "cache.sqlite", "--no-progress", "--out", out,
            *(["--batch", "--batch-poll", "0.05"] if batch else []), *extra]  # fmt: skip


def test_a_batch_run_writes_what_an_online_run_writes(gavel_main, batch_server, tmp_path, api_key):
    done = gavel_main(*generate(batch_server, tmp_path, tmp_path / "batch.jsonl"))
    assert done.code == 0, done.err
    assert "created batch batch_1" in done.err
    assert batch_server.created == 1 and batch_server.online == 0
    assert set(batch_server.sent.values()) == {1} and len(batch_server.sent) == SAMPLES
    batch_lines = lines(tmp_path / "batch.jsonl")
    assert len(batch_lines) == SAMPLES
    assert cached(tmp_path / "cache.sqlite") == SAMPLES

    # The same command online, against the same server's chat route, without the cache.
    online = generate(batch_server, tmp_path, tmp_path / "online.jsonl", "--no-cache", batch=False)
    assert gavel_main(*online).code == 0
    assert batch_server.online == SAMPLES
    as_rows = lambda rows: sorted(tuple(json.dumps(r.get(k)) for k in SAME) for r in rows)  # noqa: E731
    assert as_rows(batch_lines) == as_rows(lines(tmp_path / "online.jsonl"))
    # The bodies: the batch's lines carry exactly what the online requests sent.
    canonical = lambda body: json.dumps(body, sort_keys=True)  # noqa: E731
    assert sorted(map(canonical, batch_server.bodies.values())) == sorted(
        map(canonical, batch_server.online_bodies)
    )
    # custom_id is the answer cache's key of the request.
    with sqlite3.connect(tmp_path / "cache.sqlite") as db:
        keys = {row[0] for row in db.execute("SELECT key FROM answers")}
    assert keys == set(batch_server.sent)
    # The key never reaches the batch folder.
    folder = tmp_path / "batch.batch"
    assert all(api_key not in p.read_text() for p in folder.iterdir())

    # Into a new file: every answer comes from the cache, nothing is created.
    again = gavel_main(*generate(batch_server, tmp_path, tmp_path / "again.jsonl"))
    assert again.code == 0, again.err
    assert batch_server.created == 1 and len(lines(tmp_path / "again.jsonl")) == SAMPLES
    assert f"({SAMPLES} from the cache)" in again.err


def test_failed_and_invalid_lines_are_asked_in_a_next_round(
    gavel_main, batch_server, batch_fake, tmp_path, api_key
):
    chosen: dict[str, str] = {}

    def plan(custom_id, body, before):
        if before:  # the second time, every request is answered
            return None
        kind = ["error", "status", "invalid", None, None, None][len(chosen) % 6]
        chosen[custom_id] = kind
        if kind == "error":
            return batch_fake.LineFault(error_code="server_error", message="try later")
        if kind == "status":
            return batch_fake.LineFault(status=500, message="overloaded")
        if kind == "invalid":  # a 200 whose body holds no completion the adapter can read
            return batch_fake.LineFault(body={"object": "chat.completion", "choices": []})
        return None

    batch_server.plan = plan
    done = gavel_main(*generate(batch_server, tmp_path, tmp_path / "p.jsonl"))
    assert done.code == 0, done.err
    failing = {key for key, kind in chosen.items() if kind is not None}
    assert batch_server.created == 2
    assert {key for key, n in batch_server.sent.items() if n == 2} == failing
    assert all(n == 1 for key, n in batch_server.sent.items() if key not in failing)
    written = lines(tmp_path / "p.jsonl")
    assert len(written) == SAMPLES and len({r["id"] for r in written}) == SAMPLES
    assert all(r.get("error") is None for r in written)
    assert f"0 answered, {len(failing)} to ask again" not in done.err
    assert f"{len(failing)} to ask again" in done.err
    assert f"{len(failing)} re-asked" in done.err
    assert cached(tmp_path / "cache.sqlite") == SAMPLES


def test_requests_failing_every_round_become_error_lines_and_a_rerun_asks_them(
    gavel_main, batch_server, batch_fake, tmp_path, api_key
):
    doomed: set[str] = set()

    def plan(custom_id, body, before):
        if before == 0 and len(doomed) < 2:
            doomed.add(custom_id)
        if custom_id in doomed:
            return batch_fake.LineFault(status=400, message="This prompt is refused.")
        return None

    batch_server.plan = plan
    done = gavel_main(
        *generate(batch_server, tmp_path, tmp_path / "p.jsonl", "--batch-rounds", "2")
    )
    assert done.code == 2, done.err  # samples failed: written, and said so
    written = lines(tmp_path / "p.jsonl")
    errors = [r for r in written if r.get("error")]
    assert len(written) == SAMPLES and len(errors) == len(doomed)
    assert all(r.get("error_kind") == "http_status" for r in errors)
    assert all("HTTP 400: This prompt is refused." in r.get("error") for r in errors)
    assert batch_server.created == 2 and all(batch_server.sent[k] == 2 for k in doomed)

    batch_server.plan = None  # fixed: the same command asks only the failed ones again
    again = gavel_main(*generate(batch_server, tmp_path, tmp_path / "p.jsonl"))
    assert again.code == 0, again.err
    written = lines(tmp_path / "p.jsonl")
    assert len(written) == SAMPLES and not any(r.get("error") for r in written)
    assert batch_server.created == 3 and all(batch_server.sent[k] == 3 for k in doomed)
    assert sum(batch_server.sent.values()) == SAMPLES + 2 * len(doomed)


def test_an_expired_batch_keeps_its_answers_and_the_rest_is_asked_online(
    gavel_main, batch_server, tmp_path, api_key
):
    batch_server.duration = 1.0
    batch_server.expire_after = 0.5  # about half the lines are done when it expires
    done = gavel_main(*generate(batch_server, tmp_path, tmp_path / "p.jsonl",
                                "--batch-fallback", "online"))  # fmt: skip
    assert done.code == 0, done.err
    assert "batch batch_1 expired" in done.err
    written = lines(tmp_path / "p.jsonl")
    assert len(written) == SAMPLES and len({r["id"] for r in written}) == SAMPLES
    assert batch_server.created == 1
    assert 0 < batch_server.online < SAMPLES
    assert f"{batch_server.online} asked online" in done.err
    assert cached(tmp_path / "cache.sqlite") == SAMPLES


def test_an_output_file_still_being_written_is_fetched_again_not_asked_again(
    gavel_main, batch_server, tmp_path, api_key
):
    batch_server.partial_downloads = 2  # half of its lines, twice, then all of them
    out = tmp_path / "p.jsonl"
    done = gavel_main(*generate(batch_server, tmp_path, out))
    assert done.code == 0, done.err
    assert "still being written" in done.err
    assert batch_server.created == 1 and batch_server.downloads == 3
    assert_billed_once(batch_server)
    assert len(lines(out)) == SAMPLES and not any(r.get("error") for r in lines(out))


def test_a_batch_that_fails_as_a_whole_is_asked_again(gavel_main, batch_server, tmp_path, api_key):
    batch_server.fail_input = "The input file is not valid JSONL."
    done = gavel_main(
        *generate(batch_server, tmp_path, tmp_path / "p.jsonl", "--batch-rounds", "1")
    )
    assert done.code == 2  # nothing answered: the run fails, as an online one would
    assert "no request was answered" in done.err
    written = lines(tmp_path / "p.jsonl")
    assert len(written) == SAMPLES
    assert all("The input file is not valid JSONL." in r.get("error") for r in written)
    batch_server.fail_input = None
    again = gavel_main(*generate(batch_server, tmp_path, tmp_path / "p.jsonl"))
    assert again.code == 0, again.err
    assert not any(r.get("error") for r in lines(tmp_path / "p.jsonl"))
    assert batch_server.created == 2


def assert_done_once(server, out: Path, cache: Path) -> None:
    written = lines(out)
    assert len(written) == SAMPLES, written
    assert Counter(r["id"] for r in written).most_common(1)[0][1] == 1
    assert not any(r.get("error") for r in written)
    assert server.created == 1 and set(server.sent.values()) == {1}
    assert cached(cache) == SAMPLES


def test_killed_while_polling_the_same_command_collects_the_same_batch(
    gavel_main, start, batch_server, tmp_path, api_key
):
    batch_server.hold_at = 0  # the batch waits until the run is killed, however busy the machine
    out = tmp_path / "p.jsonl"
    command = generate(batch_server, tmp_path, out)
    start(*command).kill_when(lambda: batch_server.polls >= 3)
    recorded = state_of(out)["parts"][0]
    assert recorded["batch_id"] == "batch_1" and recorded["count"] == SAMPLES
    assert recorded["file_id"] and not recorded.get("finished")
    batch_server.hold_at = None
    done = gavel_main(*command)
    assert done.code == 0, done.err
    assert "created batch" not in done.err
    assert_done_once(batch_server, out, tmp_path / "cache.sqlite")


def test_killed_after_the_batch_was_created_but_before_its_id_came_back(
    gavel_main, start, batch_server, tmp_path, api_key
):
    batch_server.create_delay = 30.0
    out = tmp_path / "p.jsonl"
    command = generate(batch_server, tmp_path, out)
    start(*command).kill_when(lambda: batch_server.created == 1)
    recorded = state_of(out)["parts"][0]
    assert recorded["creating"] and "batch_id" not in recorded
    batch_server.create_delay = 0.0
    done = gavel_main(*command)
    assert done.code == 0, done.err
    assert "found batch batch_1 created by an earlier run" in done.err
    assert_done_once(batch_server, out, tmp_path / "cache.sqlite")


def test_killed_after_the_upload_but_before_its_id_came_back(
    gavel_main, start, batch_server, tmp_path, api_key
):
    batch_server.upload_delay = 30.0
    out = tmp_path / "p.jsonl"
    command = generate(batch_server, tmp_path, out)
    start(*command).kill_when(lambda: batch_server.uploads == 1)
    assert "file_id" not in state_of(out)["parts"][0]
    batch_server.upload_delay = 0.0
    done = gavel_main(*command)
    assert done.code == 0, done.err
    assert batch_server.uploads == 1  # the file already there was taken, not sent again
    assert_done_once(batch_server, out, tmp_path / "cache.sqlite")


def test_an_upload_that_failed_is_made_by_the_next_run(
    gavel, gavel_main, batch_server, tmp_path, api_key
):
    batch_server.refuse_uploads = True
    out = tmp_path / "p.jsonl"
    command = generate(batch_server, tmp_path, out)
    failed = gavel(*command)  # a process: no traceback on its real stderr
    assert failed.returncode != 0 and "uploading" in failed.stderr
    assert "Traceback" not in failed.stderr
    assert not out.exists() or not lines(out)
    batch_server.refuse_uploads = False
    done = gavel_main(*command)
    assert done.code == 0, done.err
    assert_done_once(batch_server, out, tmp_path / "cache.sqlite")


def test_killed_while_merging_the_rerun_writes_each_line_once(
    gavel_main, batch_server, tmp_path, api_key
):
    out = tmp_path / "p.jsonl"
    command = generate(batch_server, tmp_path, out, "--no-cache")  # merged from the output file
    assert gavel_main(*command).code == 0
    # What a kill in the middle of the merge leaves: the batch downloaded but not marked
    # merged, some lines written and the last one cut short.
    state_file = out.with_suffix(".batch") / "state.json"
    state = json.loads(state_file.read_text())
    state["parts"][0]["merged"] = False
    state_file.write_text(json.dumps(state))
    text = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(b"".join(text[:5]) + text[5][:20])
    done = gavel_main(*command)
    assert done.code == 0, done.err
    assert f"{SAMPLES - 5} answered, 5 already there" in done.err
    written = lines(out)
    assert len(written) == SAMPLES and len({r["id"] for r in written}) == SAMPLES
    assert batch_server.created == 1 and set(batch_server.sent.values()) == {1}
    assert batch_server.online == 0


def test_status_and_cancel_while_a_run_waits(gavel_main, start, batch_server, tmp_path, api_key):
    batch_server.duration = 1.0
    batch_server.hold_at = SAMPLES // 2  # some answered; the batch waits for the cancel
    out = tmp_path / "p.jsonl"
    command = generate(batch_server, tmp_path, out)
    running = start(*command)
    try:
        import time

        deadline = time.monotonic() + 60
        done_so_far = lambda: (  # noqa: E731
            batch_server.batches["batch_1"]["request_counts"]["completed"]
            if "batch_1" in batch_server.batches
            else 0
        )
        while done_so_far() < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        # No manifest yet: the state file alone does not say where the key may go.
        refused = gavel_main("batch", "status", out)
        assert refused.code == 2 and "a state file alone never chooses" in refused.err
        server = ["--base-url", batch_server.url, "--api-key-env", "GAVEL_TEST_KEY"]
        status = gavel_main("batch", "status", out, *server)
        assert status.code == 0, status.err
        assert "batch batch_1 in_progress" in status.out and f"of {SAMPLES}" in status.out
        cancel = gavel_main("batch", "cancel", tmp_path / "p.jsonl", *server)
        assert cancel.code == 0, cancel.err
        assert "batch batch_1: cancelling" in cancel.out
        _, err = running.process.communicate(timeout=60)
    finally:
        if running.process.poll() is None:
            running.process.kill()
    # The waiting run stops: the answers given are kept, nothing is sent as a new round.
    assert running.process.returncode == 2, err
    assert "batch batch_1 was cancelled while this run waited for it" in err
    assert "Traceback" not in err
    first = state_of(out)["parts"][0]
    assert first["status"] == "cancelled" and batch_server.created == 1
    written = lines(out)
    assert 0 < len(written) == first["answered"] < SAMPLES
    assert not any(r.get("error") for r in written)
    assert sum(batch_server.billed.values()) == len(written)
    status = gavel_main("batch", "status", tmp_path)  # the folder: every batch recorded in it
    assert "batch batch_1 cancelled" in status.out

    # The same command again asks the rest in a new batch; every request billed once.
    batch_server.duration, batch_server.hold_at = 0.2, None
    again = gavel_main(*command)
    assert again.code == 0, again.err
    assert batch_server.created == 2 and len(lines(out)) == SAMPLES
    assert set(batch_server.billed.values()) == {1} and len(batch_server.billed) == SAMPLES


def test_a_batch_whose_requests_were_answered_online_is_not_waited_for(
    gavel_main, start, batch_server, tmp_path, api_key
):
    batch_server.duration = 60.0
    out = tmp_path / "p.jsonl"
    start(*generate(batch_server, tmp_path, out)).kill_when(lambda: batch_server.polls >= 1)
    online = gavel_main(*generate(batch_server, tmp_path, out, batch=False))  # the user gave up
    assert online.code == 0, online.err
    done = gavel_main(*generate(batch_server, tmp_path, out))
    assert done.code == 0, done.err
    assert "batch batch_1 is no longer needed" in done.err
    assert batch_server.created == 1 and len(lines(out)) == SAMPLES
    # The run's manifest names the server; the key's variable is said again.
    cancel = gavel_main("batch", "cancel", out, "--api-key-env", "GAVEL_TEST_KEY")
    assert cancel.code == 0 and "batch batch_1: cancelling" in cancel.out


def assert_billed_once(server) -> None:
    """The server's own bill: every request answered and paid for exactly once."""
    assert len(server.billed) == SAMPLES and set(server.billed.values()) == {1}


@pytest.mark.parametrize("fault", ["drop", "500", "late"])
def test_a_create_whose_reply_is_lost_is_found_not_made_again(
    gavel_main, batch_server, tmp_path, api_key, fault
):
    # The batch is made, its reply lost: the connection closed, a 500, or later than --timeout.
    if fault == "late":
        batch_server.create_delay = 3.0
    else:
        batch_server.create_faults = [fault] * 3
    batch_server.upload_faults = ["drop"]  # the upload's reply lost too
    out = tmp_path / "p.jsonl"
    done = gavel_main(*generate(batch_server, tmp_path, out, "--timeout", "1"))
    assert done.code == 0, done.err
    assert "found batch batch_1 created by an earlier run or attempt" in done.err
    assert batch_server.uploads == 1 and batch_server.created == 1
    assert_billed_once(batch_server)
    assert_done_once(batch_server, out, tmp_path / "cache.sqlite")
    # The batch carries the run's tag: the part, its round and its output.
    metadata = batch_server.batches["batch_1"]["metadata"]
    assert metadata["gavel_part"] == "r1-p1" and metadata["gavel_round"] == "1"
    assert metadata["gavel_output"] == "p.jsonl" and len(metadata["gavel_run"]) == 16


def test_a_lost_state_file_finds_the_file_and_batch_on_the_server(
    gavel_main, start, batch_server, tmp_path, api_key
):
    batch_server.hold_at = 0  # the batch waits until the run is killed
    batch_server.max_page = 1  # every listing is read page after page
    out = tmp_path / "p.jsonl"
    command = generate(batch_server, tmp_path, out)
    other = generate(batch_server, tmp_path, tmp_path / "other.jsonl", "--no-cache")
    start(*command).kill_when(lambda: batch_server.polls >= 1)
    batch_server.hold_at = None
    assert gavel_main(*other).code == 0  # another run's file and batch, listed before ours
    (out.with_suffix(".batch") / "state.json").unlink()
    listed = batch_server.listed
    done = gavel_main(*command)
    assert done.code == 0, done.err
    assert "found batch batch_1 created by an earlier run" in done.err
    assert batch_server.listed - listed >= 2  # more than one page was read
    # One upload (the other run's requests are the same bytes: it took the file already
    # there); two batches: ours, found again, and the other run's, never taken for ours.
    assert batch_server.uploads == 1 and batch_server.created == 2
    assert batch_server.billed == Counter({key: 2 for key in batch_server.billed})
    written = lines(out)
    assert len(written) == SAMPLES and not any(r.get("error") for r in written)
    assert state_of(out)["parts"][0]["batch_id"] == "batch_1"


def first_sent(count: int, fault):
    """``(chosen, plan)``: the plan gives ``fault`` to the first ``count`` requests the first
    time they are sent (``chosen`` lists them), and answers every other line."""
    chosen: list[str] = []

    def plan(custom_id, body, before):
        if not before and len(chosen) < count:
            chosen.append(custom_id)
            return fault
        return None

    return chosen, plan


def test_a_damaged_output_line_costs_its_sample_only(
    gavel_main, batch_server, batch_fake, tmp_path, api_key
):
    damaged, batch_server.plan = first_sent(2, batch_fake.LineFault(cut=True))
    out = tmp_path / "p.jsonl"
    done = gavel_main(*generate(batch_server, tmp_path, out))
    assert done.code == 0, done.err
    assert "r1-p1.output.jsonl: 2 line(s) are not batch results (line 1, 2)" in done.err
    assert f"{SAMPLES - 2} answered, 2 to ask again" in done.err
    written = lines(out)
    assert len(written) == SAMPLES and not any(r.get("error") for r in written)
    assert batch_server.created == 2
    assert {key for key, n in batch_server.sent.items() if n == 2} == set(damaged)


def test_a_damaged_line_in_the_last_round_is_its_samples_error_line(
    gavel_main, batch_server, batch_fake, tmp_path, api_key
):
    _, batch_server.plan = first_sent(1, batch_fake.LineFault(cut=True))
    out = tmp_path / "p.jsonl"
    done = gavel_main(*generate(batch_server, tmp_path, out, "--batch-rounds", "1"))
    assert done.code == 2, done.err  # a sample failed: its error line stands
    written = lines(out)
    errors = [r["error"] for r in written if r.get("error")]
    assert len(written) == SAMPLES and len(errors) == 1
    assert "r1-p1.output.jsonl:1: not a batch output line" in errors[0]


def dry_run_cost(gavel_main, command) -> float:
    done = gavel_main(*command, "--dry-run", "--dry-run-format", "json")
    assert done.code == 0, done.err
    rows = json.loads(done.out)["sections"][0]["rows"]
    return next(row["value"] for row in rows if row["name"] == "cost (USD)")


def test_the_budget_holds_in_batch_mode_and_a_larger_one_continues(
    gavel, gavel_main, batch_server, tmp_path, api_key
):
    out = tmp_path / "p.jsonl"
    priced = ["--price", "1000,1000", "--batch-rounds", "20", "--no-cache"]  # $0.001 a token
    command = generate(batch_server, tmp_path, out, *priced)
    bound = dry_run_cost(gavel_main, command)  # every request's prompt and --max-tokens of reply
    budget = 2.5 * bound / SAMPLES
    stopped = gavel(*command, "--max-cost", f"{budget:.4f}")  # a process: no traceback
    assert stopped.returncode == 2, stopped.stderr
    assert "Traceback" not in stopped.stderr
    assert "stopped: the model batch-model spent $" in stopped.stderr
    assert "remains, and the next request may cost up to $" in stopped.stderr
    assert "rerun with a higher --max-cost to continue" in stopped.stderr
    billed = (batch_server.billed_tokens["prompt_tokens"]
              + batch_server.billed_tokens["completion_tokens"]) / 1000  # fmt: skip
    assert 0 < billed <= budget  # the server's bill, never past the budget
    written = lines(out)
    assert 0 < len(written) < SAMPLES and not any(r.get("error") for r in written)
    assert len(batch_server.billed) == len(written)
    online = gavel_main(*command, "--max-cost", "1", "--batch-fallback", "online")
    assert online.code == 2 and "not supported" in online.err
    # A larger budget goes on from there: every request billed once in all.
    done = gavel_main(*command, "--max-cost", f"{2 * bound:.4f}")
    assert done.code == 0, done.err
    assert len(lines(out)) == SAMPLES
    assert_billed_once(batch_server)


def test_replies_without_choices_are_counted_in_the_summary_and_the_ledger(
    gavel_main, batch_server, batch_fake, tmp_path, api_key
):
    from gavel.cost.ledger import read_usage

    empty = {"object": "chat.completion", "choices": [],
             "usage": {"prompt_tokens": 500, "completion_tokens": 40}}  # fmt: skip
    _, batch_server.plan = first_sent(3, batch_fake.LineFault(body=empty))
    out = tmp_path / "p.jsonl"
    done = gavel_main(*generate(batch_server, tmp_path, out))
    assert done.code == 0, done.err
    assert batch_server.created == 2 and len(lines(out)) == SAMPLES
    billed = batch_server.billed_tokens
    assert f"tokens {billed['prompt_tokens']:,} in / {billed['completion_tokens']:,} out" in (
        done.err
    )
    ledger = read_usage(out)
    assert (ledger.prompt_tokens, ledger.completion_tokens) == (
        billed["prompt_tokens"],
        billed["completion_tokens"],
    )


def test_a_batch_dry_run_quotes_batch_prices(gavel_main, tmp_path):
    base = ["generate", "--data", DATA, "--model", "openai:gpt-4o", "--max-tokens", "64",
            "--base-url", "http://127.0.0.1:9/v1", "--out", tmp_path / "p.jsonl"]  # fmt: skip
    online, batch = dry_run_cost(gavel_main, base), dry_run_cost(gavel_main, [*base, "--batch"])
    assert batch == pytest.approx(online / 2, rel=1e-3)
    given = dry_run_cost(gavel_main, [*base, "--batch", "--price", "2.5,10"])  # as given
    assert given == pytest.approx(online, rel=1e-3)


def test_batch_commands_send_the_key_only_where_this_call_says(
    gavel, gavel_main, batch_server, tmp_path, api_key, monkeypatch
):
    monkeypatch.setenv("HF_TOKEN", "hf_secret_of_the_user")
    folder = tmp_path / "p.batch"
    folder.mkdir()
    state = {"kind": "generate", "model": "m", "base_url": batch_server.url,
             "api_key_env": "HF_TOKEN", "output": "p.jsonl",
             "parts": [{"name": "r1-p1", "round": 1, "count": 1, "sha256": "ab",
                        "file_id": "file-1", "batch_id": "batch_1"}]}  # fmt: skip
    (folder / "state.json").write_text(json.dumps(state))
    for command in ("status", "cancel"):
        done = gavel("batch", command, tmp_path / "p.jsonl")  # a process: no traceback
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert f"{folder / 'state.json'}: its base_url" in done.stderr
    # The run's manifest agrees on the server: the variable named by the state file alone is
    # still refused.
    manifest = {"adapter": {"base_urls": [batch_server.url]}}
    (tmp_path / "p.manifest.json").write_text(json.dumps(manifest))
    done = gavel_main("batch", "status", tmp_path / "p.jsonl")
    assert done.code == 2 and "its api_key_env 'HF_TOKEN' is not the run's" in done.err
    assert batch_server.authorizations == []  # nothing was sent anywhere
    # Named on this call's command line, it is used.
    done = gavel_main("batch", "status", tmp_path / "p.jsonl", "--api-key-env", "GAVEL_TEST_KEY")
    assert batch_server.authorizations == [f"Bearer {api_key}"]


def test_a_part_name_that_leaves_the_batch_folder_is_refused(
    gavel, gavel_main, batch_server, tmp_path, api_key
):
    out = tmp_path / "run" / "p.jsonl"
    command = generate(batch_server, tmp_path, out, "--no-cache")
    assert gavel_main(*command).code == 0
    state_file = out.with_suffix(".batch") / "state.json"
    state = json.loads(state_file.read_text())
    state["parts"][0] |= {"name": "../../escaped", "merged": False, "downloaded": False}
    state_file.write_text(json.dumps(state))
    before = sorted(tmp_path.rglob("*"))
    for again in (command, ["batch", "status", out]):
        done = gavel(*again)  # a process: no traceback on its real stderr
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert f"{state_file}: parts[0].name: '../../escaped' is not a plain file name" in (
            done.stderr
        )
    assert sorted(tmp_path.rglob("*")) == before  # nothing written, inside or out


def test_a_state_lost_in_a_later_round_finds_that_rounds_batch(
    gavel_main, start, batch_server, batch_fake, tmp_path, api_key
):
    failing, first = first_sent(3, batch_fake.LineFault(status=500, message="overloaded"))

    def plan(custom_id, body, before):
        if before:  # the second round waits until the run is killed
            batch_server.hold_at = 0
        return first(custom_id, body, before)

    batch_server.plan = plan
    out = tmp_path / "p.jsonl"
    command = generate(batch_server, tmp_path, out)
    start(*command).kill_when(lambda: "batch_2" in batch_server.batches)
    (out.with_suffix(".batch") / "state.json").unlink()
    batch_server.hold_at = None
    done = gavel_main(*command)
    assert done.code == 0, done.err
    assert "found batch batch_2 created by an earlier run" in done.err
    assert batch_server.created == 2 and set(batch_server.sent[k] for k in failing) == {2}
    written = lines(out)
    assert len(written) == SAMPLES and not any(r.get("error") for r in written)
    assert_billed_once(batch_server)


def test_a_lost_create_reply_on_a_server_that_cannot_list_batches_stops_the_run(
    gavel, batch_server, tmp_path, api_key
):
    batch_server.list_status = {"/batches": 404}
    batch_server.create_faults = ["drop"]
    done = gavel(*generate(batch_server, tmp_path, tmp_path / "p.jsonl"))  # a process
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "does not list its batches" in done.stderr and "may have made it" in done.stderr
    assert batch_server.created == 1  # never a second batch blindly


def test_an_output_file_that_cannot_be_downloaded_stops_the_run_and_a_rerun_fetches_it(
    gavel, gavel_main, batch_server, batch_fake, tmp_path, api_key
):
    out = tmp_path / "p.jsonl"
    _, batch_server.plan = first_sent(2, batch_fake.LineFault(status=400, message="no"))
    first = gavel_main(*generate(batch_server, tmp_path, out, "--batch-rounds", "1"))
    assert first.code == 2, first.err  # two error lines, asked again by the next run
    before = {r["id"]: r for r in lines(out)}
    assert sum(bool(r.get("error")) for r in before.values()) == 2
    batch_server.plan = None
    batch_server.download_faults = [404]  # the output of the next batch cannot be fetched
    command = generate(batch_server, tmp_path, out)
    stopped = gavel(*command)  # a process: its real stderr
    assert stopped.returncode == 2, stopped.stderr
    assert "Traceback" not in stopped.stderr
    message = stopped.stderr.strip().splitlines()[-1]
    assert "HTTP 404" in message and "rerun the same command" in message
    part = state_of(out)["parts"][-1]
    assert part["batch_id"] == "batch_2" and part["finished"] and not part.get("downloaded")
    # Nothing lost: the earlier run's error lines are still there, each sample once.
    assert {r["id"]: r for r in lines(out)} == before
    done = gavel_main(*command)
    assert done.code == 0, done.err
    assert "created batch" not in done.err and batch_server.created == 2
    written = lines(out)
    assert len(written) == SAMPLES and not any(r.get("error") for r in written)
    assert len(batch_server.billed) == SAMPLES and set(batch_server.billed.values()) == {1}


def found_not_made_again(gavel_main, batch_server, command, out: Path, cache: Path) -> None:
    """The same command again: the batch a killed run made is found, none created."""
    done = gavel_main(*command)
    assert done.code == 0, done.err
    assert "found batch batch_1 created by an earlier run" in done.err
    assert batch_server.created == 1
    assert_done_once(batch_server, out, cache)


def killed_while_creating(start, batch_server, command) -> None:
    """Run ``command`` until the server has made its batch, and kill it before the reply
    comes back: the state says ``creating``, the server has the batch."""
    batch_server.create_delay = 30.0
    start(*command).kill_when(lambda: batch_server.created == 1)
    batch_server.create_delay = 0.0


def test_a_lost_batch_is_found_behind_more_than_a_thousand_newer_ones(
    gavel_main, start, batch_server, tmp_path, api_key
):
    out = tmp_path / "p.jsonl"
    command = generate(batch_server, tmp_path, out)
    killed_while_creating(start, batch_server, command)
    assert state_of(out)["parts"][0]["creating"]
    # Other runs of the account create 1,200 batches meanwhile, listed before ours.
    batch_server.add_batches(600, metadata={"gavel_run": "0" * 16, "gavel_sha256": "1" * 16})
    batch_server.add_batches(600)  # made by other tools: no metadata at all
    found_not_made_again(gavel_main, batch_server, command, out, tmp_path / "cache.sqlite")


def test_a_server_listing_oldest_first_shows_the_lost_batch_after_a_long_history(
    gavel_main, start, batch_server, tmp_path, api_key
):
    batch_server.oldest_first = True
    batch_server.add_batches(1200, age=86_400.0)  # a long history before this run
    out = tmp_path / "p.jsonl"
    command = generate(batch_server, tmp_path, out)
    killed_while_creating(start, batch_server, command)
    found_not_made_again(gavel_main, batch_server, command, out, tmp_path / "cache.sqlite")


def test_a_known_run_reads_the_listing_back_to_its_own_start_only(
    gavel_main, start, batch_server, tmp_path, api_key
):
    batch_server.add_batches(3000, age=3 * 86_400.0)  # batches of three days ago
    out = tmp_path / "p.jsonl"
    command = generate(batch_server, tmp_path, out)
    listed = batch_server.listed
    killed_while_creating(start, batch_server, command)
    assert batch_server.listed - listed >= 30  # a new run reads the whole history once
    since = state_of(out)["since"]
    assert abs(since - time.time()) < 120
    listed = batch_server.listed
    found_not_made_again(gavel_main, batch_server, command, out, tmp_path / "cache.sqlite")
    # Its own batches, then the first page older than the run: not the three days before.
    assert batch_server.listed - listed <= 2


def test_a_search_that_reaches_its_cap_never_creates_a_batch_that_may_exist(
    gavel_main, start, batch_server, tmp_path, api_key, monkeypatch
):
    out = tmp_path / "p.jsonl"
    command = generate(batch_server, tmp_path, out)
    killed_while_creating(start, batch_server, command)
    monkeypatch.setenv("GAVEL_BATCH_SEARCH_LIMIT", "250")
    batch_server.add_batches(400)  # more batches since the attempt than the search reads
    stopped = gavel_main(*command)
    assert stopped.code == 2, stopped.err
    assert "Traceback" not in stopped.err
    assert "read the newest 250 batches" in stopped.err
    assert "not created again" in stopped.err and "gavel_sha256=" in stopped.err
    assert batch_server.created == 1  # never a second batch of the same requests
    assert state_of(out)["parts"][0]["creating"]
    monkeypatch.setenv("GAVEL_BATCH_SEARCH_LIMIT", "1_000")  # as the message says: read more
    found_not_made_again(gavel_main, batch_server, command, out, tmp_path / "cache.sqlite")
    monkeypatch.setenv("GAVEL_BATCH_SEARCH_LIMIT", "many")
    refused = gavel_main(*generate(batch_server, tmp_path, tmp_path / "o.jsonl", "--no-cache"))
    assert refused.code == 2 and "GAVEL_BATCH_SEARCH_LIMIT='many': expected a whole" in (
        refused.err
    )


def test_a_new_run_in_a_long_history_is_warned_and_goes_on(
    gavel_main, batch_server, tmp_path, api_key, monkeypatch
):
    monkeypatch.setenv("GAVEL_BATCH_SEARCH_LIMIT", "250")
    batch_server.add_batches(400, age=3600.0)
    out = tmp_path / "p.jsonl"
    done = gavel_main(*generate(batch_server, tmp_path, out))
    assert done.code == 0, done.err
    assert "read the newest 250 batches" in done.err and "older ones were not" in done.err
    assert batch_server.created == 1
    assert_billed_once(batch_server)
