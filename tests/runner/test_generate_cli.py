"""``gavel generate --model openai:…`` end to end against real loopback servers."""

from __future__ import annotations

import json

import pytest

#: Most commands here run in-process: an exception that a thread or a finalizer would print as
#: a traceback on the console fails the test instead of passing unseen.
pytestmark = pytest.mark.filterwarnings(
    "error::pytest.PytestUnhandledThreadExceptionWarning",
    "error::pytest.PytestUnraisableExceptionWarning",
)


def test_generate_with_a_preset_two_servers_and_the_cache(
    gavel_main, tmp_path, server, second_server, api_key
):
    assert (
        gavel_main("synth", "--n", "8", "--out", tmp_path / "set", "--difficulty", "easy").code == 0
    )
    data = tmp_path / "set" / "gavel.jsonl"
    command = ["generate", "--data", data, "--model", "openai:qwen3-vl-test", "--preset", "qwen3-vl",
               "--base-url", server.url, "--base-url", second_server.url, "--api-key-env", "GAVEL_TEST_KEY",
               "--max-tokens", "64", "--cache", tmp_path / "cache.sqlite", "--no-progress"]  # fmt: skip
    first = gavel_main(*command, "--out", tmp_path / "a.jsonl")
    assert first.code == 0, first.err
    lines = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text().splitlines()]
    assert len(lines) == 8
    assert {line["box_format"] for line in lines} == {"rel1000"}  # declared by the preset
    assert all(line["response"].startswith("echo:") for line in lines)
    assert "relative to the image size, from 0 to 1000" in lines[0]["response"]
    assert server.hits > 0 and second_server.hits > 0 and server.hits + second_server.hits == 8
    manifest = json.loads((tmp_path / "a.manifest.json").read_text())
    assert manifest["settings"]["preset"] == "qwen3-vl"
    assert api_key not in (tmp_path / "a.jsonl").read_text() + json.dumps(manifest) + first.err

    again = gavel_main(*command, "--out", tmp_path / "b.jsonl")  # a new file, same requests
    assert again.code == 0, again.err
    assert server.hits + second_server.hits == 8  # everything came from the cache
    assert len((tmp_path / "b.jsonl").read_text().splitlines()) == 8


def test_local_models_refuse_remote_options(gavel_main, tmp_path):
    gavel_main("synth", "--n", "2", "--out", tmp_path / "s")
    done = gavel_main("generate", "--data", tmp_path / "s" / "gavel.jsonl", "--model", "scene",
                 "--base-url", "http://127.0.0.1:9/v1", "--out", tmp_path / "p.jsonl")  # fmt: skip
    assert done.code == 2
    assert "--base-url applies to openai: models only" in done.err


def test_timeout_bounds_each_attempt_and_verbose_shows_every_retry(
    gavel, tmp_path, server, fake, api_key
):
    from gavel.examples import example_dir

    data = example_dir("photos") / "gavel.jsonl"
    samples = len(data.read_text().splitlines())
    slow_first = set()

    def plan(body, number):  # the first attempt at each sample outlasts --timeout
        prompt = fake.prompt_text(body)
        if prompt in slow_first:
            return None
        slow_first.add(prompt)
        return fake.Fault(delay=2.0)

    server.plan = plan
    # In a subprocess: -v adds a logging handler that would outlive an in-process run.
    done = gavel("-v", "generate", "--data", data, "--model", "openai:m", "--base-url", server.url,
                 "--api-key-env", "GAVEL_TEST_KEY", "--no-cache", "--timeout", "0.5",
                 "--out", tmp_path / "p.jsonl")  # fmt: skip
    assert done.returncode == 0, done.stderr
    retried = [line for line in done.stderr.splitlines() if "; retry 1 in" in line]
    assert len(retried) == samples and all("timed out" in line for line in retried)
    assert f"{samples} answered" in done.stderr and "0 errors" in done.stderr


def test_an_unreachable_endpoint_is_named_at_once(gavel_main, tmp_path, api_key):
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    from gavel.examples import example_dir

    done = gavel_main("generate", "--data", example_dir("photos") / "gavel.jsonl", "--model",
                 "openai:m", "--base-url", f"http://127.0.0.1:{port}/v1", "--api-key-env",
                 "GAVEL_TEST_KEY", "--no-cache", "--out", tmp_path / "p.jsonl")  # fmt: skip
    assert done.code == 2 and "Traceback" not in done.err
    assert f"cannot reach http://127.0.0.1:{port}/v1: connection refused" in done.err
    assert "0 retries" in done.err and "0 answered" in done.err
    assert not (tmp_path / "p.jsonl").exists() or not (tmp_path / "p.jsonl").read_text()


def test_a_key_written_into_the_base_url_is_never_recorded(
    gavel, gavel_main, tmp_path, server, api_key
):
    assert gavel_main("synth", "--n", "2", "--out", tmp_path / "set").code == 0
    secret = "sk-in-the-url-9d1e"
    with_key = server.url.replace("http://", f"http://user:{secret}@")
    # In a subprocess: the manifest records the process's own command line.
    done = gavel("generate", "--data", tmp_path / "set" / "gavel.jsonl", "--model", "openai:m",
                 "--base-url", with_key, "--api-key-env", "GAVEL_TEST_KEY", "--no-cache",
                 "--no-progress", "--out", tmp_path / "p.jsonl")  # fmt: skip
    assert done.returncode == 0, done.stderr
    manifest = (tmp_path / "p.manifest.json").read_text()
    assert secret not in manifest + (tmp_path / "p.jsonl").read_text()
    recorded = json.loads(manifest)
    assert recorded["adapter"]["base_urls"] == [server.url.replace("http://", "http://***@")]
    assert with_key.replace(f"user:{secret}", "***") in recorded["command"]


def test_the_async_runner_names_the_file_it_cannot_append_to(gavel_main, tmp_path, server, api_key):
    import subprocess
    import sys

    assert gavel_main("synth", "--n", "6", "--out", tmp_path / "set").code == 0
    script = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (300, 300))\n"
        "from gavel.cli.main import main\n"
        "main(sys.argv[1:])\n"
    )
    out = tmp_path / "p.jsonl"
    args = ["generate", "--data", tmp_path / "set" / "gavel.jsonl", "--model", "openai:m",
            "--base-url", server.url, "--api-key-env", "GAVEL_TEST_KEY", "--no-cache",
            "--no-progress", "--out", out]  # fmt: skip
    done = subprocess.run([sys.executable, "-c", script, *map(str, args)], capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f"error: {out}: the file-size limit was reached" in done.stderr
    again = gavel_main(*args)
    assert again.code == 0, again.err
    assert len({json.loads(line)["id"] for line in out.read_text().splitlines()}) == 6


def test_a_run_in_which_every_request_failed_fails(gavel_main, tmp_path, server, fake, api_key):
    """Fewer requests than the failure budget looks at, every one refused: not a success."""
    assert gavel_main("synth", "--n", "4", "--out", tmp_path / "set").code == 0
    server.plan = lambda body, number: fake.Fault(status=400, message=f"bad request {number}")
    out = tmp_path / "p.jsonl"
    done = gavel_main("generate", "--data", tmp_path / "set" / "gavel.jsonl", "--model", "openai:m",
                 "--base-url", server.url, "--api-key-env", "GAVEL_TEST_KEY", "--no-cache",
                 "--no-progress", "--out", out)  # fmt: skip
    assert done.code == 2, done.err
    assert "Traceback" not in done.err
    assert "no request was answered: all 4 sent failed" in done.err
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 4 and all(line["error"] for line in lines)  # the error lines are kept

    run = gavel_main("run", "--data", tmp_path / "set" / "gavel.jsonl", "--model", "openai:m",
                "--base-url", server.url, "--api-key-env", "GAVEL_TEST_KEY", "--no-cache",
                "--no-progress", "--out", tmp_path / "run")  # fmt: skip
    assert run.code == 2 and "no request was answered: all 4 sent failed" in run.err
    assert not (tmp_path / "run" / "results.json").exists()  # nothing scored


def test_a_run_in_which_some_requests_failed_exits_2_with_the_causes(
    gavel_main, tmp_path, server, fake, api_key
):
    assert gavel_main("synth", "--n", "4", "--out", tmp_path / "set").code == 0
    server.plan = lambda body, number: (
        None if number == 1 else fake.Fault(status=400, message=f"bad request {number}")
    )
    done = gavel_main("generate", "--data", tmp_path / "set" / "gavel.jsonl", "--model", "openai:m",
                 "--base-url", server.url, "--api-key-env", "GAVEL_TEST_KEY", "--no-cache",
                 "--no-progress", "--concurrency", "1", "--out", tmp_path / "p.jsonl")  # fmt: skip
    assert done.code == 2, done.err
    assert "3 samples failed:\n  1 × HTTP 400: bad request 2\n" in done.err
    assert "error: 3 of 4 samples asked failed" in done.err and "Traceback" not in done.err
    assert (tmp_path / "p.manifest.json").exists()
    server.hits = 0  # the same plan again: the first request answered, the others refused
    run = gavel_main("run", "--data", tmp_path / "set" / "gavel.jsonl", "--model", "openai:m",
                "--base-url", server.url, "--api-key-env", "GAVEL_TEST_KEY", "--no-cache",
                "--no-progress", "--concurrency", "1", "--out", tmp_path / "run")  # fmt: skip
    assert run.code == 2, run.err  # scored all the same, then the exit says it
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["counts"]["model_error"] == 3


def test_no_model_check_skips_a_list_that_omits_the_model(gavel_main, tmp_path, server, api_key):
    """A provider whose GET /models omits a name it serves: the check stops the run, the
    switch lets it go (and gavel run takes the switch too)."""
    assert gavel_main("synth", "--n", "3", "--out", tmp_path / "set").code == 0
    server.served = [{"id": "some-other-model", "owned_by": "provider"}]
    command = ["--data", tmp_path / "set" / "gavel.jsonl", "--model", "openai:m",
               "--base-url", server.url, "--api-key-env", "GAVEL_TEST_KEY", "--no-cache",
               "--no-progress"]  # fmt: skip
    checked = gavel_main("generate", *command, "--out", tmp_path / "a.jsonl")
    assert checked.code == 2 and "does not serve the model 'm'" in checked.err
    assert server.hits == 0 and server.models_asked == 1
    done = gavel_main("generate", *command, "--no-model-check", "--out", tmp_path / "b.jsonl")
    assert done.code == 0, done.err
    assert len((tmp_path / "b.jsonl").read_text().splitlines()) == 3
    assert server.hits == 3 and server.models_asked == 1  # not asked again
    run = gavel_main("run", *command, "--no-model-check", "--out", tmp_path / "run")
    assert run.code == 0, run.err
    assert server.models_asked == 1 and (tmp_path / "run" / "results.json").exists()


def test_no_model_check_applies_to_served_models_only(gavel_main, tmp_path):
    done = gavel_main("generate", "--data", tmp_path / "x.jsonl", "--model", "scene",
                 "--no-model-check", "--out", tmp_path / "p.jsonl")  # fmt: skip
    assert done.code == 2
    assert "--no-model-check applies to openai: models only" in done.err


def test_samples_refused_every_time_get_their_lines_and_reruns_ask_only_them(
    gavel_main, tmp_path, server, fake, api_key
):
    """About one sample in seven always refused with the same 400 (a content filter): every run
    finishes, exit 2, the refusals grouped by the server's words; a rerun asks those only."""
    import zlib

    assert gavel_main("synth", "--n", "40", "--out", tmp_path / "set").code == 0
    words = "Your request was rejected as a result of our safety system."
    refused: set[int] = set()

    def content_filter(body, number):
        sample = zlib.crc32(fake.image_urls(body)[0].encode())
        if sample % 7 == 1:
            refused.add(sample)
            return fake.Fault(status=400, message=words)
        return None

    server.plan = content_filter
    out = tmp_path / "p.jsonl"
    command = ["generate", "--data", tmp_path / "set" / "gavel.jsonl", "--model", "openai:m",
               "--base-url", server.url, "--api-key-env", "GAVEL_TEST_KEY", "--no-cache",
               "--no-progress", "--out", out]  # fmt: skip
    done = gavel_main(*command)
    assert done.code == 2, done.err
    assert 0 < len(refused) < 20 and server.hits == 40
    written = [json.loads(line) for line in out.read_text().splitlines()]
    errors = [line for line in written if line.get("error")]
    assert len(written) == 40 and len(errors) == len(refused)
    assert all(words in line["error"] for line in errors)
    assert f"{len(refused)} samples failed:\n  {len(refused)} × HTTP 400: {words}" in done.err
    assert "Traceback" not in done.err and "check the model name" not in done.err
    again = gavel_main(*command)
    assert again.code == 2, again.err
    assert server.hits == 40 + len(refused)  # only the refused ones asked again
    assert len(out.read_text().splitlines()) == 40
    assert f"{len(refused)} earlier errors asked again" in again.err


def test_the_model_that_answered_is_recorded_and_said_once(
    gavel, gavel_main, tmp_path, server, api_key
):
    """A single-model server answers any name with the one it holds."""
    assert gavel_main("synth", "--n", "5", "--out", tmp_path / "set").code == 0
    server.answer_as = "smolvlm"
    server.served = [{"id": "smolvlm", "owned_by": "llamacpp"}]
    out = tmp_path / "run"
    # In a subprocess: the warning reaches stderr through logging as the process has it.
    done = gavel("run", "--data", tmp_path / "set" / "gavel.jsonl", "--model", "openai:gpt-4o",
                 "--base-url", server.url, "--api-key-env", "GAVEL_TEST_KEY", "--no-cache",
                 "--no-progress", "--out", out, "--bootstrap", "0")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert server.hits == 5
    assert done.stderr.count("answered as 'smolvlm', not the 'gpt-4o' asked") == 1
    manifest = json.loads((out / "predictions.manifest.json").read_text())
    served = {"replies": ["smolvlm"], "listed": ["smolvlm"]}
    assert manifest["adapter"]["served_model"] == served
    results = json.loads((out / "results.json").read_text())
    assert results["manifest"]["adapter"]["served_model"] == served
    assert results["manifest"]["adapter"]["model"] == "gpt-4o"  # the name asked, as before


def test_extra_body_reaches_the_model_and_a_missing_key_is_said_once(
    gavel, gavel_main, tmp_path, server
):
    assert gavel_main("synth", "--n", "3", "--out", tmp_path / "set").code == 0
    server.reply = lambda body, number: (
        '{"score": 4, "reason": "ok"}' if body["messages"][0]["role"] == "system" else "Yes."
    )  # fmt: skip
    # In a subprocess: the warning reaches stderr through logging as the process has it.
    done = gavel("run", "--data", tmp_path / "set" / "gavel.jsonl", "--model", "openai:m",
                 "--base-url", server.url, "--api-key-env", "GAVEL_UNSET_KEY", "--no-cache",
                 "--no-progress", "--out", tmp_path / "run", "--bootstrap", "0",
                 "--extra-body", '{"top_k": 1, "chat_template_kwargs": {"x": false}}',
                 "--judge", "openai:j", "--judge-base-url", server.url,
                 "--judge-api-key-env", "GAVEL_UNSET_KEY", "--no-judge-cache")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("GAVEL_UNSET_KEY is not set") == 1
    bodies = [body for _, body, _ in server.received]
    generated = [b for b in bodies if b["model"] == "m"]
    assert len(generated) == 3
    assert all(b["top_k"] == 1 and b["chat_template_kwargs"] == {"x": False} for b in generated)
    assert all(
        "top_k" not in b for b in bodies if b["model"] == "j"
    )  # the model's, not the judge's
    refused = gavel_main("generate", "--data", tmp_path / "set" / "gavel.jsonl", "--model", "openai:m",
                    "--base-url", server.url, "--out", tmp_path / "p.jsonl",
                    "--extra-body", "[1]")  # fmt: skip
    assert refused.code == 2 and "--extra-body must be a JSON object" in refused.err
