"""Refusals in a batch's results are those samples' outcomes: the rule that stops an online run
whose first requests are all refused alike never applies to them."""

from __future__ import annotations

import json
from pathlib import Path

from gavel.examples import example_dir

DATA = example_dir("photos") / "gavel.jsonl"
SAMPLES = len(DATA.read_text().splitlines())


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_a_batch_whose_every_line_is_refused_alike_writes_every_error_line(
    gavel, batch_server, batch_fake, tmp_path, api_key
):
    words = "Your request was rejected as a result of our safety system."
    batch_server.plan = lambda custom_id, body, before: batch_fake.LineFault(status=400,
                                                                             message=words)  # fmt: skip
    out = tmp_path / "p.jsonl"
    done = gavel("generate", "--data", DATA, "--model", "openai:batch-model", "--preset", "gpt",
                 "--base-url", batch_server.url, "--api-key-env", "GAVEL_TEST_KEY",
                 "--no-cache", "--no-progress", "--out", out, "--batch", "--batch-poll", "0.05",
                 "--batch-rounds", "1")  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "check the model name" not in done.stderr.lower()
    assert "requests sent, alike" not in done.stderr
    written = lines(out)
    assert len(written) == SAMPLES == len(batch_server.sent)  # every sample has its line
    assert all(f"HTTP 400: {words}" in line["error"] for line in written)
