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


def test_requests_file_through_vllm_run_batch_and_back(gavel, batch_fake, batch_server, tmp_path):
    out, requests, output = tmp_path / "p.jsonl", tmp_path / "requests.jsonl", tmp_path / "o.jsonl"
    common = ["generate", "--data", DATA, "--model", "openai:Qwen/Qwen3-VL-8B-Instruct",
              "--preset", "gpt", "--cache", tmp_path / "cache.sqlite", "--out", out]  # fmt: skip
    wrote = gavel(*common, "--batch-requests-only", requests)
    assert wrote.returncode == 0, wrote.stderr
    assert f"wrote {SAMPLES} requests to {requests} (nothing sent)" in wrote.stderr
    assert f"vllm run-batch -i {requests} -o OUTPUT.jsonl --model Qwen/Qwen3-VL-8B-Instruct" in (
        wrote.stderr.replace("\n", " ")
    )
    assert not out.exists()
    sent = lines(requests)
    assert len(sent) == SAMPLES and {r["method"] for r in sent} == {"POST"}
    assert {r["url"] for r in sent} == {"/v1/chat/completions"}
    assert all(r["body"]["model"] == "Qwen/Qwen3-VL-8B-Instruct" for r in sent)
    assert all(r["body"]["messages"][0]["content"][0]["type"] == "image_url" for r in sent)

    run_batch_as_vllm_does(requests, output, batch_fake, refuse=1, skip=1)
    merged = gavel(*common, "--from-batch-output", output)
    assert merged.returncode == 2, merged.stderr  # a sample failed: written, and said so
    assert "1 not in the output file" in merged.stderr
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
    online = gavel("generate", "--data", DATA, "--model", "openai:Qwen/Qwen3-VL-8B-Instruct",
                   "--preset", "gpt", "--no-cache", "--base-url", batch_server.url,
                   "--out", tmp_path / "online.jsonl")  # fmt: skip
    assert online.returncode == 0, online.stderr
    by_id = {r["id"]: r for r in lines(tmp_path / "online.jsonl")}
    for line in answered:
        for field in ("response", "sent_size", "prompt_tokens", "completion_tokens"):
            assert line[field] == by_id[line["id"]][field], field
    # The bodies vLLM got are the bodies the server got online.
    online_bodies = sorted(json.dumps(b, sort_keys=True) for b in batch_server.online_bodies)
    assert sorted(json.dumps(r["body"], sort_keys=True) for r in sent) == online_bodies

    # Again: only the refused and the missing request are written out.
    again = gavel(*common, "--batch-requests-only", tmp_path / "rest.jsonl")
    assert again.returncode == 0, again.stderr
    assert len(lines(tmp_path / "rest.jsonl")) == 2


def test_a_damaged_output_file_is_named_with_its_line(gavel, tmp_path):
    output = tmp_path / "o.jsonl"
    output.write_text('{"custom_id": "x", "response": null, "error": null}\nnot json\n')
    done = gavel("generate", "--data", DATA, "--model", "openai:m", "--out", tmp_path / "p.jsonl",
                 "--from-batch-output", output)  # fmt: skip
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert f"{output}:2: not a batch output line" in done.stderr
    missing = gavel("generate", "--data", DATA, "--model", "openai:m", "--out", tmp_path / "p.jsonl",
                    "--from-batch-output", tmp_path / "nothing.jsonl")  # fmt: skip
    assert missing.returncode != 0 and "no such batch output file" in missing.stderr


def test_batch_flags_that_cannot_apply_are_refused_by_name(gavel, tmp_path):
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
        done = gavel(*base, *extra)
        assert done.returncode == 2, (extra, done.stderr)
        assert message in done.stderr, (extra, done.stderr)
    assert not (tmp_path / "p.jsonl").exists()
