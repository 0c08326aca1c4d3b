"""A served model through the Python API: the same requests reach the server, a run in which
some samples fail is scored and then raised as the command line's exit 2 with its message,
and calling again asks only the failed samples again (the server's own counters say so)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import gavel
from gavel.errors import GavelError


@pytest.fixture
def data(tmp_path, monkeypatch) -> str:
    monkeypatch.chdir(tmp_path)
    return str(gavel.synthesize("gavel", out="synth", n=4))


def chats(server) -> list[dict]:
    """The chat requests the server received, in order."""
    return [body for _, body, _ in server.received]


def sent(bodies: list[dict]) -> list[str]:
    return sorted(json.dumps(body, sort_keys=True) for body in bodies)


def test_failed_samples_are_scored_raised_and_asked_again(data, server, fake, api_key, gavel_main):
    refuse = {"n": 0}

    def plan(body, number):  # the first request of each run is refused, not retried
        refuse["n"] += 1
        return fake.Fault(status=400, message="image too large") if refuse["n"] == 1 else None

    served = {"model": "openai:vlm", "base_url": server.url, "api_key_env": "GAVEL_TEST_KEY",
              "no_cache": True, "no_progress": True}  # fmt: skip
    flags = ["--model", "openai:vlm", "--base-url", server.url, "--api-key-env",
             "GAVEL_TEST_KEY", "--no-cache", "--no-progress"]  # fmt: skip
    server.plan = plan
    done = gavel_main("run", "--data", data, "--out", "cli", *flags)
    assert done.code == 2
    cli_chats = chats(server)
    server.received.clear()
    refuse["n"] = 0
    with pytest.raises(GavelError) as failed:
        gavel.run("gavel", data=data, out="api", **served)
    assert str(failed.value).replace("api/", "cli/") in done.err
    assert sent(chats(server)) == sent(cli_chats)  # the same requests, whatever their order
    assert len(chats(server)) == 4
    results = json.loads(Path("api/results.json").read_text())  # scored all the same
    assert results["counts"]["model_error"] == 1
    assert results["counts"] == json.loads(Path("cli/results.json").read_text())["counts"]

    server.received.clear()
    refuse["n"] = 1  # nothing refused now
    result = gavel.run("gavel", data=data, out="api", **served)
    assert len(chats(server)) == 1  # only the failed sample is asked again
    assert result.counts["model_error"] == 0 and result.counts["total"] == 4
    assert all(auth == f"Bearer {api_key}" for _, _, auth in server.received)


def test_python_values_take_the_flags_shapes(data, server, api_key):
    """A dict for a JSON flag, one text for a repeatable one: as the flags' text would be."""
    made = gavel.generate("gavel", data=data, model="openai:vlm", out="pred.jsonl",
                          base_url=server.url, api_key_env="GAVEL_TEST_KEY", no_cache=True,
                          no_progress=True, extra_body={"top_k": 1}, sample_id="synth-00002",
                          max_tokens=64)  # fmt: skip
    (body,) = chats(server)
    assert body["top_k"] == 1 and body["max_tokens"] == 64
    assert made.samples == made.answered == 1
