"""The settings of a supervised training run, apart from the trainer that needs torch.

Why a module of their own: the command line and :mod:`gavel.api.training` build them from flags
(and check them) before anything heavy is imported; ``gavel train --help`` stays quick.
"""

from __future__ import annotations

from dataclasses import dataclass

from gavel.setting_checks import MAX_SEED, Bound, check_choice

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
        for name, bound in BOUNDS.items():
            value = getattr(self, name)
            if value is not None or name not in OPTIONAL:
                object.__setattr__(self, name, bound.check(flag(name), value))
        for name, choices in CHOICES.items():
            value = getattr(self, name)
            if value is not None or name not in OPTIONAL:
                check_choice(flag(name), value, choices)

    @property
    def learning_rate(self) -> float:
        """The given rate, else 2e-4 for LoRA and 1e-5 for full fine-tuning."""
        if self.lr is not None:
            return self.lr
        return 2e-4 if self.lora else 1e-5


def flag(name: str) -> str:
    """The flag of a setting (``--lora-rank`` for ``lora_rank``), as refusals name it."""
    return "--" + name.replace("_", "-")


#: The number settings' types and ranges; ``gavel train sft``'s flags are made from them, so
#: the command line and the Python API refuse the same values in the same words.
BOUNDS = {
    "epochs": Bound(int, 1),
    "max_steps": Bound(int, 1),
    "batch_size": Bound(int, 1),
    "grad_accum": Bound(int, 1),
    "lr": Bound(float, 0, min_open=True),
    "weight_decay": Bound(float, 0),
    "warmup_ratio": Bound(float, 0, 1, max_open=True),
    "max_grad_norm": Bound(float, 0),
    "max_length": Bound(int, 16),
    "seed": Bound(int, 0, MAX_SEED),
    "save_every": Bound(int, 1),
    "keep_checkpoints": Bound(int, 1),  # resuming needs one
    "stop_after": Bound(int, 1),
    "lora_rank": Bound(int, 1),
    "lora_alpha": Bound(int, 1),
    "lora_dropout": Bound(float, 0, 1),
    "max_pixels": Bound(int, 1),
    "workers": Bound(int, 0),
    "log_every": Bound(int, 1),
}
#: The settings that take one of a few words.
CHOICES = {
    "schedule": SCHEDULES,
    "dtype": ("float32", "bfloat16", "float16"),
    "mixed_precision": ("no", "bf16", "fp16"),
}
#: The settings that may be None (their flag not given: the default is decided later).
OPTIONAL = ("lr", "max_steps", "stop_after", "max_pixels", "mixed_precision")
