"""``gavel score --predictions LOG.eval``: what a damaged or missing log gives, and a sample
inspect could not answer."""

from __future__ import annotations

import json
import zipfile

import pytest


def test_missing_log_is_one_clear_message(saved, gavel_main, tmp_path):
    code, text = gavel_main("score", "--data", saved["gavel"].data, "--predictions",
                            tmp_path / "none.eval")  # fmt: skip
    assert code == 2
    assert "none.eval: file not found" in text and "Traceback" not in text


def test_damaged_log_is_one_clear_message(saved, gavel_main, tmp_path):
    damaged = tmp_path / "damaged.eval"
    with zipfile.ZipFile(damaged, "w") as archive:
        archive.writestr("header.json", "{not json")
    code, text = gavel_main("score", "--data", saved["gavel"].data, "--predictions", damaged,
                            "--out", tmp_path / "r.json")  # fmt: skip
    assert code == 2 and "Traceback" not in text
    try:
        import inspect_ai  # noqa: F401
    except ImportError:
        assert "needs inspect_ai" in text and "gavel-eval[inspect]" in text
    else:
        assert "damaged.eval: not a readable inspect log" in text
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
