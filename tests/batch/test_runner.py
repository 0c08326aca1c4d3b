"""``gavel generate --batch`` end to end against a real Files + Batches server on loopback:
answers as online ones, partial failures asked again, expiry, and kills at every step."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path

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


def test_a_batch_run_writes_what_an_online_run_writes(gavel, batch_server, tmp_path, api_key):
    done = gavel(*generate(batch_server, tmp_path, tmp_path / "batch.jsonl"))
    assert done.returncode == 0, done.stderr
    assert "created batch batch_1" in done.stderr
    assert batch_server.created == 1 and batch_server.online == 0
    assert set(batch_server.sent.values()) == {1} and len(batch_server.sent) == SAMPLES
    batch_lines = lines(tmp_path / "batch.jsonl")
    assert len(batch_lines) == SAMPLES
    assert cached(tmp_path / "cache.sqlite") == SAMPLES

    # The same command online, against the same server's chat route, without the cache.
    online = generate(batch_server, tmp_path, tmp_path / "online.jsonl", "--no-cache", batch=False)
    assert gavel(*online).returncode == 0
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
    again = gavel(*generate(batch_server, tmp_path, tmp_path / "again.jsonl"))
    assert again.returncode == 0, again.stderr
    assert batch_server.created == 1 and len(lines(tmp_path / "again.jsonl")) == SAMPLES
    assert f"({SAMPLES} from the cache)" in again.stderr


def test_failed_and_invalid_lines_are_asked_in_a_next_round(
    gavel, batch_server, batch_fake, tmp_path, api_key
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
    done = gavel(*generate(batch_server, tmp_path, tmp_path / "p.jsonl"))
    assert done.returncode == 0, done.stderr
    failing = {key for key, kind in chosen.items() if kind is not None}
    assert batch_server.created == 2
    assert {key for key, n in batch_server.sent.items() if n == 2} == failing
    assert all(n == 1 for key, n in batch_server.sent.items() if key not in failing)
    written = lines(tmp_path / "p.jsonl")
    assert len(written) == SAMPLES and len({r["id"] for r in written}) == SAMPLES
    assert all(r.get("error") is None for r in written)
    assert f"0 answered, {len(failing)} to ask again" not in done.stderr
    assert f"{len(failing)} to ask again" in done.stderr
    assert f"{len(failing)} re-asked" in done.stderr
    assert cached(tmp_path / "cache.sqlite") == SAMPLES


def test_requests_failing_every_round_become_error_lines_and_a_rerun_asks_them(
    gavel, batch_server, batch_fake, tmp_path, api_key
):
    doomed: set[str] = set()

    def plan(custom_id, body, before):
        if before == 0 and len(doomed) < 2:
            doomed.add(custom_id)
        if custom_id in doomed:
            return batch_fake.LineFault(status=400, message="This prompt is refused.")
        return None

    batch_server.plan = plan
    done = gavel(*generate(batch_server, tmp_path, tmp_path / "p.jsonl", "--batch-rounds", "2"))
    assert done.returncode == 2, done.stderr  # samples failed: written, and said so
    written = lines(tmp_path / "p.jsonl")
    errors = [r for r in written if r.get("error")]
    assert len(written) == SAMPLES and len(errors) == len(doomed)
    assert all(r.get("error_kind") == "http_status" for r in errors)
    assert all("HTTP 400: This prompt is refused." in r.get("error") for r in errors)
    assert batch_server.created == 2 and all(batch_server.sent[k] == 2 for k in doomed)

    batch_server.plan = None  # fixed: the same command asks only the failed ones again
    again = gavel(*generate(batch_server, tmp_path, tmp_path / "p.jsonl"))
    assert again.returncode == 0, again.stderr
    written = lines(tmp_path / "p.jsonl")
    assert len(written) == SAMPLES and not any(r.get("error") for r in written)
    assert batch_server.created == 3 and all(batch_server.sent[k] == 3 for k in doomed)
    assert sum(batch_server.sent.values()) == SAMPLES + 2 * len(doomed)


def test_an_expired_batch_keeps_its_answers_and_the_rest_is_asked_online(
    gavel, batch_server, tmp_path, api_key
):
    batch_server.duration = 1.0
    batch_server.expire_after = 0.5  # about half the lines are done when it expires
    done = gavel(*generate(batch_server, tmp_path, tmp_path / "p.jsonl",
                           "--batch-fallback", "online"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "batch batch_1 expired" in done.stderr
    written = lines(tmp_path / "p.jsonl")
    assert len(written) == SAMPLES and len({r["id"] for r in written}) == SAMPLES
    assert batch_server.created == 1
    assert 0 < batch_server.online < SAMPLES
    assert f"{batch_server.online} asked online" in done.stderr
    assert cached(tmp_path / "cache.sqlite") == SAMPLES


def test_a_batch_that_fails_as_a_whole_is_asked_again(gavel, batch_server, tmp_path, api_key):
    batch_server.fail_input = "The input file is not valid JSONL."
    done = gavel(*generate(batch_server, tmp_path, tmp_path / "p.jsonl", "--batch-rounds", "1"))
    assert done.returncode == 2  # nothing answered: the run fails, as an online one would
    assert "no request was answered" in done.stderr
    written = lines(tmp_path / "p.jsonl")
    assert len(written) == SAMPLES
    assert all("The input file is not valid JSONL." in r.get("error") for r in written)
    batch_server.fail_input = None
    again = gavel(*generate(batch_server, tmp_path, tmp_path / "p.jsonl"))
    assert again.returncode == 0, again.stderr
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
    gavel, start, batch_server, tmp_path, api_key
):
    batch_server.duration = 5.0  # long enough to be killed mid-way, even on a busy machine
    out = tmp_path / "p.jsonl"
    command = generate(batch_server, tmp_path, out)
    start(*command).kill_when(lambda: batch_server.polls >= 3)
    recorded = state_of(out)["parts"][0]
    assert recorded["batch_id"] == "batch_1" and recorded["count"] == SAMPLES
    assert recorded["file_id"] and not recorded.get("finished")
    done = gavel(*command)
    assert done.returncode == 0, done.stderr
    assert "created batch" not in done.stderr
    assert_done_once(batch_server, out, tmp_path / "cache.sqlite")


def test_killed_after_the_batch_was_created_but_before_its_id_came_back(
    gavel, start, batch_server, tmp_path, api_key
):
    batch_server.create_delay = 30.0
    out = tmp_path / "p.jsonl"
    command = generate(batch_server, tmp_path, out)
    start(*command).kill_when(lambda: batch_server.created == 1)
    recorded = state_of(out)["parts"][0]
    assert recorded["creating"] and "batch_id" not in recorded
    batch_server.create_delay = 0.0
    done = gavel(*command)
    assert done.returncode == 0, done.stderr
    assert "found batch batch_1 created by an earlier run" in done.stderr
    assert_done_once(batch_server, out, tmp_path / "cache.sqlite")


def test_killed_after_the_upload_but_before_its_id_came_back(
    gavel, start, batch_server, tmp_path, api_key
):
    batch_server.upload_delay = 30.0
    out = tmp_path / "p.jsonl"
    command = generate(batch_server, tmp_path, out)
    start(*command).kill_when(lambda: batch_server.uploads == 1)
    assert "file_id" not in state_of(out)["parts"][0]
    batch_server.upload_delay = 0.0
    done = gavel(*command)
    assert done.returncode == 0, done.stderr
    assert batch_server.uploads == 1  # the file already there was taken, not sent again
    assert_done_once(batch_server, out, tmp_path / "cache.sqlite")


def test_an_upload_that_failed_is_made_by_the_next_run(gavel, batch_server, tmp_path, api_key):
    batch_server.refuse_uploads = True
    out = tmp_path / "p.jsonl"
    command = generate(batch_server, tmp_path, out)
    failed = gavel(*command)
    assert failed.returncode != 0 and "uploading" in failed.stderr
    assert "Traceback" not in failed.stderr
    assert not out.exists() or not lines(out)
    batch_server.refuse_uploads = False
    done = gavel(*command)
    assert done.returncode == 0, done.stderr
    assert_done_once(batch_server, out, tmp_path / "cache.sqlite")


def test_killed_while_merging_the_rerun_writes_each_line_once(
    gavel, batch_server, tmp_path, api_key
):
    out = tmp_path / "p.jsonl"
    command = generate(batch_server, tmp_path, out, "--no-cache")  # merged from the output file
    assert gavel(*command).returncode == 0
    # What a kill in the middle of the merge leaves: the batch downloaded but not marked
    # merged, some lines written and the last one cut short.
    state_file = out.with_suffix(".batch") / "state.json"
    state = json.loads(state_file.read_text())
    state["parts"][0]["merged"] = False
    state_file.write_text(json.dumps(state))
    text = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(b"".join(text[:5]) + text[5][:20])
    done = gavel(*command)
    assert done.returncode == 0, done.stderr
    assert f"{SAMPLES - 5} answered, 5 already there" in done.stderr
    written = lines(out)
    assert len(written) == SAMPLES and len({r["id"] for r in written}) == SAMPLES
    assert batch_server.created == 1 and set(batch_server.sent.values()) == {1}
    assert batch_server.online == 0


def test_status_and_cancel_while_a_run_waits(gavel, start, batch_server, tmp_path, api_key):
    batch_server.duration = 30.0
    out = tmp_path / "p.jsonl"
    running = start(*generate(batch_server, tmp_path, out))
    try:
        import time

        deadline = time.monotonic() + 60
        while batch_server.polls < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        status = gavel("batch", "status", out)
        assert status.returncode == 0, status.stderr
        assert "batch batch_1 in_progress" in status.stdout and f"of {SAMPLES}" in status.stdout
        batch_server.duration = 0.2  # the next round is quick
        cancel = gavel("batch", "cancel", tmp_path / "p.jsonl")
        assert cancel.returncode == 0, cancel.stderr
        assert "batch batch_1: cancelling" in cancel.stdout
        _, err = running.process.communicate(timeout=60)
    finally:
        if running.process.poll() is None:
            running.process.kill()
    assert running.process.returncode == 0, err
    assert "batch batch_1 cancelled" in err
    written = lines(out)
    assert len(written) == SAMPLES and not any(r.get("error") for r in written)
    first = state_of(out)["parts"][0]
    assert first["status"] == "cancelled" and batch_server.created == 2
    # Only what the cancelled batch had not answered was asked again.
    assert sum(batch_server.sent.values()) == 2 * SAMPLES - first.get("answered", 0)
    status = gavel("batch", "status", tmp_path)  # the folder: every batch recorded in it
    assert "batch batch_1 cancelled" in status.stdout and "batch batch_2 completed" in status.stdout


def test_a_batch_whose_requests_were_answered_online_is_not_waited_for(
    gavel, start, batch_server, tmp_path, api_key
):
    batch_server.duration = 60.0
    out = tmp_path / "p.jsonl"
    start(*generate(batch_server, tmp_path, out)).kill_when(lambda: batch_server.polls >= 1)
    online = gavel(*generate(batch_server, tmp_path, out, batch=False))  # the user gave up
    assert online.returncode == 0, online.stderr
    done = gavel(*generate(batch_server, tmp_path, out))
    assert done.returncode == 0, done.stderr
    assert "batch batch_1 is no longer needed" in done.stderr
    assert batch_server.created == 1 and len(lines(out)) == SAMPLES
    cancel = gavel("batch", "cancel", out)
    assert cancel.returncode == 0 and "batch batch_1: cancelling" in cancel.stdout
