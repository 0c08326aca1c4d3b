"""``gavel train sft|preview``: the paper's supervised baseline (docs/train.md)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from gavel.api import training
from gavel.api.training import BOUNDS, BUILTIN, CHOICES, TrainSettings
from gavel.cli.options import bound_type, data_path, folder_path

_TEMPLATE_HELP = (
    f"Assistant response template: {', '.join(BUILTIN)}, or a JSON file (docs/train.md). "
    "json is the JSON answer the gavel_v1 prompt asks for."
)


def _number(name: str) -> click.ParamType:
    """The click type of a number setting, made from its bound in :class:`TrainSettings`."""
    return bound_type(BOUNDS[name])


def _choice(name: str) -> click.Choice:
    return click.Choice(list(CHOICES[name]))


@click.group()
def train() -> None:
    """Train the GAVEL supervised baseline (coordinate tokens, paper appendix A.2).

    \b
    One GPU or CPU:   gavel train sft --data train.jsonl --base-model DIR --out runs/sft
    Several GPUs:     accelerate launch --config_file examples/train/ddp.yaml \\
                        -m gavel train sft --data train.jsonl --base-model DIR --out runs/sft
    Evaluate:         gavel run --data test.jsonl --model hf:runs/sft --preset gavel-sft \\
                        --out runs/sft-test
    """


def _data_options(command: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option(
            "--data",
            "data",
            type=data_path(exists=True, dir_okay=False),
            required=True,
            help="GAVEL training data (JSONL, validated as by `gavel data validate`).",
        ),
        click.option(
            "--base-model",
            required=True,
            help="Local model directory (or a name in the local Hugging Face cache); never "
            "downloaded. Qwen2-VL/2.5-VL/3-VL, LLaVA, Idefics and other image-text-to-text "
            "models with a chat template.",
        ),
        click.option(
            "--image-root",
            type=folder_path(file_okay=False),
            default=None,
            help="Folder the image paths are relative to [default: the data file's folder].",
        ),
        click.option("--template", default="json", show_default=True, help=_TEMPLATE_HELP),
        click.option(
            "--prompt",
            default="gavel_v1",
            show_default=True,
            help="gavel prompt template of the user turn; evaluate with the same one "
            "(the gavel-sft preset uses gavel_v1).",
        ),
        click.option(
            "--max-length",
            type=_number("max_length"),
            default=4096,
            show_default=True,
            help="Longest sequence in tokens (image tokens included); longer answers are cut "
            "and counted.",
        ),
        click.option(
            "--max-pixels",
            type=_number("max_pixels"),
            default=None,
            help="Qwen-VL processors: cap the pixels per image (fewer vision tokens); saved "
            "with the model so evaluation resizes alike [default: the processor's].",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@train.command()
@_data_options
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="Run folder: checkpoints/, train_log.jsonl, and at the end the trained model "
    "(load it with --model hf:OUT). A rerun continues from the newest checkpoint.",
)
@click.option(
    "--epochs",
    type=_number("epochs"),
    default=3,
    show_default=True,
    help="Passes over the data (the paper reports its epoch-7 checkpoint).",
)
@click.option(
    "--max-steps",
    type=_number("max_steps"),
    default=None,
    help="Optimizer steps in all, instead of --epochs.",
)
@click.option(
    "--batch-size",
    type=_number("batch_size"),
    default=1,
    show_default=True,
    help="Examples per device per forward pass.",
)
@click.option(
    "--grad-accum",
    type=_number("grad_accum"),
    default=8,
    show_default=True,
    help="Forward passes per optimizer step; the effective batch is batch size x this x the "
    "number of processes.",
)
@click.option(
    "--lr",
    type=_number("lr"),
    default=None,
    help="Peak learning rate [default: 1e-5, or 2e-4 with --lora].",
)
@click.option(
    "--weight-decay", type=_number("weight_decay"), default=0.0, show_default=True, help="AdamW."
)
@click.option(
    "--warmup-ratio",
    type=_number("warmup_ratio"),
    default=0.03,
    show_default=True,
    help="Share of the steps with a linear warm-up.",
)
@click.option(
    "--schedule",
    type=_choice("schedule"),
    default="cosine",
    show_default=True,
    help="Learning-rate decay after the warm-up.",
)
@click.option(
    "--max-grad-norm",
    type=_number("max_grad_norm"),
    default=1.0,
    show_default=True,
    help="Gradient clipping (0: none).",
)
@click.option("--seed", type=_number("seed"), default=0, show_default=True,
              help="Seeds the new embeddings, LoRA, the data order and dropout.")  # fmt: skip
@click.option(
    "--save-every",
    type=_number("save_every"),
    default=500,
    show_default=True,
    help="Checkpoint every N optimizer steps (and always at the end or --stop-after).",
)
@click.option(
    "--keep-checkpoints",
    type=_number("keep_checkpoints"),
    default=2,
    show_default=True,
    help="Newest checkpoints kept; older ones are deleted.",
)
@click.option(
    "--stop-after",
    type=_number("stop_after"),
    default=None,
    help="Stop after N more optimizer steps (checkpointed), e.g. to fit a job time limit; "
    "rerun the same command to continue.",
)
@click.option(
    "--no-resume",
    is_flag=True,
    help="Start over, deleting the checkpoints and log of a previous run in --out.",
)
@click.option(
    "--dtype",
    type=_choice("dtype"),
    default="float32",
    show_default=True,
    help="Dtype the weights are loaded and trained in (bfloat16 halves memory; usual with --lora).",
)
@click.option(
    "--mixed-precision",
    type=_choice("mixed_precision"),
    default=None,
    help="Autocast the forward pass [default: from the accelerate config, else no].",
)
@click.option("--gradient-checkpointing", is_flag=True, help="Recompute activations (less memory).")
@click.option(
    "--train-vision",
    is_flag=True,
    help="Also train the vision encoder (frozen by default).",
)
@click.option(
    "--lora",
    is_flag=True,
    help="LoRA on the language model; the grown input embeddings and LM head stay fully "
    "trainable. Merged into the saved model.",
)
@click.option(
    "--lora-rank", type=_number("lora_rank"), default=16, show_default=True, help="LoRA r."
)
@click.option(
    "--lora-alpha",
    type=_number("lora_alpha"),
    default=32,
    show_default=True,
    help="LoRA scaling (alpha / rank multiplies the update).",
)
@click.option(
    "--lora-dropout",
    type=_number("lora_dropout"),
    default=0.05,
    show_default=True,
    help="Dropout on the LoRA inputs.",
)
@click.option(
    "--lora-targets",
    default=None,
    help="Regular expression over module names that get adapters [default: the language "
    "model's attention and MLP projections].",
)
@click.option(
    "--workers",
    type=_number("workers"),
    default=0,
    show_default=True,
    help="DataLoader worker processes (image decoding and tokenization).",
)
@click.option(
    "--log-every",
    type=_number("log_every"),
    default=10,
    show_default=True,
    help="Log line interval when stderr is not a terminal (cluster logs).",
)
@click.option(
    "--cpu",
    is_flag=True,
    help="Train on the CPU even when a GPU is visible (and CPU processes under a launcher, "
    "with gloo).",
)
@click.option("--no-progress", is_flag=True, help="No progress bar or log lines.")
def sft(**options: Any) -> None:
    """Fine-tune a VLM to answer GAVEL with coordinate-token boxes (the paper's baseline).

    Adds the 1,025 tokens <p-512>..<p512> to the tokenizer and grows the embeddings (input
    embeddings and LM head trainable); converts each gold box to four tokens,
    q(v, S) = round(512 * clip((v - S/2) / (S/2), -1, 1)); asks with the gavel_v1 prompt in
    the model's own chat format; and puts the loss on the assistant's answer only.

    Runs on one device as is, and on several under `accelerate launch` or `torchrun` (DDP or
    FSDP; see examples/train/). Checkpoints hold model, optimizer, schedule and RNG states;
    rerunning the command continues from the newest one. The trained model is saved to --out.
    """
    settings = TrainSettings(
        data=str(options["data"]),
        base_model=options["base_model"],
        out=str(options["out"]),
        image_root=str(options["image_root"]) if options["image_root"] else None,
        template=options["template"],
        prompt=options["prompt"],
        epochs=options["epochs"],
        max_steps=options["max_steps"],
        batch_size=options["batch_size"],
        grad_accum=options["grad_accum"],
        lr=options["lr"],
        weight_decay=options["weight_decay"],
        warmup_ratio=options["warmup_ratio"],
        schedule=options["schedule"],
        max_grad_norm=options["max_grad_norm"],
        max_length=options["max_length"],
        seed=options["seed"],
        save_every=options["save_every"],
        keep_checkpoints=options["keep_checkpoints"],
        stop_after=options["stop_after"],
        dtype=options["dtype"],
        mixed_precision=options["mixed_precision"],
        gradient_checkpointing=options["gradient_checkpointing"],
        train_vision=options["train_vision"],
        lora=options["lora"],
        lora_rank=options["lora_rank"],
        lora_alpha=options["lora_alpha"],
        lora_dropout=options["lora_dropout"],
        lora_targets=options["lora_targets"],
        max_pixels=options["max_pixels"],
        workers=options["workers"],
        resume=not options["no_resume"],
        progress=not options["no_progress"],
        log_every=options["log_every"],
        cpu=options["cpu"],
    )
    result = training.sft(settings)
    if not _is_main_process():
        return
    out = settings.out
    if result.finished and result.resumed_from == result.step:
        click.echo(f"{out}: already trained ({result.step} steps); the model is in {out}", err=True)
    elif result.finished:
        first = f"{result.losses[0]:.4f}" if result.losses else "-"
        last = f"{result.losses[-1]:.4f}" if result.losses else "-"
        click.echo(
            f"{out}: trained {result.step}/{result.total_steps} steps (loss {first} -> {last}, "
            f"{result.samples_per_second:.2f} samples/s). Evaluate with:\n"
            f"  gavel run --data TEST.jsonl --model hf:{out} --preset gavel-sft --out RUN_DIR",
            err=True,
        )
        if result.truncated:
            click.echo(
                f"warning: {result.truncated} answer(s) were cut at --max-length "
                f"{settings.max_length}",
                err=True,
            )
    else:
        click.echo(
            f"{out}: stopped at step {result.step}/{result.total_steps} (checkpointed); rerun "
            "the same command to continue",
            err=True,
        )


@train.command()
@_data_options
@click.option(
    "-n",
    "count",
    type=click.IntRange(min=1),
    default=2,
    show_default=True,
    help="Examples to show.",
)
def preview(
    data: Path,
    base_model: str,
    image_root: Path | None,
    template: str,
    prompt: str,
    max_length: int,
    max_pixels: int | None,
    count: int,
) -> None:
    """Show what training sees for the first examples: the prompt as tokenized, and the
    tokens that carry the loss (the answer), with token counts. Trains nothing."""
    shown = training.preview(
        data,
        base_model,
        image_root=image_root,
        template=template,
        prompt=prompt,
        max_length=max_length,
        max_pixels=max_pixels,
        count=count,
    )
    click.echo(f"{data}: {shown.examples} examples over {shown.images} images")
    for example in shown.shown:
        click.echo(f"\n--- {example.id}: {example.prompt_tokens} prompt tokens (no loss), "
                   f"{example.answer_tokens} answer tokens (loss)"
                   f"{', answer cut at --max-length' if example.truncated else ''}")  # fmt: skip
        click.echo(f"[prompt] {example.prompt_text}")
        click.echo(f"[answer] {example.answer_text}")


def _is_main_process() -> bool:
    import os

    return os.environ.get("RANK", "0") == "0"
