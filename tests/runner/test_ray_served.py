"""The Ray runner with a served model (``openai:``) and with ``hf:``: the in-process runner's
checks and stops, on a local 2-CPU Ray cluster, against a real HTTP server on loopback.

- the model name is checked against ``GET /models`` before anything is sent;
- requests refused alike stop the run with the in-process runner's message, the lines written
  kept, and a rerun after the fix asks exactly what is missing;
- an ``hf:`` model is loaded by the replicas only, never by the driver.
"""

from __future__ import annotations

import json
import re

import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install ray)")
pytest.importorskip("openai", reason="openai: models need the api extra (openai)")

from gavel.errors import ConfigError  # noqa: E402
from gavel.models.openai_compat import OpenAIChatModel  # noqa: E402
from gavel.requests import Request  # noqa: E402
from gavel.runner.async_runner import RunAborted, run_sync  # noqa: E402
from gavel.runner.ray_executor import RunStopped, run_ray  # noqa: E402

UNKNOWN = "The model `m` does not exist."


@pytest.fixture(scope="module")
def cluster():
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray.get_runtime_context().gcs_address
    if started:
        ray.shutdown()


def requests(count: int) -> list[Request]:
    return [Request(f"s{i}", "gavel", f"prompt {i}") for i in range(count)]


def options(server) -> dict:
    return {"base_urls": [server.url], "api_key_env": "GAVEL_TEST_KEY"}


def lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_a_model_the_server_does_not_serve_stops_before_any_request(
    cluster, server, tmp_path, api_key
):
    server.served = [{"id": "llava-7b", "object": "model", "owned_by": "vllm"}]
    out = tmp_path / "pred.jsonl"
    with pytest.raises(ConfigError) as refused:
        run_ray("openai:m", options(server), requests(4), out, workers=2, progress=False)
    assert "does not serve the model 'm'" in str(refused.value)
    assert "llava-7b" in str(refused.value) and "--model openai:NAME" in str(refused.value)
    assert server.models_asked == 2 and server.hits == 0  # each replica asked; nothing sent
    assert lines(out) == []


def test_alike_refusals_stop_with_the_local_message_and_a_rerun_asks_the_rest(
    cluster, server, fake, tmp_path, api_key
):
    server.plan = lambda body, number: fake.Fault(404, message=UNKNOWN)  # every one refused
    local = tmp_path / "local.jsonl"
    model = OpenAIChatModel("m", base_urls=[server.url], api_key_env="GAVEL_TEST_KEY")
    with pytest.raises(RunAborted) as stopped_here:
        run_sync(model, requests(10), local, concurrency=1, progress=False)
    here = stopped_here.value.summary.aborted
    assert here.startswith(f"{server.url} refused all 3 requests sent, alike: HTTP 404")
    # This process cannot know how many the replicas sent: it counts the lines.
    expected = here.replace("all 3 requests sent", "the first 3 requests")
    server.hits = 0

    out = tmp_path / "pred.jsonl"
    # Batches of 2: the three refusals in a row span two batches, so only the driver, counting
    # over the lines as written, sees three.
    with pytest.raises(RunStopped) as stopped:
        run_ray("openai:m", options(server), requests(10), out, workers=1, batch_size=2,
                retry_errors=True, progress=False)  # fmt: skip
    message = str(stopped.value)
    assert message.startswith(f"stopped: {expected} Everything written is kept in {out}")
    assert UNKNOWN.rstrip(".") in message and "--model openai:NAME" in message
    written = lines(out)
    # Batches are written whole: the one with the third refusal too; the one in flight is not.
    assert [line["id"] for line in written] == ["s0", "s1", "s2", "s3"]
    for line in written:
        assert line["error_kind"] == "http_status" and f"HTTP 404: {UNKNOWN}" in line["error"]
    assert server.hits < 10

    server.plan = None  # fixed: the rerun asks the refused samples and the rest, once each
    _settled(server)  # a request a stopped replica had in flight may still be arriving
    server.hits = 0
    summary = run_ray("openai:m", options(server), requests(10), out, workers=1,
                      batch_size=2, retry_errors=True, progress=False)  # fmt: skip
    again = lines(out)
    assert sorted(line["id"] for line in again) == sorted(f"s{i}" for i in range(10))
    assert all(line.get("error") is None for line in again)
    assert server.hits == summary.answered == 10  # the 4 refused and the 6 never asked, once


def by_id(path) -> dict[str, dict]:
    return {line["id"]: line for line in lines(path)}


def test_error_lines_of_an_earlier_run_are_asked_again_and_never_lost(
    cluster, server, fake, tmp_path, api_key
):
    from gavel.transport.failures import SAME_REFUSALS

    refused = {f"prompt {i}" for i in range(SAME_REFUSALS + 1)}  # each refused in its own words
    server.plan = lambda body, number: (fake.Fault(400, message=f"no {fake.prompt_text(body)}")
                                        if fake.prompt_text(body) in refused else None)  # fmt: skip
    out = tmp_path / "pred.jsonl"
    run_ray("openai:m", options(server), requests(10), out, workers=1, batch_size=1,
            retry_errors=True, progress=False)  # fmt: skip
    before = by_id(out)
    failed = {key for key, line in before.items() if line.get("error")}
    assert len(before) == 10 and len(failed) == len(refused)

    # The rerun stops at once (nothing listens): the lines it took out to ask again come back.
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        gone = {"base_urls": [f"http://127.0.0.1:{probe.getsockname()[1]}/v1"],
                "api_key_env": "GAVEL_TEST_KEY"}  # fmt: skip
    with pytest.raises(RunStopped, match="cannot reach"):
        run_ray("openai:m", gone, requests(10), out, workers=1, batch_size=1,
                retry_errors=True, progress=False)  # fmt: skip
    assert by_id(out) == before

    # Refused alike now, one batch of one at a time: the samples that failed before are asked
    # again, their refusals known, never a reason to stop (as in this process's runner).
    server.plan = lambda body, number: fake.Fault(403, message="Key revoked")
    server.hits = 0
    summary = run_ray("openai:m", options(server), requests(10), out, workers=1,
                      batch_size=1, retry_errors=True, progress=False)  # fmt: skip
    after = by_id(out)
    assert len(lines(out)) == 10 and set(after) == set(before)
    assert server.hits == summary.answered == len(failed)
    assert {key for key, line in after.items() if "Key revoked" in (line.get("error") or "")} == (
        failed
    )
    assert all(after[key] == before[key] for key in set(before) - failed)
    assert all(after[key]["error_kind"] == "http_status" for key in failed)


def test_a_server_that_listed_another_model_stops_the_run_at_its_first_refusal(
    cluster, server, fake, tmp_path, api_key
):
    # llama.cpp's list: one model, answered under any name, so the list alone stops nothing;
    # each replica remembers it, and a refusal that may be about the name stops at once.
    server.served = [{"id": "tiny.gguf", "object": "model", "owned_by": "llamacpp"}]
    server.plan = lambda body, number: fake.Fault(400, message="model 'm' not found")
    out = tmp_path / "pred.jsonl"
    with pytest.raises(RunStopped) as stopped:
        run_ray("openai:m", options(server), requests(6), out, workers=1, batch_size=3,
                progress=False)  # fmt: skip
    message = str(stopped.value)
    assert re.search(r"refused (the one request sent|the first request), alike: HTTP 400: "
                     "model 'm' not found", message)  # fmt: skip
    assert "the server lists: tiny.gguf" in message
    assert len(lines(out)) == 1
    # Each batch sent stops at its first refusal: the first one, and the one in flight at most.
    assert server.hits <= 2


def test_an_endpoint_where_nothing_listens_stops_at_once(cluster, tmp_path, api_key):
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    out = tmp_path / "pred.jsonl"
    with pytest.raises(RunStopped, match=r"stopped: cannot reach http://127\.0\.0\.1:\d+/v1"):
        run_ray("openai:m", {"base_urls": [url], "api_key_env": "GAVEL_TEST_KEY"},
                requests(6), out, workers=1, batch_size=6, progress=False)  # fmt: skip
    assert lines(out) == []


def test_generate_on_ray_stops_on_a_refused_key_and_the_rerun_completes(
    cluster, gavel, server, fake, tmp_path, api_key
):
    assert gavel("synth", "--n", "5", "--out", tmp_path / "set").returncode == 0
    server.plan = lambda body, number: fake.Fault(status=401, message="Incorrect API key")
    command = ["generate", "--data", tmp_path / "set" / "gavel.jsonl", "--model", "openai:m",
               "--base-url", server.url, "--api-key-env", "GAVEL_TEST_KEY",
               "--executor", "ray", "--ray-address", cluster, "--workers", "1",
               "--no-progress", "--out", tmp_path / "p.jsonl"]  # fmt: skip
    done = gavel(*command)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert re.search(r"refused (all 3 requests sent|the first 3 requests), alike: HTTP 401: "
                     "Incorrect API key", done.stderr)  # fmt: skip
    assert "GAVEL_TEST_KEY (--api-key-env names another variable)" in done.stderr
    assert api_key not in done.stderr
    server.plan = None
    again = gavel(*command)
    assert again.returncode == 0, again.stderr
    written = lines(tmp_path / "p.jsonl")
    assert len(written) == len({line["id"] for line in written}) == 5
    assert all(line.get("error") is None for line in written)


def test_generate_on_ray_with_an_hf_model_loads_it_in_the_replicas_only(
    cluster, gavel_main, tmp_path, monkeypatch
):
    pytest.importorskip("torch", reason="the hf adapter needs torch (gavel-eval[hf])")
    import transformers

    from gavel.train.tiny import build_qwen25_vl, tiny_dataset

    model = build_qwen25_vl(tmp_path / "model")
    data = tiny_dataset(tmp_path / "data", 3)
    loads: list[str] = []
    for name in ("AutoModelForImageTextToText", "AutoProcessor"):
        auto = getattr(transformers, name)
        original = auto.from_pretrained

        def counted(*args, _original=original, _name=name, **kwargs):
            loads.append(_name)  # this process only: the replicas are other processes
            return _original(*args, **kwargs)

        monkeypatch.setattr(auto, "from_pretrained", counted)
    out = tmp_path / "p.jsonl"
    code, text = gavel_main("generate", "--data", data, "--model", f"hf:{model}",
                            "--preset", "qwen2.5-vl", "--executor", "ray",
                            "--ray-address", cluster, "--workers", "1", "--device", "cpu",
                            "--dtype", "float32", "--max-tokens", "4", "--no-progress",
                            "--out", out)  # fmt: skip
    assert code == 0, text
    assert loads == []  # the driver never loaded the weights nor the processor
    written = lines(out)
    assert len(written) == 3 and all(line.get("error") is None for line in written)
    manifest = json.loads((tmp_path / "p.manifest.json").read_text())
    adapter = manifest["adapter"]
    assert adapter["model_type"] == "qwen2_5_vl" and adapter["loaded_by"] == "the Ray replicas"
    assert adapter["box_format"] == "resized-pixel"  # the preset's, as the prompts said
    (replica,) = manifest["settings"]["ray"]["replicas"]
    assert replica["device"] == "cpu" and replica["batch_size"] == adapter["batch_size"]


def _settled(server, quiet: float = 0.5, longest: float = 10.0) -> None:
    """Wait until the server has taken no request for ``quiet`` seconds."""
    import time

    deadline = time.monotonic() + longest
    seen = server.hits
    while time.monotonic() < deadline:
        time.sleep(quiet)
        if server.hits == seen:
            return
        seen = server.hits
