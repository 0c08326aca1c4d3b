"""The settings of a supervised training run, apart from the trainer that needs torch.

Why a module of their own: the command line and :mod:`gavel.api.training` build them from flags
(and check them) before anything heavy is imported; ``gavel train --help`` stays quick.
"""

from __future__ import annotations

from dataclasses import dataclass

from gavel.errors import ConfigError

SCHEDULES = ("cosine", "linear", "constant")


@dataclass(frozen=True)
class TrainSettings:
    """Every option of ``gavel train sft``; the defining ones are checked again on resume."""

    data: str
    base_model: str
    out: str
    image_root: str | None = None
    template: str = "json"
    prompt: str = "gavel_v1"
    epochs: int = 3
    max_steps: int | None = None
    batch_size: int = 1
    grad_accum: int = 8
    lr: float | None = None
    weight_decay: float = 0.0
    warmup_ratio: float = 0.03
    schedule: str = "cosine"
    max_grad_norm: float = 1.0
    max_length: int = 4096
    seed: int = 0
    save_every: int = 500
    keep_checkpoints: int = 2
    stop_after: int | None = None
    dtype: str = "float32"
    mixed_precision: str | None = None
    gradient_checkpointing: bool = False
    train_vision: bool = False
    lora: bool = False
    lora_rank: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.05
    lora_targets: str | None = None
    max_pixels: int | None = None
    workers: int = 0
    resume: bool = True
    progress: bool = True
    log_every: int = 10
    cpu: bool = False

    def __post_init__(self) -> None:
        positive = ("epochs", "batch_size", "grad_accum", "max_length", "save_every")
        for name in positive:
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be at least 1")
        for name in ("max_steps", "stop_after", "max_pixels"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ConfigError(f"{name} must be at least 1 when given")
        if self.keep_checkpoints < 1:
            raise ConfigError("keep_checkpoints must be at least 1 (resuming needs one)")
        if self.lr is not None and not self.lr > 0:
            raise ConfigError("lr must be positive")
        if not 0 <= self.warmup_ratio < 1:
            raise ConfigError("warmup_ratio must be in [0, 1)")
        if self.schedule not in SCHEDULES:
            raise ConfigError(f"schedule must be one of {', '.join(SCHEDULES)}")
        if self.mixed_precision not in (None, "no", "bf16", "fp16"):
            raise ConfigError("mixed_precision must be no, bf16 or fp16")

    @property
    def learning_rate(self) -> float:
        """The given rate, else 2e-4 for LoRA and 1e-5 for full fine-tuning."""
        if self.lr is not None:
            return self.lr
        return 2e-4 if self.lora else 1e-5
