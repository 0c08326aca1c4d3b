"""vLLM's offline ``run-batch``: gavel writes the requests file, merges the output file."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from gavel.examples import example_dir

DATA = example_dir("photos") / "gavel.jsonl"
SAMPLES = len(DATA.read_text().splitlines())


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def run_batch_as_vllm_does(requests: Path, output: Path, batch_fake, refuse: int, skip: int):
    """What ``vllm run-batch -i requests -o output`` writes: one line per request with the
    completion as ``response.body``; a failed request as status 400, no body, ``error`` text
    (vLLM's shape). ``skip`` requests are left out, as a run that stopped early leaves them."""
    written = []
    for number, line in enumerate(lines(requests)):
        entry = {"id": f"vllm-{number:032x}", "custom_id": line["custom_id"]}
        if number < refuse:
            entry |= {"response": {"status_code": 400, "request_id": f"vllm-batch-{number}",
                                   "body": None}, "error": "This model's maximum context "
                      "length is 32768 tokens."}  # fmt: skip
        elif number < refuse + skip:
            continue
        else:
            body = line["body"]
            text = f"echo: {batch_fake.prompt_of(body)}"
            entry |= {"response": {"status_code": 200, "request_id": f"vllm-batch-{number}",
                                   "body": batch_fake.completion(body, text)}, "error": None}  # fmt: skip
        written.append(json.dumps(entry))
    output.write_text("\n".join(written) + "\n")


def test_requests_file_through_vllm_run_batch_and_back(
    gavel_main, batch_fake, batch_server, tmp_path
):
    out, requests, output = tmp_path / "p.jsonl", tmp_path / "requests.jsonl", tmp_path / "o.jsonl"
    common = ["generate", "--data", DATA, "--model", "openai:Qwen/Qwen3-VL-8B-Instruct",
              "--preset", "gpt", "--cache", tmp_path / "cache.sqlite", "--out", out]  # fmt: skip
    wrote = gavel_main(*common, "--batch-requests-only", requests)
    assert wrote.code == 0, wrote.err
    assert f"wrote {SAMPLES} requests to {requests} (nothing sent)" in wrote.err
    assert f"vllm run-batch -i {requests} -o OUTPUT.jsonl --model Qwen/Qwen3-VL-8B-Instruct" in (
        wrote.err.replace("\n", " ")
    )
    assert not out.exists()
    sent = lines(requests)
    assert len(sent) == SAMPLES and {r["method"] for r in sent} == {"POST"}
    assert {r["url"] for r in sent} == {"/v1/chat/completions"}
    assert all(r["body"]["model"] == "Qwen/Qwen3-VL-8B-Instruct" for r in sent)
    assert all(r["body"]["messages"][0]["content"][0]["type"] == "image_url" for r in sent)

    run_batch_as_vllm_does(requests, output, batch_fake, refuse=1, skip=1)
    merged = gavel_main(*common, "--from-batch-output", output)
    assert merged.code == 2, merged.err  # a sample failed: written, and said so
    assert "1 not in the output file" in merged.err
    written = lines(out)
    assert len(written) == SAMPLES - 1
    errors = [r for r in written if r.get("error")]
    assert len(errors) == 1 and "maximum context length" in errors[0]["error"]
    assert errors[0]["error_kind"] == "http_status"
    answered = [r for r in written if not r.get("error")]
    assert all(
        r["response"].startswith("echo: ") and r["finish_reason"] == "stop" for r in answered
    )
    assert all(r["sent_size"] and r["box_format"] == "pixel" for r in answered)
    with sqlite3.connect(tmp_path / "cache.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM answers").fetchone()[0] == SAMPLES - 2

    # The same answers as an online run of the model against a server (the loopback one).
    online = gavel_main("generate", "--data", DATA, "--model", "openai:Qwen/Qwen3-VL-8B-Instruct",
                        "--preset", "gpt", "--no-cache", "--base-url", batch_server.url,
                        "--out", tmp_path / "online.jsonl")  # fmt: skip
    assert online.code == 0, online.err
    by_id = {r["id"]: r for r in lines(tmp_path / "online.jsonl")}
    for line in answered:
        for field in ("response", "sent_size", "prompt_tokens", "completion_tokens"):
            assert line[field] == by_id[line["id"]][field], field
    # The bodies vLLM got are the bodies the server got online.
    online_bodies = sorted(json.dumps(b, sort_keys=True) for b in batch_server.online_bodies)
    assert sorted(json.dumps(r["body"], sort_keys=True) for r in sent) == online_bodies

    # Again: only the refused and the missing request are written out.
    again = gavel_main(*common, "--batch-requests-only", tmp_path / "rest.jsonl")
    assert again.code == 0, again.err
    assert len(lines(tmp_path / "rest.jsonl")) == 2


def test_one_bad_line_costs_one_sample(gavel, gavel_main, batch_fake, tmp_path):
    out, requests, output = tmp_path / "p.jsonl", tmp_path / "requests.jsonl", tmp_path / "o.jsonl"
    common = ["generate", "--data", DATA, "--model", "openai:m", "--preset", "gpt",
              "--no-cache", "--out", out]  # fmt: skip
    assert gavel_main(*common, "--batch-requests-only", requests).code == 0
    run_batch_as_vllm_does(requests, output, batch_fake, refuse=0, skip=0)
    rows = output.read_bytes().splitlines()
    ids = [json.loads(row)["custom_id"] for row in rows]
    # vLLM's newer error shape: an error response object, the status inside it too.
    refused = {"error": {"message": "The image is too large.", "type": "BadRequestError",
                         "param": None, "code": 400}}  # fmt: skip
    rows[0] = json.dumps({"id": "v0", "custom_id": ids[0], "error": refused,
                          "response": {"status_code": 400, "body": None}}).encode()  # fmt: skip
    rows[1] = b"not json at all"  # no custom_id to be read: that sample has no result
    rows[2] = rows[2][:-30]  # damaged in the middle of the file
    duplicate = json.loads(rows[3])
    duplicate["response"]["body"]["choices"][0]["message"]["content"] = "a second opinion"
    rows.append(json.dumps(duplicate).encode())
    rows.append(rows[4][:60])  # a repeat of a good line, cut short: the good one stands
    rows[-3] = rows[-3][:150]  # the last real line, cut short (its custom_id still readable)
    output.write_bytes(b"\n".join(rows) + b"\n")
    cut_last = json.loads(b"".join(requests.read_bytes().splitlines()[-1:]))["custom_id"]
    assert cut_last == ids[-1]

    done = gavel(*common, "--from-batch-output", output)  # a process: no traceback
    assert done.returncode == 2, done.stderr  # some samples failed: their error lines stand
    assert "Traceback" not in done.stderr
    total = len(rows)
    assert f"{output}: 4 line(s) are not batch results (line 2, 3, {total - 2}, {total})" in (
        done.stderr
    )
    assert "1 custom_id(s) answered more than once with different answers" in done.stderr
    written = {r["id"]: r for r in lines(out)}
    errors = {k: r["error"] for k, r in written.items() if r.get("error")}
    answered = [r for r in written.values() if not r.get("error")]
    assert len(answered) == SAMPLES - 4  # every good line merged
    assert len(errors) == 3 and len(written) == SAMPLES - 1  # "not json at all": no line
    messages = sorted(errors.values())
    assert sum(m.endswith(": HTTP 400: The image is too large.") for m in messages) == 1
    assert all(m.count("HTTP 400") <= 1 for m in messages)
    assert any(f"{output}:3: not a batch output line" in m for m in messages)
    assert any(f"{output}:{total - 2}: not a batch output line" in m for m in messages)
    first = json.loads(rows[3])["response"]["body"]["choices"][0]["message"]["content"]
    assert first in {r["response"] for r in answered}
    assert "a second opinion" not in {r["response"] for r in answered}
    # The next requests file holds exactly the samples without an answer.
    again = gavel_main(*common, "--batch-requests-only", tmp_path / "rest.jsonl")
    assert again.code == 0, again.err
    assert len(lines(tmp_path / "rest.jsonl")) == 4

    missing = gavel_main(*common, "--from-batch-output", tmp_path / "nothing.jsonl")
    assert missing.code != 0 and "no such batch output file" in missing.err


def test_error_lines_stay_while_their_samples_wait_for_the_next_output_file(
    gavel_main, batch_fake, tmp_path
):
    out, requests, output = tmp_path / "p.jsonl", tmp_path / "requests.jsonl", tmp_path / "o.jsonl"
    common = ["generate", "--data", DATA, "--model", "openai:m", "--preset", "gpt",
              "--no-cache", "--out", out]  # fmt: skip
    assert gavel_main(*common, "--batch-requests-only", requests).code == 0
    run_batch_as_vllm_does(requests, output, batch_fake, refuse=1, skip=0)
    assert gavel_main(*common, "--from-batch-output", output).code == 2
    before = {r["id"]: r for r in lines(out)}
    failed = [r for r in before.values() if r.get("error")]
    assert len(before) == SAMPLES and len(failed) == 1
    # The next requests file asks the failed sample again; its error line stays meanwhile.
    rest = tmp_path / "rest.jsonl"
    assert gavel_main(*common, "--batch-requests-only", rest).code == 0
    assert len(lines(rest)) == 1
    assert {r["id"]: r for r in lines(out)} == before
    # An output file that does not mention it leaves the sample its earlier line.
    (tmp_path / "empty.jsonl").write_text("")
    merged = gavel_main(*common, "--from-batch-output", tmp_path / "empty.jsonl")
    assert "1 not in the output file" in merged.err
    assert {r["id"]: r for r in lines(out)} == before


def test_batch_flags_that_cannot_apply_are_refused_by_name(gavel_main, tmp_path):
    base = ["generate", "--data", DATA, "--out", tmp_path / "p.jsonl"]
    cases = [
        (["--model", "scene", "--batch"], "--batch applies to openai: models only"),
        (["--model", "openai:m", "--batch", "--executor", "ray"], "--batch: not with --executor ray"),
        (["--model", "openai:m", "--batch", "--from-batch-output", tmp_path / "o.jsonl"],
         "--batch and --from-batch-output: give one of them"),
        (["--model", "openai:m", "--batch-poll", "5"], "--batch-poll: only with --batch"),
        (["--model", "openai:m", "--batch", "--base-url", "http://127.0.0.1:9/v1", "--base-url",
          "http://127.0.0.1:8/v1"], "--batch sends to one server: give one --base-url"),
    ]  # fmt: skip
    for extra, message in cases:
        done = gavel_main(*base, *extra)
        assert done.code == 2, (extra, done.err)
        assert message in done.err, (extra, done.err)
    assert not (tmp_path / "p.jsonl").exists()
