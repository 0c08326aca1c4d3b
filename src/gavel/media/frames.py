"""Sampling frames from a video (PyAV), cached per video.

Two ways to choose frames, as video benchmarks and VLM servers use them:

- ``uniform``: ``count`` frames spread evenly over the whole video (the centre of each of
  ``count`` equal segments), the usual choice for models that take a fixed number of images;
- ``fps``: one frame every ``1 / fps`` seconds, at most ``max_frames`` (evenly thinned beyond).

Decoded frames are kept in a small in-memory cache keyed by the file's path, size, modification
time and the sampling, because the two questions of a VideoHallucer pair share a video.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gavel.errors import GavelError

CACHE_SIZE = 16


@dataclass(frozen=True)
class FrameSampling:
    mode: str = "uniform"  # "uniform" or "fps"
    count: int = 8
    fps: float = 1.0
    max_frames: int = 32

    def __post_init__(self) -> None:
        if self.mode not in ("uniform", "fps"):
            raise GavelError(f"unknown frame sampling {self.mode!r}; use uniform or fps")
        if self.count < 1 or self.max_frames < 1 or self.fps <= 0:
            raise GavelError("frame counts and fps must be positive")


@dataclass(frozen=True)
class Frames:
    images: tuple[np.ndarray, ...]
    #: Time of each frame in seconds, and the index of each frame in the decoded stream.
    times: tuple[float, ...]
    indices: tuple[int, ...]
    total_frames: int
    duration: float


def choose_indices(total: int, fps: float, sampling: FrameSampling) -> list[int]:
    """Which of ``total`` decoded frames (at ``fps``) the sampling keeps, in order."""
    if total <= 0:
        return []
    if sampling.mode == "uniform":
        count = min(sampling.count, total)
        return sorted({int((i + 0.5) * total / count) for i in range(count)})
    step = fps / sampling.fps
    picked = sorted({round(i * step) for i in range(int((total - 1) / step) + 1)})
    if len(picked) > sampling.max_frames:
        picked = [
            picked[int((i + 0.5) * len(picked) / sampling.max_frames)]
            for i in range(sampling.max_frames)
        ]
    return picked


def _decode(path: Path) -> tuple[list[np.ndarray], list[float], float]:
    import av

    try:
        with av.open(str(path)) as container:
            stream = container.streams.video[0]
            images, stamps = [], []
            for frame in container.decode(stream):
                images.append(frame.to_ndarray(format="rgb24"))
                stamps.append(frame.time)
            rate = float(stream.average_rate) if stream.average_rate else 0.0
    except (av.error.FFmpegError, IndexError) as error:
        raise GavelError(f"cannot read video {path}: {error}") from None
    known = [t for t in stamps if t is not None]
    if not rate:
        rate = (
            (len(known) - 1) / (known[-1] - known[0])
            if len(known) > 1 and known[-1] > known[0]
            else 1.0
        )
    times = [float(t) if t is not None else i / rate for i, t in enumerate(stamps)]
    return images, times, rate


_CACHE: OrderedDict[tuple, Frames] = OrderedDict()


def sample_frames(path: str | Path, sampling: FrameSampling = FrameSampling()) -> Frames:
    """The sampled frames of a video (RGB uint8 arrays), from the cache when possible."""
    path = Path(path)
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        raise GavelError(f"video not found: {path}") from None
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns, sampling)
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    images, times, rate = _decode(path)
    keep = choose_indices(len(images), rate, sampling)
    frames = Frames(
        images=tuple(images[i] for i in keep),
        times=tuple(times[i] for i in keep),
        indices=tuple(keep),
        total_frames=len(images),
        duration=len(images) / rate,
    )
    _CACHE[key] = frames
    if len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return frames
