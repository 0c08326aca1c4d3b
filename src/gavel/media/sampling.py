"""Which frames of a video a sampling keeps: pure arithmetic on the frame count, no decoding.

Two ways to choose frames, as video benchmarks and VLM servers use them:

- ``uniform``: ``count`` frames spread evenly over the whole video (the centre of each of
  ``count`` equal segments), the usual choice for models that take a fixed number of images;
- ``fps``: one frame every ``1 / fps`` seconds, at most ``max_frames`` (evenly thinned beyond).

This module imports nothing heavy, so the command line and the presets can name a sampling
without loading PyAV or numpy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from gavel.errors import ConfigError, GavelError


@dataclass(frozen=True)
class FrameSampling:
    mode: str = "uniform"  # "uniform" or "fps"
    count: int = 8
    fps: float = 1.0
    max_frames: int = 32

    def __post_init__(self) -> None:
        if self.mode not in ("uniform", "fps"):
            raise GavelError(f"unknown frame sampling {self.mode!r}; use uniform or fps")
        if not math.isfinite(self.fps):
            raise GavelError(f"fps must be a finite number of frames a second, not {self.fps}")
        if self.count < 1 or self.max_frames < 1 or self.fps <= 0:
            raise GavelError("frame counts and fps must be positive")

    def describe(self) -> dict[str, Any]:
        """The sampling as recorded in manifests (only the fields its mode reads)."""
        if self.mode == "uniform":
            return {"mode": "uniform", "count": self.count}
        return {"mode": "fps", "fps": self.fps, "max_frames": self.max_frames}

    def options(self) -> dict[str, Any]:
        """The adapters' options naming this sampling (``frames``, or ``fps`` and
        ``max_frames``): the inverse of :func:`sampling_from_options`."""
        if self.mode == "uniform":
            return {"frames": self.count}
        return {"fps": self.fps, "max_frames": self.max_frames}


def sampling_from_options(
    frames: int | None = None, fps: float | None = None, max_frames: int | None = None
) -> FrameSampling:
    """The sampling that ``frames=N`` or ``fps=F, max_frames=M`` name (the adapters' options).

    ``fps`` chooses the ``fps`` mode; ``max_frames`` belongs to it and is refused without it.
    """
    if fps is not None:
        if frames is not None:
            raise ConfigError("give either frames (a count) or fps (a rate), not both")
        if not math.isfinite(fps):
            raise ConfigError(f"fps must be a finite number of frames a second, not {fps}")
        if fps <= 0:
            raise ConfigError("fps must be positive")
        if max_frames is not None and max_frames < 1:
            raise ConfigError("max_frames must be at least 1")
        return FrameSampling(mode="fps", fps=float(fps), max_frames=max_frames or 32)
    if max_frames is not None:
        raise ConfigError("max_frames caps the fps sampling: give fps too")
    if frames is not None and frames < 1:
        raise ConfigError("frames must be at least 1")
    return FrameSampling(mode="uniform", count=8 if frames is None else frames)


def choose_indices(total: int, fps: float, sampling: FrameSampling) -> list[int]:
    """Which of ``total`` frames (at ``fps``) the sampling keeps, in presentation order."""
    if total <= 0:
        return []
    if sampling.mode == "uniform":
        count = min(sampling.count, total)
        return sorted({int((i + 0.5) * total / count) for i in range(count)})
    # A rate above the video's own keeps every frame: a step under one frame would only list
    # each frame many times over (and, for a huge rate, loop for ever).
    step = max(1.0, fps / sampling.fps)
    picked = sorted({round(i * step) for i in range(int((total - 1) / step) + 1)})
    if len(picked) > sampling.max_frames:
        picked = [
            picked[int((i + 0.5) * len(picked) / sampling.max_frames)]
            for i in range(sampling.max_frames)
        ]
    return picked
