"""Supervised fine-tuning of the GAVEL baseline: a small training loop on accelerate.

A plain loop (rather than transformers' Trainer) because every choice that matters here is
visible in one page: which tokens carry the loss (:mod:`gavel.train.masking`), which parameters
train (:mod:`gavel.train.model`, :mod:`gavel.train.lora`), the order of the data
(:mod:`gavel.train.dataset`) and what a checkpoint holds (:mod:`gavel.train.checkpoints`).
accelerate supplies the rest: the same code runs on one CPU, one GPU, or many GPUs under
``accelerate launch`` / ``torchrun`` with DDP or FSDP, in bf16 when asked.

Reproducibility and resuming: the seed fixes the model's new rows, the LoRA initialization, the
data order per epoch and dropout. A checkpoint holds the model, the optimizer, the LR schedule
and every process's RNG state; a rerun with the same ``--out`` loads the newest complete one and
skips exactly the batches already trained on, so an interrupted run continues the step count and
(on the same hardware) the same loss curve.

Gradient accumulation is done by hand: the loss of each micro-batch is divided by the number of
micro-batches in its group, and gradients are synchronized across processes only on the group's
last micro-batch. The last group of an epoch may be shorter; it is still one optimizer step.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gavel.errors import ConfigError, GavelError
from gavel.train import checkpoints as ckpt
from gavel.train.collate import Collator
from gavel.train.dataset import EncodedDataset, EpochShuffle
from gavel.train.lora import apply_lora, merged
from gavel.train.masking import ChatEncoder, end_token_ids
from gavel.train.model import (
    add_coord_tokens,
    count_parameters,
    freeze_vision,
    load_base,
    require,
    set_max_pixels,
)
from gavel.train.progress import TrainProgress
from gavel.train.settings import TrainSettings
from gavel.train.sft_data import BOX_FORMAT, load_examples, prompt_template
from gavel.train.template import load_response_template

LOG_FILE = "train_log.jsonl"
INFO_FILE = "gavel_train.json"
#: Settings that may change between an interrupted run and its continuation.
RESUMABLE = frozenset({
    "data", "out", "image_root", "epochs", "max_steps", "stop_after", "save_every",
    "keep_checkpoints", "workers", "resume", "progress", "log_every", "mixed_precision", "cpu",
})  # fmt: skip


@dataclass
class TrainResult:
    """What a call to :func:`train` did (one invocation; a resumed run continues the steps)."""

    out: Path
    step: int
    total_steps: int
    finished: bool
    resumed_from: int
    losses: list[float] = field(default_factory=list)
    samples: int = 0
    seconds: float = 0.0
    truncated: int = 0

    @property
    def samples_per_second(self) -> float:
        return self.samples / self.seconds if self.seconds > 0 else 0.0


def _require_accelerate() -> Any:
    try:
        import accelerate
    except ImportError as error:
        raise ConfigError(
            f"training needs accelerate: pip install 'gavel-eval[train]' ({error})"
        ) from None
    return accelerate


def _lr_factor(schedule: str, warmup: int, total: int) -> Any:
    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        if schedule == "constant":
            return 1.0
        progress = (step - warmup) / max(1, total - warmup)
        progress = min(1.0, progress)
        if schedule == "linear":
            return 1.0 - progress
        return 0.5 * (1.0 + math.cos(math.pi * progress))

    return factor


def _identity(settings: TrainSettings, data_sha256: str, processes: int) -> dict[str, Any]:
    values = {k: v for k, v in asdict(settings).items() if k not in RESUMABLE}
    values["learning_rate"] = settings.learning_rate
    values["data_sha256"] = data_sha256
    values["processes"] = processes
    return values


def _start_over(out: Path) -> None:
    """--no-resume: forget this folder's previous run (only the files training writes)."""
    shutil.rmtree(out / "checkpoints", ignore_errors=True)
    for name in (ckpt.CONFIG_FILE, LOG_FILE):
        (out / name).unlink(missing_ok=True)


def _rewind_log(path: Path, step: int) -> None:
    """Drop log lines past the checkpoint being resumed (written after it, then lost)."""
    if not path.is_file():
        return
    kept = [
        line
        for line in path.read_text(encoding="utf-8").splitlines()
        if (entry := _log_entry(line)) is not None and entry.get("step", 0) <= step
    ]
    path.write_text("".join(line + "\n" for line in kept), encoding="utf-8")


def _log_entry(line: str) -> dict[str, Any] | None:
    """One log line, or None for a blank line or one cut short by a crash."""
    try:
        entry = json.loads(line)
    except json.JSONDecodeError:
        return None
    return entry if isinstance(entry, dict) else None


def train(settings: TrainSettings) -> TrainResult:
    """Train (or continue training) the baseline; the finished model is saved to ``out``."""
    # Cheap checks first: a typo in the template or the data fails before torch is imported.
    template = load_response_template(settings.template)
    prompt = prompt_template(settings.prompt)
    data = load_examples(
        settings.data, template, prompt=settings.prompt, image_root=settings.image_root
    )
    torch, _ = require()
    _require_accelerate()
    from accelerate import Accelerator
    from accelerate.utils import DistributedType, set_seed

    out = Path(settings.out)
    accelerator = Accelerator(mixed_precision=settings.mixed_precision, cpu=settings.cpu)
    launched = int(os.environ.get("WORLD_SIZE", "1"))
    if launched != accelerator.num_processes:
        raise ConfigError(
            f"launched as {launched} processes, but accelerate set up {accelerator.num_processes}"
            " (no GPU visible? add --cpu for a CPU run); refusing to let them overwrite each "
            "other's checkpoints"
        )
    is_main = accelerator.is_main_process
    fsdp = accelerator.distributed_type == DistributedType.FSDP
    if settings.lora and settings.train_vision:
        raise ConfigError(
            "--train-vision with --lora is not supported: LoRA freezes everything but its "
            "adapters, the coordinate embeddings and the LM head"
        )
    if fsdp and settings.lora:
        raise ConfigError(
            "--lora under FSDP is not supported: LoRA fits on each GPU, so use DDP for it "
            "(accelerate launch with a multi-GPU config), or full fine-tuning under FSDP"
        )

    identity = _identity(settings, data.sha256, accelerator.num_processes)
    if is_main:
        out.mkdir(parents=True, exist_ok=True)
        if not settings.resume:
            _start_over(out)
    accelerator.wait_for_everyone()
    ckpt.check_same_run(out, identity)  # read-only, on every process: all stop together

    set_seed(settings.seed)
    processor, model = load_base(settings.base_model, settings.dtype)
    if settings.max_pixels:
        set_max_pixels(processor, settings.max_pixels)
    added = add_coord_tokens(processor, model)
    if not settings.train_vision:
        freeze_vision(model)
    if settings.gradient_checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.config.use_cache = False
    if settings.lora:
        if settings.gradient_checkpointing:
            model.enable_input_require_grads()
        model = apply_lora(
            model,
            rank=settings.lora_rank,
            alpha=settings.lora_alpha,
            dropout=settings.lora_dropout,
            targets=settings.lora_targets,
        )
    trainable, total_params = count_parameters(model)
    model.train()

    tokenizer = processor.tokenizer
    pad_id = tokenizer.pad_token_id
    if pad_id is None:
        pad_id = tokenizer.eos_token_id
    encoder = ChatEncoder(
        processor,
        max_length=settings.max_length,
        end_ids=end_token_ids(tokenizer, getattr(model, "generation_config", None)),
    )
    dataset = EncodedDataset(data.examples, encoder)
    sampler = EpochShuffle(len(dataset), settings.seed)
    loader = torch.utils.data.DataLoader(
        dataset,
        batch_size=settings.batch_size,
        sampler=sampler,
        collate_fn=Collator(pad_id),
        num_workers=settings.workers,
    )

    parameters = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(
        parameters, lr=settings.learning_rate, weight_decay=settings.weight_decay
    )
    # Together in one call: FSDP2 refuses a model prepared without its optimizer.
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    batches_per_epoch = len(loader)
    steps_per_epoch = math.ceil(batches_per_epoch / settings.grad_accum)
    total = settings.max_steps or steps_per_epoch * settings.epochs
    warmup = math.ceil(total * settings.warmup_ratio)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, _lr_factor(settings.schedule, warmup, total)
    )
    accelerator.register_for_checkpointing(scheduler)

    step = 0
    resume_from = ckpt.latest_checkpoint(out) if settings.resume else None
    if resume_from is not None:
        accelerator.load_state(str(resume_from))
        step = int(ckpt.read_state(resume_from)["step"])
    if is_main:
        ckpt.write_json(
            out / ckpt.CONFIG_FILE,
            {"identity": identity, "settings": asdict(settings), "total_steps": total},
        )
        _rewind_log(out / LOG_FILE, step)

    result = TrainResult(out=out, step=step, total_steps=total, finished=False, resumed_from=step)
    info = {
        "coord_tokens_added": added,
        "trainable_parameters": trainable,
        "parameters": total_params,
        "examples": len(dataset),
        "data_sha256": data.sha256,
        "gold_boxes_clipped": data.clipped_boxes,
        "images": data.images,
        "processes": accelerator.num_processes,
        "distributed_type": str(accelerator.distributed_type.value),
        "mixed_precision": accelerator.mixed_precision,
        "steps_per_epoch": steps_per_epoch,
    }
    progress = TrainProgress(total, step, enabled=settings.progress and is_main,
                             log_every=settings.log_every)  # fmt: skip
    began = time.perf_counter()
    with progress:
        if step:
            progress.note(f"resuming from {resume_from} at step {step}/{total}")
        progress.note(
            f"{len(dataset)} examples, {steps_per_epoch} steps per epoch, {total} steps; "
            f"{trainable:,} of {total_params:,} parameters trainable"
        )
        step = _loop(
            settings, accelerator, model, optimizer, scheduler, loader, sampler,
            steps_per_epoch, total, step, progress, result,
        )  # fmt: skip
    result.seconds = time.perf_counter() - began
    result.step = step
    result.truncated = int(
        accelerator.reduce(torch.tensor(result.truncated, device=accelerator.device), "sum").item()
    )
    if step >= total:
        _save_final(settings, accelerator, model, processor, result, info, prompt.sha256, template)
        result.finished = True
    accelerator.wait_for_everyone()
    accelerator.end_training()
    return result


def _loop(
    settings: TrainSettings,
    accelerator: Any,
    model: Any,
    optimizer: Any,
    scheduler: Any,
    loader: Any,
    sampler: EpochShuffle,
    steps_per_epoch: int,
    total: int,
    step: int,
    progress: TrainProgress,
    result: TrainResult,
) -> int:
    """Optimizer steps from ``step`` until ``total`` (or ``stop_after`` more); returns the step."""
    import torch

    stop_at = total if settings.stop_after is None else min(total, step + settings.stop_after)
    accum = settings.grad_accum
    log_path = Path(settings.out) / LOG_FILE
    while step < stop_at:
        epoch, done_in_epoch = divmod(step, steps_per_epoch)
        skip = done_in_epoch * accum
        batches = accelerator.skip_first_batches(loader, skip) if skip else loader
        # accelerate's loaders re-seed the sampler with their own pass counter when iterated;
        # a fresh (resumed or skipping) loader's counter starts at 0, so set it explicitly.
        sampler.set_epoch(epoch)
        if hasattr(batches, "set_epoch"):
            batches.set_epoch(epoch)
        remaining = len(loader) - skip
        group_loss = torch.zeros((), device=accelerator.device)
        samples = 0
        for index, batch in enumerate(_batches_keeping_rng(batches)):
            in_group = index % accum
            group_size = min(accum, remaining - (index - in_group))
            last = in_group == group_size - 1
            truncated = batch.pop("truncated", None)
            if truncated is not None:
                result.truncated += int(truncated.sum())
            sync = contextlib.nullcontext() if last else accelerator.no_sync(model)
            with sync:
                loss = model(**batch).loss
                accelerator.backward(loss / group_size)
            group_loss += loss.detach().float() / group_size  # no .item(): no GPU sync here
            samples += int(batch["input_ids"].shape[0])
            if not last:
                continue
            if settings.max_grad_norm > 0:
                accelerator.clip_grad_norm_(model.parameters(), settings.max_grad_norm)
            optimizer.step()
            lr = float(scheduler.get_last_lr()[0])  # the rate this step was taken with
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1
            loss_value = float(accelerator.reduce(group_loss, reduction="mean").item())
            counted = int(
                accelerator.reduce(torch.tensor(samples, device=accelerator.device), "sum").item()
            )
            group_loss, samples = torch.zeros_like(group_loss), 0
            if not math.isfinite(loss_value):  # the same value on every process: all stop
                raise GavelError(
                    f"the loss is {loss_value} at step {step}; lower --lr, or train in bf16 "
                    "rather than fp16 (the last checkpoint is kept)"
                )
            result.losses.append(loss_value)
            result.samples += counted
            progress.step(loss_value, lr, counted)
            if accelerator.is_main_process:
                line = {"step": step, "epoch": epoch, "loss": loss_value, "lr": lr,
                        "samples": counted, "time": round(time.time(), 3)}  # fmt: skip
                with log_path.open("a", encoding="utf-8") as log:
                    log.write(json.dumps(line) + "\n")
            if step % settings.save_every == 0 or step == stop_at:
                _save_checkpoint(settings, accelerator, step, epoch, loss_value)
            if step >= stop_at:
                return step
    return step


def _batches_keeping_rng(batches: Any) -> Iterator[Any]:
    """Iterate ``batches`` without letting the DataLoader's start draw from torch's global RNG
    (it takes a base seed for its workers), so dropout sees the same random stream whether a
    run went through or was resumed mid-way, when the interrupted run had no new iterator."""
    import torch

    state = torch.get_rng_state()
    iterator = iter(batches)
    first = next(iterator, None)  # the DataLoader starts here (the shard iterates ahead)
    torch.set_rng_state(state)
    if first is None:
        return
    yield first
    yield from iterator


def _save_checkpoint(
    settings: TrainSettings, accelerator: Any, step: int, epoch: int, loss: float
) -> None:
    out = Path(settings.out)
    folder = ckpt.checkpoint_dir(out, step)
    accelerator.save_state(str(folder))
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        ckpt.write_json(folder / ckpt.STATE_FILE, {"step": step, "epoch": epoch, "loss": loss})
        ckpt.prune(out, settings.keep_checkpoints)
    accelerator.wait_for_everyone()


def _save_final(
    settings: TrainSettings,
    accelerator: Any,
    model: Any,
    processor: Any,
    result: TrainResult,
    info: dict[str, Any],
    prompt_sha256: str,
    template: Any,
) -> None:
    """The trained model as an ordinary checkpoint in ``out`` (LoRA merged), with its processor,
    so ``gavel run --model hf:OUT --preset gavel-sft`` evaluates it."""
    import accelerate
    import torch
    import transformers
    from accelerate.utils import DistributedType

    accelerator.wait_for_everyone()
    out = Path(settings.out)
    state_dict = None
    if accelerator.distributed_type == DistributedType.FSDP:
        state_dict = accelerator.get_state_dict(model)
    final = accelerator.unwrap_model(model)
    if settings.lora:
        final = merged(final)
    if settings.gradient_checkpointing:
        final.gradient_checkpointing_disable()
        final.config.use_cache = True
    if accelerator.is_main_process:
        final.save_pretrained(out, state_dict=state_dict, safe_serialization=True)
        processor.save_pretrained(out)
        lines = (out / LOG_FILE).read_text().splitlines()
        log = [entry for line in lines if (entry := _log_entry(line)) is not None]
        ckpt.write_json(
            out / INFO_FILE,
            {
                "method": "GAVEL baseline SFT (paper appendix A.2): coordinate tokens "
                "<p-512>..<p512>, loss on the assistant turn only",
                "box_format": BOX_FORMAT,
                "prompt_template": settings.prompt,
                "prompt_sha256": prompt_sha256,
                "response_template": template.to_json(),
                "settings": asdict(settings),
                "learning_rate": settings.learning_rate,
                "steps": result.step,
                "first_loss": log[0]["loss"] if log else None,
                "last_loss": log[-1]["loss"] if log else None,
                "truncated_answers": result.truncated,
                **info,
                "versions": {
                    "torch": torch.__version__,
                    "transformers": transformers.__version__,
                    "accelerate": accelerate.__version__,
                },
            },
        )
    accelerator.wait_for_everyone()
