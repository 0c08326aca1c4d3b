"""An ``hf:`` model as a driver sees it: described from its options and its config, never loaded.

On Ray (``gavel generate --executor ray``) the replicas load the weights where their GPUs are;
the driver only builds the prompts and writes the manifest, for which it needs the model's name,
box convention, frame sampling and batch size. Loading a 7B model there as well would take the
driver's memory (or a GPU it was not given) and minutes, for nothing. :class:`HFPlan` is what
:class:`gavel.models.hf.HFModel` would say about itself before its first answer, from the same
options and the model's ``config.json`` alone (read with ``AutoConfig``, no weights).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gavel.errors import ConfigError, GavelError
from gavel.media.sampling import sampling_from_options
from gavel.models.hf import (
    ADAPTER,
    DEFAULT_BATCH_SIZE,
    MULTI_IMAGE_TYPES,
    _require,
    _resolve_source,
    check_settings,
    hf_options,
)
from gavel.requests import Answer, Capabilities, Request


class HFPlan:
    """The settings an ``hf:`` model will run with; ``device`` is where the replicas are
    expected to run (``cuda`` when they are given GPUs), which sets the default batch size."""

    def __init__(
        self,
        source: str,
        *,
        replica_device: str = "cpu",
        device: str = "auto",
        dtype: str = "auto",
        max_new_tokens: int = 1024,
        temperature: float = 0.0,
        batch_size: int | None = None,
        box_format: str | None = None,
        max_image_side: int | None = None,
        frames: int | None = None,
        fps: float | None = None,
        max_frames: int | None = None,
        multi_image: bool | None = None,
        seed: int = 0,
    ):
        check_settings(dtype, max_new_tokens, temperature, batch_size, max_image_side)
        _, transformers = _require()
        self.name = source
        self.source = _resolve_source(source)
        try:
            config = transformers.AutoConfig.from_pretrained(self.source, local_files_only=True)
        except (OSError, ValueError, KeyError) as error:
            raise ConfigError(
                f"hf: cannot read the config of {source!r} from local files ({error}); gavel "
                "never downloads models: give a directory, or fetch the model first"
            ) from None
        self.model_type = str(getattr(config, "model_type", ""))
        self.commit = getattr(config, "_commit_hash", None)
        self.device = replica_device if device == "auto" else device
        self.dtype = dtype
        self.max_new_tokens = max_new_tokens
        self.temperature = float(temperature)
        self.batch_size = batch_size or DEFAULT_BATCH_SIZE[self.device.partition(":")[0]]
        self.max_image_side = max_image_side
        self.sampling = sampling_from_options(frames, fps, max_frames)
        self.seed = seed
        if multi_image is None:
            multi_image = self.model_type in MULTI_IMAGE_TYPES
        self.capabilities = Capabilities(
            images=True,
            multi_image=bool(multi_image),
            video=bool(multi_image),
            max_image_side=max_image_side,
            box_format=box_format,
        )
        self.versions = {"transformers": str(transformers.__version__)}

    def __repr__(self) -> str:
        return f"HFPlan({self.name!r})"

    def settings(self) -> dict[str, Any]:
        """:meth:`HFModel.settings` as far as it is known without the weights (the device
        and batch size each replica used are in the manifest's ``settings.ray.replicas``)."""
        return {
            "adapter": ADAPTER,
            "model": self.name,
            "source": self.source,
            "commit": self.commit,
            "model_type": self.model_type,
            "device": self.device,
            "dtype": self.dtype,
            "loaded_dtype": None,
            "max_new_tokens": self.max_new_tokens,
            "temperature": self.temperature,
            "seed": self.seed if self.temperature > 0 else None,
            "batch_size": self.batch_size,
            "max_image_side": self.max_image_side,
            "frames": self.sampling.describe(),
            "box_format": self.capabilities.box_format,
            "versions": dict(self.versions),
            "loaded_by": "the Ray replicas",
        }

    def answer(self, request: Request) -> Answer:
        return self.answer_batch([request])[0]

    def answer_batch(self, requests: Sequence[Request]) -> list[Answer]:
        """A plan answers nothing (the replicas do); it batches, as the model it describes."""
        raise GavelError(f"{self.name} is only described here: its Ray replicas answer")


def plan_from_spec(argument: str, replica_device: str = "cpu", **options: Any) -> HFPlan:
    """:func:`gavel.models.hf.from_spec` without loading: the same options, checked alike."""
    return HFPlan(argument, replica_device=replica_device, **hf_options(options))
