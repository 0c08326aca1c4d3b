"""The adapter options a generation's settings ask for, and the settings a model refuses.

Checked here, before anything is loaded, so a refusal names the flag (``--device applies to
hf: models only``), not the adapter option it becomes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gavel.errors import UsageError
from gavel.setting_checks import json_object

if TYPE_CHECKING:
    from gavel.benchmarks.spec import Benchmark
    from gavel.execution.settings import GenerateSettings
    from gavel.models.presets import Preset

#: The model flags only some kinds of model take: flag -> (the adapters' option, the kinds).
MODEL_FLAGS: dict[str, tuple[str, tuple[str, ...]]] = {
    "--base-url": ("base_urls", ("openai",)),
    "--api-key-env": ("api_key_env", ("openai",)),
    "--timeout": ("timeout", ("openai",)),
    "--no-model-check": ("model_check", ("openai",)),
    "--extra-body": ("extra_body", ("openai",)),
    "--image-cache-mb": ("image_cache_mb", ("openai",)),
    "--max-tokens": ("max_tokens", ("openai", "hf")),
    "--temperature": ("temperature", ("openai", "hf")),
    "--device": ("device", ("hf",)),
    "--dtype": ("dtype", ("hf",)),
    "--batch-size": ("batch_size", ("hf",)),
    "--frames": ("frames", ("openai", "hf")),
    "--fps": ("fps", ("openai", "hf")),
    "--max-frames": ("max_frames", ("openai", "hf")),
}
#: What to do instead, for a flag given to a kind of model that does not take it.
INSTEAD = {
    ("--batch-size", "openai"): "a served model batches requests on its server, so send more "
    "at once with --concurrency instead",
}
#: The kinds of model that are sent requests over HTTP, and so have rate limits.
LIMITED_KINDS = ("openai",)


def refuse_foreign_flags(spec: str, given: dict[str, Any]) -> None:
    """A usage error naming the first model flag given (``given``: option -> value) that the
    kind of model ``spec`` names does not take."""
    from gavel.models.registry import builtin_prefixes

    kind = spec.partition(":")[0]
    if kind not in builtin_prefixes():
        return  # load_model names an unknown model; a plugin's factory judges its options
    for flag, (option, kinds) in MODEL_FLAGS.items():
        if kind not in kinds and given.get(option) not in (None, (), ""):
            names = " and ".join(f"{k}:" for k in kinds)
            instead = INSTEAD.get((flag, kind))
            raise UsageError(
                f"{flag} applies to {names} models only" + (f"; {instead}" if instead else "")
            )


def model_rate_options(spec: str, rpm: float | None, tpm: float | None,
                       executor: str = "local") -> dict[str, float]:  # fmt: skip
    """The adapter options for ``--rpm`` / ``--tpm`` (only those given); a usage error naming
    the flag for a model that is not sent requests over HTTP, or for Ray, whose every replica
    would keep a budget of its own."""
    given = {name: value for name, value in (("rpm", rpm), ("tpm", tpm)) if value is not None}
    flags = " and ".join(f"--{name}" for name in given)
    kind = spec.partition(":")[0]
    if given and kind not in LIMITED_KINDS:
        names = " and ".join(f"{k}:" for k in LIMITED_KINDS)
        raise UsageError(f"{flags} applies to {names} models only (served over HTTP)")
    if given and executor != "local":
        raise UsageError(
            f"{flags}: only with the local executor (each Ray replica would keep the whole "
            "budget for itself)"
        )
    return given


def frame_options(bench: Benchmark, family: Preset | None, count: int | None,
                  fps: float | None, max_frames: int | None) -> dict[str, Any]:  # fmt: skip
    """The adapter options choosing a video's frames: the flags, else the preset's default."""
    given = {"frames": count, "fps": fps, "max_frames": max_frames}
    flags = [f"--{name.replace('_', '-')}" for name, value in given.items() if value is not None]
    if flags and not bench.videos:
        raise UsageError(f"{' and '.join(flags)}: only for video benchmarks (videohallucer)")
    if count is not None and fps is not None:
        raise UsageError("give --frames (a count) or --fps (a rate), not both")
    if max_frames is not None and fps is None:
        raise UsageError("--max-frames caps the --fps sampling: give --fps too")
    if flags:
        return {name: value for name, value in given.items() if value is not None}
    if bench.videos and family is not None and family.frames is not None:
        return family.frames.options()
    return {}


def adapter_options(settings: GenerateSettings, bench: Benchmark,
                    family: Preset | None) -> dict[str, Any]:  # fmt: skip
    """The options the model is loaded with, the settings that its kind refuses refused."""
    s = settings
    options: dict[str, Any] = {
        "base_urls": s.base_url, "api_key_env": s.api_key_env, "max_tokens": s.max_tokens,
        "temperature": s.temperature,
        "box_format": family.box_format if family else None,
        "max_image_side": family.max_image_side if family else None,
    }  # fmt: skip
    # Options only some models take go to them only when given.
    given = (("device", s.device), ("dtype", s.dtype), ("batch_size", s.batch_size),
             ("timeout", s.timeout), ("image_cache_mb", s.image_cache_mb))  # fmt: skip
    options |= {k: v for k, v in given if v is not None}
    if s.no_model_check:
        options["model_check"] = False
    if s.extra_body is not None:
        options["extra_body"] = json_object(str(s.extra_body), "--extra-body")
    options |= frame_options(bench, family, s.frames, s.fps, s.max_frames)
    options |= model_rate_options(str(s.model), s.rpm, s.tpm, s.executor)
    refuse_foreign_flags(str(s.model), {"base_urls": s.base_url, "api_key_env": s.api_key_env,
                                        "timeout": s.timeout, "max_tokens": s.max_tokens,
                                        "model_check": False if s.no_model_check else None,
                                        "extra_body": s.extra_body,
                                        "image_cache_mb": s.image_cache_mb,
                                        "temperature": s.temperature, "device": s.device,
                                        "dtype": s.dtype, "batch_size": s.batch_size,
                                        "frames": s.frames, "fps": s.fps,
                                        "max_frames": s.max_frames})  # fmt: skip
    return options
