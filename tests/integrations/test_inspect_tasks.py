"""gavel's benchmarks run through inspect_ai: inspect's mockllm model and inspect's openai
provider on a real loopback server, each log's metrics compared one by one with ``gavel score``
on the same answers (the saved answers file, and the log itself read as predictions)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("inspect_ai", reason="the inspect extra is not installed")

from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

BENCHMARKS = ("gavel", "detailverify", "videohallucer")
#: Samples in each saved data set (VideoHallucer: pairs), as conftest.SIZES.
SIZES = {"gavel": 9, "detailverify": 6, "videohallucer": 3}
HEADLINE = {
    "gavel": "verification.accuracy",
    "detailverify": "token.f1",
    "videohallucer": "overall",
}


def _asked(messages) -> tuple[str, list[str]]:
    """The prompt and image URLs of inspect's last message."""
    content = messages[-1].content
    if isinstance(content, str):
        return content, []
    text = "".join(part.text for part in content if part.type == "text")
    return text, [part.image for part in content if part.type == "image"]


def _log_metrics(log) -> dict[str, float]:
    (scores,) = log.results.scores
    return {name: item.value for name, item in scores.metrics.items()}


def _assert_same(got: dict[str, float], expected: dict[str, float]) -> None:
    assert set(got) == set(expected)
    for name, value in expected.items():
        assert got[name] == pytest.approx(value, abs=1e-9), name


def _inspect_run(saved, model, tmp_path, eval_args=None, **task_args):
    """An inspect run of the saved data (GAVEL: its explanations not judged unless
    ``judge=`` is given; the judge's tests compare them with ``gavel score --judge``)."""
    if saved.benchmark == "gavel":
        task_args.setdefault("judge", "none")
    (log,) = inspect_eval(
        f"gavel/{saved.benchmark}",
        task_args={"data": str(saved.data), **task_args},
        model=model,
        log_dir=str(tmp_path / "logs"),
        display="none",
        **(eval_args or {}),
    )
    assert log.status == "success", log.error
    return log


def _mockllm(answers):
    """inspect's mockllm model answering each message with its saved answer."""

    def reply(messages, tools, tool_choice, config):
        output = ModelOutput.from_content("mockllm/model", answers.answer(*_asked(messages)))
        # Given usage spares mockllm counting tokens (tiktoken would download its table).
        output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
        return output

    return get_model("mockllm/model", custom_outputs=reply, memoize=False)


@pytest.fixture(scope="module")
def mockllm_log(saved, tmp_path_factory):
    """The log of one mockllm run of a benchmark's saved data, as :func:`_inspect_run` makes
    it (GAVEL: explanations not judged), run once for the tests that only read it."""
    logs = {}

    def run(benchmark: str):
        if benchmark not in logs:
            answers = saved[benchmark]
            folder = tmp_path_factory.mktemp(f"mockllm-{benchmark}")
            logs[benchmark] = _inspect_run(answers, _mockllm(answers), folder)
        return logs[benchmark]

    return run


@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_mockllm_run_scores_as_gavel_score(
    benchmark, saved, scored_by_gavel, mockllm_log, tmp_path
):
    answers = saved[benchmark]
    log = mockllm_log(benchmark)
    metrics = _log_metrics(log)
    data = saved[benchmark].data
    from_answers = scored_by_gavel(
        benchmark, data, saved[benchmark].predictions, tmp_path / "a.json"
    )
    from_log = scored_by_gavel(benchmark, data, log.location, tmp_path / "l.json")
    _assert_same(metrics, from_answers)
    _assert_same(from_log, from_answers)
    total = len(answers.by_message)
    assert metrics["counts.total"] == total
    assert 0 < metrics[HEADLINE[benchmark]] < 100  # the spoiled answers count
    # Every sample keeps gavel's per-sample score and its answer verbatim.
    saved_answers = {
        line["id"]: line["response"]
        for line in map(json.loads, answers.predictions.read_text().splitlines())
    }
    for sample in log.samples:
        (score,) = sample.scores.values()
        assert score.answer == saved_answers[sample.id]
        assert isinstance(score.value, dict) and "ok" in score.value


def _generate_and_inspect(benchmark, answers, server, fake, gavel_main, tmp_path, monkeypatch,
                          gavel_flags=(), eval_args=None, **task_args):  # fmt: skip
    """``gavel generate`` then inspect on the loopback server: the bodies each sent (in any
    order), gavel's predictions file and inspect's log. A message the saved answers do not
    know (another preset's prompt or frames) is answered "Yes."."""
    server.reply = lambda body, number: answers.answer(
        fake.prompt_text(body), fake.image_urls(body), "Yes."
    )
    generated = tmp_path / "generated.jsonl"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-loopback")
    code, text = gavel_main("generate", "--benchmark", benchmark, "--data", answers.data,
                            "--model", "openai:gpt-4o", "--base-url", server.url, "--out",
                            generated, "--no-progress", "--no-cache", *gavel_flags)  # fmt: skip
    assert code == 0, text
    sent_by_gavel = _bodies(server)
    server.received.clear()
    # A fresh model for this server (inspect keeps models by name; the command-line test below
    # gives the server through OPENAI_BASE_URL).
    model = get_model("openai/gpt-4o", base_url=server.url, memoize=False)
    log = _inspect_run(answers, model, tmp_path, eval_args, **task_args)
    return sent_by_gavel, _bodies(server), generated, log


@pytest.fixture(scope="module")
def plain_asked() -> dict[str, list[str]]:
    """The bodies inspect sends on the saved data without a preset, by benchmark, as
    :func:`test_openai_provider_sends_what_gavel_generate_sends` leaves them (they name no
    server or folder: the preset tests compare with them instead of asking again; run alone,
    a preset test asks itself)."""
    return {}


@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_openai_provider_sends_what_gavel_generate_sends(
    benchmark, saved, scored_by_gavel, server, fake, gavel_main, tmp_path, monkeypatch,
    plain_asked,
):  # fmt: skip
    answers = saved[benchmark]
    by_gavel, by_inspect, generated, log = _generate_and_inspect(
        benchmark, answers, server, fake, gavel_main, tmp_path, monkeypatch
    )
    plain_asked.setdefault(benchmark, by_inspect)
    # Same prompts, same pixels, same frames, and gavel's max_tokens and temperature.
    assert by_inspect == by_gavel
    assert _generation(by_inspect) == {(1024, 0.0)}
    metrics = _log_metrics(log)
    data = answers.data
    _assert_same(metrics, scored_by_gavel(benchmark, data, generated, tmp_path / "g.json"))
    _assert_same(metrics, scored_by_gavel(benchmark, data, log.location, tmp_path / "l.json"))


@pytest.mark.parametrize(
    ("benchmark", "preset"),
    [("gavel", "qwen3-vl"), ("gavel", "gpt-4.1"), ("videohallucer", "gemini")],
)
def test_preset_asks_what_gavel_generate_preset_asks(
    benchmark, preset, saved, server, fake, gavel_main, tmp_path, monkeypatch, plain_asked
):
    """``-T preset=NAME`` is ``gavel generate --preset NAME``: the box convention the prompt
    asks for, the image size and the frames of a video are the preset's."""
    answers = saved[benchmark]
    plain = plain_asked.get(benchmark)
    if preset == "gpt-4.1":  # images larger than its 768 px long side, so it resizes them
        answers = _doubled(answers, tmp_path / "large")
        plain = None  # data of its own
    if plain is None:
        plain = _generate_and_inspect(
            benchmark, answers, server, fake, gavel_main, tmp_path / "plain", monkeypatch
        )[1]
        server.received.clear()
    by_gavel, by_inspect, _, log = _generate_and_inspect(
        benchmark, answers, server, fake, gavel_main, tmp_path, monkeypatch,
        ("--preset", preset), preset=preset,
    )  # fmt: skip
    assert by_inspect == by_gavel
    assert by_inspect != plain  # the preset changed what is asked
    predictions = [sample.scores["gavel_scorer"].metadata["gavel_prediction"]
                   for sample in log.samples]  # fmt: skip
    if benchmark == "gavel":
        from gavel.models.presets import get_preset

        assert {line["box_format"] for line in predictions} == {get_preset(preset).box_format}


def _doubled(answers, folder):
    """A copy of GAVEL data with every image (and its size and boxes) twice as large."""
    from PIL import Image

    lines = [json.loads(line) for line in answers.data.read_text().splitlines()]
    for line in lines:
        image = Image.open(answers.data.parent / line["image"])
        target = folder / line["image"]
        target.parent.mkdir(parents=True, exist_ok=True)
        image.resize((image.width * 2, image.height * 2)).save(target)
        line |= {"width": image.width * 2, "height": image.height * 2,
                 "boxes": [[2 * v for v in box] for box in line["boxes"]]}  # fmt: skip
    data = folder / "gavel.jsonl"
    data.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return dataclasses.replace(answers, data=data)


def test_inspect_generation_flags_win(saved, server, fake, gavel_main, tmp_path, monkeypatch):
    """inspect's own ``--max-tokens`` and ``--temperature`` replace gavel's defaults, as
    ``gavel generate --max-tokens --temperature`` do."""
    answers = saved["detailverify"]
    by_gavel, by_inspect, _, _ = _generate_and_inspect(
        "detailverify", answers, server, fake, gavel_main, tmp_path, monkeypatch,
        ("--max-tokens", 77, "--temperature", 0.5), {"max_tokens": 77, "temperature": 0.5},
    )  # fmt: skip
    assert by_inspect == by_gavel
    assert _generation(by_inspect) == {(77, 0.5)}


def _samples_of(benchmark: str, log) -> list[str]:
    """gavel's ids of the samples a log answered, in its order (a VideoHallucer question
    ``CATEGORY/INDEX/SIDE`` belongs to the pair ``CATEGORY/INDEX``)."""
    ids = [str(sample.id) for sample in log.samples]
    if benchmark == "videohallucer":
        ids = [sample_id.rsplit("/", 1)[0] for sample_id in ids]
    return list(dict.fromkeys(ids))


@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_limited_run_scores_as_gavel_score_limit(benchmark, saved, scored_by_gavel, tmp_path):
    """``inspect eval --limit 3`` (VideoHallucer: ``--limit 4``, two pairs of questions) gives
    the numbers of ``gavel score --limit 3`` (``--limit 2``) and of ``--sample-id`` on the same
    answers, not those of the whole data with the samples never asked counted as missing."""
    answers = saved[benchmark]
    limit = 2 if benchmark == "videohallucer" else 3
    questions = 2 * limit if benchmark == "videohallucer" else limit
    log = _inspect_run(answers, _mockllm(answers), tmp_path, {"limit": questions})
    metrics = _log_metrics(log)
    assert len(log.samples) == questions
    chosen = _samples_of(benchmark, log)
    assert len(chosen) == limit
    ids = tmp_path / "ids.txt"
    ids.write_text("".join(sample_id + "\n" for sample_id in chosen))
    limited = scored_by_gavel(
        benchmark, answers.data, answers.predictions, tmp_path / "a.json", "--limit", limit
    )
    _assert_same(metrics, limited)
    by_id = scored_by_gavel(
        benchmark, answers.data, answers.predictions, tmp_path / "i.json", "--sample-id", f"@{ids}"
    )
    _assert_same(metrics, by_id)
    _assert_same(metrics, scored_by_gavel(benchmark, answers.data, log.location,
                                          tmp_path / "l.json", "--limit", limit))  # fmt: skip
    assert metrics["selection.chosen"] == limit and metrics["selection.of"] == SIZES[benchmark]
    assert metrics["counts.total"] == questions and metrics["counts.missing"] == 0


@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_sample_id_run_scores_the_samples_asked(benchmark, saved, scored_by_gavel, tmp_path):
    """inspect's ``--sample-id`` (its patterns name a VideoHallucer pair's two questions)
    scores as ``gavel score --sample-id`` the same samples."""
    answers = saved[benchmark]
    ids = [json.loads(line)["id"] for line in answers.predictions.read_text().splitlines()]
    if benchmark == "videohallucer":
        wanted = list(dict.fromkeys(i.rsplit("/", 1)[0] for i in ids))[1:]
        patterns = [f"{pair}/*" for pair in wanted]
    else:
        wanted = patterns = ids[1::3]
    log = _inspect_run(answers, _mockllm(answers), tmp_path, {"sample_id": patterns})
    assert sorted(_samples_of(benchmark, log)) == sorted(wanted)
    flags = [flag for pair in wanted for flag in ("--sample-id", pair)]
    expected = scored_by_gavel(
        benchmark, answers.data, answers.predictions, tmp_path / "a.json", *flags
    )
    _assert_same(_log_metrics(log), expected)
    assert expected["selection.chosen"] == len(wanted) < SIZES[benchmark]


def test_half_a_pair_brings_in_the_pair(saved, scored_by_gavel, tmp_path):
    """``--limit 3`` asks VideoHallucer's first pair and the basic question of the second: a
    pair is one sample, so both pairs are scored, the question never asked as missing."""
    answers = saved["videohallucer"]
    log = _inspect_run(answers, _mockllm(answers), tmp_path, {"limit": 3})
    metrics = _log_metrics(log)
    assert metrics["selection.chosen"] == 2 and metrics["counts.total"] == 4
    assert metrics["counts.missing"] == 1
    pairs = [flag for pair in _samples_of("videohallucer", log) for flag in ("--sample-id", pair)]
    from_log = scored_by_gavel("videohallucer", answers.data, log.location, tmp_path / "l.json",
                               *pairs)  # fmt: skip
    _assert_same(metrics, from_log)


def _generation(bodies: list[str]) -> set[tuple]:
    """The ``(max_tokens, temperature)`` pairs the bodies asked for."""
    return {(body["max_tokens"], body["temperature"]) for body in map(json.loads, bodies)}


def _bodies(server) -> list[str]:
    """The request bodies received, in any order, as canonical JSON (inspect adds OpenAI's
    optional image ``detail``, ``auto``, which gavel leaves out: it is dropped)."""
    bodies = []
    for _, body, _ in server.received:
        body = json.loads(json.dumps(body))
        for message in body["messages"]:
            if isinstance(message["content"], list):
                for part in message["content"]:
                    if part["type"] == "image_url":
                        assert part["image_url"].pop("detail", "auto") == "auto"
        bodies.append(json.dumps(body, sort_keys=True))
    return sorted(bodies)


def test_inspect_command_finds_the_task_through_the_entry_point(
    saved, server, fake, gavel_main, tmp_path
):
    """``inspect eval gavel/gavel -T data=... --limit 3`` as a user types it, then
    ``gavel score`` on the .eval log it wrote: as it is (the samples not asked are missing),
    and with ``--limit 3``, which gives the task's own numbers."""
    answers = saved["gavel"]
    server.reply = lambda body, number: answers.answer(
        fake.prompt_text(body), fake.image_urls(body)
    )
    env = dict(os.environ, OPENAI_BASE_URL=server.url, OPENAI_API_KEY="sk-test-loopback")
    done = subprocess.run(
        [sys.executable, "-m", "inspect_ai", "eval", "gavel/gavel",
         "-T", f"data={saved['gavel'].data}",
         "--model", "openai/gpt-4o", "--log-dir", str(tmp_path / "logs"),
         "--display", "plain", "--limit", "3"],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (log_file,) = (tmp_path / "logs").glob("*.eval")
    scored = gavel_main("score", "--data", saved["gavel"].data, "--predictions", log_file,
                        "--out", tmp_path / "r.json", "--bootstrap", "0")  # fmt: skip
    assert scored.code == 0, scored.err
    assert "gpt-4o" in scored.out  # the row is named after the log's model
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["counts"]["total"] == len(answers.by_message)
    assert result["counts"]["missing"] == len(answers.by_message) - 3
    assert result["manifest"]["predictions_file"] == str(log_file)
    limited = gavel_main("score", "--data", saved["gavel"].data, "--predictions", log_file,
                         "--limit", "3", "--bootstrap", "0")  # fmt: skip
    assert limited.code == 0, limited.err
    assert f"selection: 3 of {len(answers.by_message)} samples scored" in limited.out
    from inspect_ai.log import read_eval_log

    metrics = _log_metrics(read_eval_log(str(log_file)))
    assert metrics["selection.chosen"] == 3 and metrics["counts.total"] == 3


def test_parquet_and_hub_data_run_as_the_jsonl(saved, scored_by_gavel, gavel_parquet, tmp_path):
    """``-T data=`` takes what ``gavel score --data`` takes: a Parquet folder (as ``gavel data
    convert`` writes it), one Parquet file, and ``hf:OWNER/NAME`` (a Hugging Face cache made
    here, offline); each run scores as the JSONL run and as ``gavel score`` on that data."""
    answers = saved["gavel"]
    expected = _log_metrics(_inspect_run(answers, _mockllm(answers), tmp_path / "jsonl"))
    repo, hub = gavel_parquet
    (parquet,) = repo.glob("data/*.parquet")
    for name, data in {"folder": repo, "file": parquet, "hub": hub}.items():
        log = _inspect_run(answers, _mockllm(answers), tmp_path / name, data=str(data))
        assert log.eval.dataset.location == str(data)
        metrics = _log_metrics(log)
        _assert_same(metrics, expected)
        by_gavel = scored_by_gavel("gavel", data, answers.predictions, tmp_path / f"{name}.json")
        _assert_same(metrics, by_gavel)


def _judge_replies(server, answers, fake):
    """The server answers the model's questions with the saved answers and the judge's with a
    score drawn from the prompt; every fourth prompt is first answered without a score, so
    that a re-ask is needed (gavel's judge re-asks; so must the grader)."""
    from gavel.prompts.judge import SYSTEM_PROMPT

    seen: set[str] = set()

    def reply(body, number):
        if body["messages"][0]["content"] != SYSTEM_PROMPT:
            return answers.answer(fake.prompt_text(body), fake.image_urls(body))
        prompt = body["messages"][1]["content"]
        digest = int(hashlib.sha256(prompt.encode()).hexdigest(), 16)
        if digest % 4 == 0 and prompt not in seen:
            seen.add(prompt)
            return "I would rather not say."
        return json.dumps({"score": digest % 5 + 1, "reason": f"reason {digest % 7}"})

    return reply


def _without_judge_description(metrics: dict[str, float]) -> dict[str, float]:
    return {name: v for name, v in metrics.items() if not name.startswith("explanation.judge.")}


def test_grader_role_judges_as_gavel_score_judge(
    saved, scored_by_gavel, server, fake, gavel_main, tmp_path, monkeypatch
):
    """``--model-role grader=openai/...`` runs the paper's judge protocol: the grader is asked
    what ``gavel score --judge openai:...`` asks (the same bodies), and the explanation
    metrics in the log equal gavel's on the same answers."""
    answers = saved["gavel"]
    server.reply = _judge_replies(server, answers, fake)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-loopback")
    grader = get_model("openai/gpt-4o", base_url=server.url, memoize=False,
                       responses_api=False)  # fmt: skip
    log = _inspect_run(answers, _mockllm(answers), tmp_path, {"model_roles": {"grader": grader}},
                       judge="auto")  # fmt: skip
    asked_by_inspect = _bodies(server)
    server.received.clear()
    server.reply = _judge_replies(server, answers, fake)  # the first replies without a score again
    expected = scored_by_gavel("gavel", answers.data, answers.predictions, tmp_path / "j.json",
                               "--judge", "openai:gpt-4o", "--judge-base-url", server.url,
                               "--no-judge-cache", "--no-judge-model-check")  # fmt: skip
    assert _bodies(server) == asked_by_inspect
    metrics = _log_metrics(log)
    _assert_same(metrics, _without_judge_description(expected))
    assert metrics["explanation.counts.ok"] > 0 and metrics["counts.judge_error"] == 0
    assert 20 <= metrics["explanation.Avg"] <= 100
    # The log's own answers, scored by gavel with the judge, agree too.
    from_log = scored_by_gavel("gavel", answers.data, log.location, tmp_path / "l.json",
                               "--judge", "openai:gpt-4o", "--judge-base-url", server.url,
                               "--no-judge-cache", "--no-judge-model-check")  # fmt: skip
    _assert_same(metrics, _without_judge_description(from_log))
    # replies without a score were re-asked, shown the reply and the repair instruction
    assert any('"role": "assistant"' in body for body in asked_by_inspect)
    judged = [sample.scores["gavel_scorer"].value["judge_score"] for sample in log.samples]
    assert all(1 <= value <= 5 for value in judged)


def test_offline_judge_without_a_grader(saved, scored_by_gavel, tmp_path):
    """No grader role: the offline judge scores, as ``gavel score --judge offline``."""
    pytest.importorskip("onnxruntime", reason="the offline judge needs the judge extra")
    answers = saved["gavel"]
    log = _inspect_run(answers, _mockllm(answers), tmp_path, judge="auto")
    expected = scored_by_gavel("gavel", answers.data, answers.predictions, tmp_path / "o.json",
                               "--judge", "offline")  # fmt: skip
    metrics = _log_metrics(log)
    _assert_same(metrics, _without_judge_description(expected))
    assert "explanation.Avg" in metrics


def test_judge_none_and_a_bad_mode(saved, mockllm_log, tmp_path):
    answers = saved["gavel"]
    metrics = _log_metrics(mockllm_log("gavel"))  # run with judge="none"
    assert not any(name.startswith("explanation.") for name in metrics)
    with pytest.raises(Exception, match="choose one of auto, grader, offline, none"):
        _inspect_run(answers, _mockllm(answers), tmp_path, judge="llm")


def test_no_log_images_keeps_the_log_small_and_scorable(
    saved, scored_by_gavel, mockllm_log, tmp_path
):
    """inspect's ``--no-log-images`` leaves the images out of the log; the answers (kept in
    each score's metadata) still score as the full log does."""
    answers = saved["gavel"]
    full = mockllm_log("gavel")
    small = _inspect_run(answers, _mockllm(answers), tmp_path / "small", {"log_images": False})
    full_size, small_size = (os.path.getsize(log.location) for log in (full, small))
    print(f"log of {len(answers.by_message)} samples: {full_size:,} B with images, "
          f"{small_size:,} B with --no-log-images")  # fmt: skip
    assert small_size < full_size / 2
    _assert_same(
        scored_by_gavel("gavel", answers.data, small.location, tmp_path / "s.json"),
        scored_by_gavel("gavel", answers.data, full.location, tmp_path / "f.json"),
    )
