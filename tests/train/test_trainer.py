"""Training the tiny model: the loss falls, the model answers in coordinate tokens through
``hf:``, checkpoints reload exactly, and an interrupted run resumes where it stopped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="training needs torch (gavel-eval[train])")
pytest.importorskip("transformers", reason="training needs transformers (gavel-eval[train])")
pytest.importorskip("accelerate", reason="training needs accelerate (gavel-eval[train])")

from click.testing import CliRunner  # noqa: E402

from gavel.benchmarks.gavel.data import load_samples  # noqa: E402
from gavel.cli.main import cli  # noqa: E402
from gavel.errors import ConfigError  # noqa: E402
from gavel.models.hf import HFModel  # noqa: E402
from gavel.parsing import ImageGeometry, parse_boxes, parse_verdict  # noqa: E402
from gavel.requests import Request  # noqa: E402
from gavel.train import checkpoints as ckpt  # noqa: E402
from gavel.train.coords import COORD_TOKENS, parse_tokens  # noqa: E402
from gavel.train.sft_data import load_examples  # noqa: E402
from gavel.train.template import BUILTIN  # noqa: E402
from gavel.train.trainer import TrainSettings, train  # noqa: E402


def test_loss_falls_clearly(trained):
    _, result = trained
    assert result.finished and result.step == result.total_steps == 160
    first, last = result.losses[0], sum(result.losses[-8:]) / 8
    assert first > 6.5  # about ln(vocabulary): the new tokens start uninformed
    assert last < 0.25 * first
    log = [json.loads(line) for line in (result.out / "train_log.jsonl").read_text().splitlines()]
    assert [entry["step"] for entry in log] == list(range(1, 161))


def test_trained_model_answers_with_parseable_coordinate_tokens(trained, boxed_data: Path):
    settings, _ = trained
    model = HFModel(settings.out, device="cpu", max_new_tokens=48, box_format="coord-tokens")
    assert len(model.tokenizer) > len(COORD_TOKENS)
    assert model.tokenizer.convert_tokens_to_ids("<p-512>") != model.tokenizer.unk_token_id
    samples, _ = load_samples(boxed_data)
    examples = load_examples(boxed_data, BUILTIN["json"]).examples
    for sample, example in list(zip(samples, examples, strict=True))[:6]:
        answer = model.answer(Request(example.id, "gavel", example.prompt,
                                      images=(example.image,)))  # fmt: skip
        assert len(parse_tokens(answer.text)) == 1  # skip_special_tokens kept them
        parsed = parse_boxes(
            answer.text, "coord-tokens", ImageGeometry(sample.width, sample.height)
        )
        assert parsed.status == "ok" and len(parsed.boxes) == 1, answer.text
        assert parse_verdict(answer.text) is True
    info = json.loads((Path(settings.out) / "gavel_train.json").read_text())
    assert info["box_format"] == "coord-tokens" and info["coord_tokens_added"] == 1025
    assert info["steps"] == 160 and info["last_loss"] < info["first_loss"]


def test_gavel_run_evaluates_the_trained_model(trained, boxed_data: Path, tmp_path: Path):
    settings, _ = trained
    subset = tmp_path / "val.jsonl"
    subset.write_text("".join(boxed_data.read_text().splitlines(keepends=True)[:4]))
    out = tmp_path / "run"
    done = CliRunner().invoke(cli, [
        "run", "--data", str(subset), "--image-root", str(boxed_data.parent),
        "--model", f"hf:{settings.out}", "--preset", "gavel-sft", "--device", "cpu",
        "--max-tokens", "48", "--no-progress", "--out", str(out),
    ])  # fmt: skip
    assert done.exit_code == 0, done.output
    result = json.loads((out / "results.json").read_text())
    assert result["metrics"]["boxes"]["status"] == {"ok": 4}
    assert result["metrics"]["boxes"]["formats"] == {"coord-tokens": 4}
    assert result["counts"]["ok"] == 4
    assert result["metrics"]["verification"]["accuracy"] == 100.0
    # The four red squares fill the top-left quadrant: learnt from the caption's colour.
    assert result["metrics"]["grounding"]["A@0.7"] == 100.0


def test_checkpoint_reloads_with_identical_outputs(trained, qwen_dir: Path, boxed_data: Path):
    from safetensors.torch import load_file

    from gavel.train.masking import ChatEncoder, end_token_ids
    from gavel.train.model import add_coord_tokens, load_base

    settings, result = trained
    final = ckpt.latest_checkpoint(Path(settings.out))
    assert final is not None and ckpt.read_state(final)["step"] == result.step
    # The last checkpoint, loaded into a fresh base model with the tokens added ...
    processor, fresh = load_base(str(qwen_dir))
    add_coord_tokens(processor, fresh)
    fresh.load_state_dict(load_file(final / "model.safetensors"), strict=True)
    # ... and the saved model, loaded twice the way hf: loads it, give the same logits.
    saved = [HFModel(settings.out, device="cpu", max_new_tokens=1).model for _ in range(2)]
    example = load_examples(boxed_data, BUILTIN["json"]).examples[3]
    encoder = ChatEncoder(processor, max_length=1024, end_ids=end_token_ids(processor.tokenizer))
    features = dict(encoder.encode(example).features)
    features.pop("labels")
    with torch.no_grad():
        logits = [model.eval()(**features).logits for model in (fresh, *saved)]
    assert torch.equal(logits[1], logits[2])
    assert torch.equal(logits[0], logits[1])


def _resume_settings(out: Path, qwen_dir: Path, data: Path, **changes) -> TrainSettings:
    values = dict(
        data=str(data), base_model=str(qwen_dir), out=str(out), max_steps=6, batch_size=4,
        grad_accum=2, lr=1e-2, warmup_ratio=0.0, save_every=2, progress=False,
    )  # fmt: skip
    return TrainSettings(**(values | changes))


@pytest.mark.filterwarnings("ignore:.*is_gradient_checkpointing.*:FutureWarning")  # peft's call
@pytest.mark.parametrize("lora", [False, True], ids=["full", "lora"])
def test_resume_continues_the_step_count_and_the_curve(lora, tmp_path, qwen_dir, mixed_data):
    # 32 samples, batches of 4, 2 per step: 4 steps per epoch, so step 3 is mid-epoch.
    options = {"lora": lora, "lora_dropout": 0.1} if lora else {}
    whole = train(_resume_settings(tmp_path / "whole", qwen_dir, mixed_data, **options))
    parted = tmp_path / "parted"
    first = train(_resume_settings(parted, qwen_dir, mixed_data, stop_after=3, **options))
    assert not first.finished and first.step == 3
    assert not (parted / "model.safetensors").exists()
    second = train(_resume_settings(parted, qwen_dir, mixed_data, **options))
    assert second.resumed_from == 3 and second.step == 6 and second.finished
    assert first.losses + second.losses == pytest.approx(whole.losses, rel=1e-6)
    log = [json.loads(line) for line in (parted / "train_log.jsonl").read_text().splitlines()]
    assert [entry["step"] for entry in log] == [1, 2, 3, 4, 5, 6]
    assert [step for step, _ in ckpt.complete_checkpoints(parted)] == [4, 6]  # keep 2
    from safetensors.torch import load_file

    a, b = (
        load_file(tmp_path / "whole" / "model.safetensors"),
        load_file(parted / "model.safetensors"),
    )
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert not any("lora" in key for key in b)  # adapters merged: a plain checkpoint
    if lora:
        info = json.loads((parted / "gavel_train.json").read_text())
        assert info["trainable_parameters"] < info["parameters"] / 2


def test_resume_refuses_other_settings(tmp_path, qwen_dir, mixed_data):
    out = tmp_path / "run"
    train(_resume_settings(out, qwen_dir, mixed_data, max_steps=1))
    with pytest.raises(ConfigError, match="seed"):
        train(_resume_settings(out, qwen_dir, mixed_data, max_steps=2, seed=1))
    again = train(_resume_settings(out, qwen_dir, mixed_data, max_steps=1, seed=1,
                                   resume=False))  # fmt: skip
    assert again.resumed_from == 0 and again.finished
