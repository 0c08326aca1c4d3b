"""``gavel score --predictions LOG.eval``: what a damaged or missing log gives, and a sample
inspect could not answer."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile

import pytest


def test_missing_log_is_one_clear_message(saved, gavel_main, tmp_path):
    code, text = gavel_main("score", "--data", saved["gavel"].data, "--predictions",
                            tmp_path / "none.eval")  # fmt: skip
    assert code == 2
    assert "none.eval: file not found" in text and "Traceback" not in text


@pytest.mark.parametrize("header", ["{not json", '{"x": 1}'], ids=["not-json", "not-a-log"])
def test_damaged_log_is_one_clear_message(saved, gavel_main, tmp_path, header):
    damaged = tmp_path / "damaged.eval"
    with zipfile.ZipFile(damaged, "w") as archive:
        archive.writestr("header.json", header)
    code, text = gavel_main("score", "--data", saved["gavel"].data, "--predictions", damaged,
                            "--out", tmp_path / "r.json")  # fmt: skip
    assert code == 2 and "Traceback" not in text
    try:
        import inspect_ai  # noqa: F401
    except ImportError:
        assert "needs inspect_ai" in text and "gavel-eval[inspect]" in text
    else:
        assert "damaged.eval: not a readable inspect log" in text
        assert len(text.strip().splitlines()) == 1  # a validation error's lines joined
        assert "For further information" not in text
    assert not (tmp_path / "r.json").exists()


def test_a_sample_inspect_could_not_answer_is_a_model_error(saved, gavel_main, tmp_path):
    pytest.importorskip("inspect_ai", reason="the inspect extra is not installed")
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    answers = saved["detailverify"]
    refused = sorted(answers.by_prompt)[0]

    def reply(messages, tools, tool_choice, config):
        content = messages[-1].content
        prompt = "".join(part.text for part in content if part.type == "text")
        if prompt == refused:
            raise RuntimeError("the model went away")
        output = ModelOutput.from_content("mockllm/model", answers.by_prompt[prompt])
        output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
        return output

    (log,) = inspect_eval(
        "gavel/detailverify",
        task_args={"data": str(answers.data)},
        model=get_model("mockllm/model", custom_outputs=reply),
        log_dir=str(tmp_path / "logs"),
        display="none",
        fail_on_error=False,
        retry_on_error=0,
    )
    (scores,) = log.results.scores
    assert scores.metrics["counts.missing"].value == 1  # the task never saw an answer
    code, text = gavel_main("score", "--benchmark", "detailverify", "--data", answers.data,
                            "--predictions", log.location, "--out", tmp_path / "r.json",
                            "--bootstrap", 0)  # fmt: skip
    assert code == 0, text
    counts = json.loads((tmp_path / "r.json").read_text())["counts"]
    assert counts["model_error"] == 1 and counts["missing"] == 0
    scores_file = (tmp_path / "r.scores.jsonl").read_text().splitlines()
    errors = [json.loads(line) for line in scores_file if '"model_error"' in line]
    assert len(errors) == 1 and "the model went away" in (errors[0].get("detail") or "")


def _mockllm(answers, later=None):
    """inspect's mockllm model giving each message its saved answer; with ``later``, the
    second and later calls for one message get that answer instead (another epoch)."""
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    calls: dict[str, int] = {}

    def reply(messages, tools, tool_choice, config):
        content = messages[-1].content
        prompt = "".join(part.text for part in content if part.type == "text")
        images = [part.image for part in content if part.type == "image"]
        key = prompt + "".join(images[:1])
        calls[key] = calls.get(key, 0) + 1
        answer = answers.answer(prompt, images)
        if later is not None and calls[key] > 1:
            answer = later
        output = ModelOutput.from_content("mockllm/model", answer)
        output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
        return output

    return get_model("mockllm/model", custom_outputs=reply, memoize=False)


def _inspect_log(answers, model, tmp_path, **eval_args):
    from inspect_ai import eval as inspect_eval

    judge = {"judge": "none"} if answers.benchmark == "gavel" else {}  # gavel score: no --judge
    (log,) = inspect_eval(
        f"gavel/{answers.benchmark}",
        task_args={"data": str(answers.data), **judge},
        model=model,
        log_dir=str(tmp_path / "logs"),
        display="none",
        **eval_args,
    )
    assert log.status == "success", log.error
    return log


def test_limited_log_is_a_predictions_file_and_sample_ids_score_it_as_the_task(
    saved, scored_by_gavel, tmp_path
):
    """The log of ``inspect eval --limit 3`` scored as it is counts the samples never asked
    as missing; ``--sample-id @ids`` (the ids from ``inspect log dump``) or ``--limit 3`` gives
    the task's own numbers."""
    pytest.importorskip("inspect_ai", reason="the inspect extra is not installed")
    answers = saved["gavel"]
    log = _inspect_log(answers, _mockllm(answers), tmp_path, limit=3)
    (task,) = log.results.scores
    metrics = {name: item.value for name, item in task.metrics.items()}
    whole = scored_by_gavel("gavel", answers.data, log.location, tmp_path / "w.json")
    assert whole["counts.total"] == 9 and whole["counts.missing"] == 6
    assert "selection.chosen" not in whole
    dumped = subprocess.run(
        [sys.executable, "-m", "inspect_ai", "log", "dump", log.location],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    ids = tmp_path / "ids.txt"
    ids.write_text("".join(f"{s['id']}\n" for s in json.loads(dumped.stdout)["samples"]))
    by_id = scored_by_gavel("gavel", answers.data, log.location, tmp_path / "i.json",
                            "--sample-id", f"@{ids}")  # fmt: skip
    limited = scored_by_gavel("gavel", answers.data, log.location, tmp_path / "l.json",
                              "--limit", 3)  # fmt: skip
    for scored in (by_id, limited):
        assert set(scored) == set(metrics)
        for name, value in scored.items():
            assert metrics[name] == pytest.approx(value, abs=1e-9), name
    assert by_id["selection.chosen"] == 3 and by_id["counts.missing"] == 0


def test_a_log_of_several_epochs_is_scored_one_epoch_at_a_time(
    saved, scored_by_gavel, gavel_main, tmp_path
):
    """``inspect eval --epochs 2``: without ``--epoch`` one message says what to do;
    ``--epoch K`` scores exactly that epoch's answers (each compared with a predictions file
    the test writes from the log's samples of that epoch)."""
    pytest.importorskip("inspect_ai", reason="the inspect extra is not installed")
    answers = saved["detailverify"]
    model = _mockllm(answers, later="The description looks fine to me.")
    log = _inspect_log(answers, model, tmp_path, epochs=2)
    data = answers.data
    code, text = gavel_main("score", "--benchmark", "detailverify", "--data", data,
                            "--predictions", log.location)  # fmt: skip
    assert code == 2 and "Traceback" not in text
    assert "the log has 2 epochs (inspect eval --epochs 2)" in text and "--epoch N" in text
    by_epoch = {}
    for epoch in (1, 2):
        own = tmp_path / f"epoch{epoch}.jsonl"
        own.write_text("".join(
            json.dumps({"id": str(s.id), "response": s.output.completion}) + "\n"
            for s in log.samples if s.epoch == epoch
        ))  # fmt: skip
        expected = scored_by_gavel("detailverify", data, own, tmp_path / f"e{epoch}.json")
        got = scored_by_gavel("detailverify", data, log.location, tmp_path / f"l{epoch}.json",
                              "--epoch", epoch)  # fmt: skip
        assert got == pytest.approx(expected, abs=1e-9)
        result = json.loads((tmp_path / f"l{epoch}.json").read_text())
        assert result["manifest"]["settings"]["inspect_epoch"] == epoch
        by_epoch[epoch] = got
    assert by_epoch[1] != by_epoch[2]  # the epochs' answers differ, and so do their numbers
    # The task's metrics: each epoch scored as a run (= gavel score --epoch K), then the mean.
    (task,) = log.results.scores
    assert task.reducer == "gavel_epochs"
    metrics = {name: item.value for name, item in task.metrics.items()}
    assert metrics.pop("epochs") == 2
    assert set(metrics) == set(by_epoch[1]) & set(by_epoch[2])  # a number each epoch has
    for name, value in metrics.items():
        assert value == pytest.approx((by_epoch[1][name] + by_epoch[2][name]) / 2), name
    # Each sample's values are the mean over its epochs, as inspect's default reducer gives.
    (reduction,) = log.reductions
    first = {s.id: s.scores["gavel_scorer"].value for s in log.samples if s.epoch == 1}
    second = {s.id: s.scores["gavel_scorer"].value for s in log.samples if s.epoch == 2}
    for reduced in reduction.samples:
        assert (
            reduced.value["ok"]
            == (first[reduced.sample_id]["ok"] + second[reduced.sample_id]["ok"]) / 2
        )
    code, text = gavel_main("score", "--benchmark", "detailverify", "--data", data,
                            "--predictions", log.location, "--epoch", 3)  # fmt: skip
    assert code == 2 and "--epoch 3: the log has 2 epoch(s)" in text
    code, text = gavel_main("score", "--benchmark", "detailverify", "--data", data,
                            "--predictions", answers.predictions, "--epoch", 1)  # fmt: skip
    assert code == 2 and "--epoch chooses an epoch of an inspect .eval log" in text


def test_another_epochs_reducer_is_refused_with_the_one_that_applies(saved, tmp_path):
    """``--epochs 2 --epochs-reducer max`` cannot give gavel's metrics (a maximum of each
    sample's values is not a run's answers): the task's metrics refuse it, naming the
    reducer that applies, instead of reporting the first epoch's numbers as the reduced ones."""
    pytest.importorskip("inspect_ai", reason="the inspect extra is not installed")
    from inspect_ai import Epochs
    from inspect_ai import eval as inspect_eval

    answers = saved["detailverify"]
    model = _mockllm(answers, later="The description looks fine to me.")
    (log,) = inspect_eval("gavel/detailverify", task_args={"data": str(answers.data)},
                          model=model, log_dir=str(tmp_path / "logs"), display="none",
                          epochs=Epochs(2, "max"), log_buffer=1)  # fmt: skip
    assert log.status == "error"
    assert "--epochs-reducer out (the tasks' reducer, gavel_epochs" in log.error.message
    # The answers inspect wrote are kept for ``gavel score --epoch K`` (how many it has
    # written when the metrics refuse depends on its log buffer: one at a time here).
    assert len(log.samples) == 2 * len(answers.by_message)


def test_a_log_inflating_beyond_the_limit_is_refused_before_it_is_read(
    saved, gavel_main, tmp_path, monkeypatch
):
    pytest.importorskip("inspect_ai", reason="the inspect extra is not installed")
    bomb = tmp_path / "bomb.eval"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", "{}")
        archive.writestr("samples/1_epoch_1.json", bytes(8 << 20))  # 8 MiB of zeros
    assert bomb.stat().st_size < 64 << 10
    monkeypatch.setenv("GAVEL_MAX_LOG_MIB", "4")
    code, text = gavel_main("score", "--data", saved["gavel"].data, "--predictions", bomb,
                            "--out", tmp_path / "r.json")  # fmt: skip
    assert code == 2, text
    assert text.strip() == (
        f"error: {bomb}: inflates to more than 4 MiB (set GAVEL_MAX_LOG_MIB to read a larger log)"
    )
    assert not (tmp_path / "r.json").exists()
    monkeypatch.setenv("GAVEL_MAX_LOG_MIB", "lots")
    code, text = gavel_main("score", "--data", saved["gavel"].data, "--predictions", bomb)
    assert code == 2 and "GAVEL_MAX_LOG_MIB='lots': expected a whole number of MiB" in text


def test_a_lone_surrogate_in_an_answer_is_one_error_naming_the_sample(saved, gavel_main,
                                                                      tmp_path):  # fmt: skip
    pytest.importorskip("inspect_ai", reason="the inspect extra is not installed")
    answers = saved["detailverify"]
    log = _inspect_log(answers, _mockllm(answers), tmp_path, limit=2)
    spoiled = tmp_path / "spoiled.eval"
    with zipfile.ZipFile(log.location) as source, zipfile.ZipFile(spoiled, "w") as target:
        for member in source.infolist():
            data = source.read(member)
            if member.filename.startswith("samples/"):  # every answer starts with one
                data = data.replace(b'"response":"', b'"response":"\\udfff', 1)
                data = data.replace(b'"completion":"', b'"completion":"\\udfff', 1)
            target.writestr(member, data)
    code, text = gavel_main("score", "--benchmark", "detailverify", "--data", answers.data,
                            "--predictions", spoiled, "--out", tmp_path / "r.json")  # fmt: skip
    assert code == 2, text
    assert text.startswith(f"error: {spoiled}, field 'response': sample 1 (") and (
        "lone surrogate (not Unicode text)" in text
    ), text
    assert "internal error" not in text and len(text.strip().splitlines()) == 1
