"""Sampling frames from a video (PyAV), in memory that does not grow with the video's length.

Which frames are kept is :func:`gavel.media.sampling.choose_indices` over the frame count and
rate; frame ``i`` is the one with the ``i``-th smallest presentation timestamp, which is the
``i``-th frame a full decode outputs. The count and every timestamp come from one pass over the
packets (:mod:`gavel.media.video_index`, no decoding); the kept frames are then reached by
seeking to the keyframe before each and decoding forward, converting only those to RGB
(:mod:`gavel.media.decode`). Files whose timestamps cannot be seeked by are decoded in one
sequential pass instead, still converting only the kept frames; both give the frames, times
and indices a decode of every frame would.

Sampled frames are kept in a small in-memory cache keyed by the file's path, size,
modification time and the sampling, because the two questions of a VideoHallucer pair share a
video; a video being decoded for one caller is waited for by the others, never decoded twice.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gavel.errors import DataError, GavelError
from gavel.media.sampling import FrameSampling, choose_indices
from gavel.regular_files import require_regular

__all__ = [
    "CACHE_BYTES",
    "CACHE_SIZE",
    "FrameSampling",
    "Frames",
    "choose_indices",
    "sample_frames",
]

log = logging.getLogger(__name__)

#: The cache holds at most this many samplings, and at most this many bytes of pixels (the
#: latest one always, whatever its size).
CACHE_SIZE = 16
CACHE_BYTES = 256 * 2**20


@dataclass(frozen=True)
class Frames:
    images: tuple[np.ndarray, ...]
    #: Time of each frame in seconds, and the index of each frame in presentation order.
    times: tuple[float, ...]
    indices: tuple[int, ...]
    total_frames: int
    duration: float
    #: How the frames were reached: ``seek`` or ``one pass`` (see the module's docstring).
    method: str = "seek"

    @property
    def nbytes(self) -> int:
        return sum(image.nbytes for image in self.images)


def _rate(average_rate: Any, stamps: list[float | None]) -> float:
    """Frames per second: the stream's average rate, else measured from the frames' times."""
    rate = float(average_rate) if average_rate else 0.0
    if rate:
        return rate
    known = [t for t in stamps if t is not None]
    if len(known) > 1 and known[-1] > known[0]:
        return (len(known) - 1) / (known[-1] - known[0])
    return 1.0


def _video_stream(container: Any, path: Path) -> Any:
    """The first video stream that is not a cover picture."""
    import av

    videos = list(container.streams.video)
    cover = getattr(getattr(av.stream, "Disposition", None), "attached_pic", 0)  # PyAV >= 13
    moving = [s for s in videos if not (cover and s.disposition & cover)]
    if not videos:
        what = "no video stream" if len(container.streams) else "no streams (cut short?)"
        raise GavelError(f"cannot read video {path}: it has {what}")
    return (moving or videos)[0]


def _read(path: Path, sampling: FrameSampling) -> Frames:
    import av

    from gavel.media.decode import SeekUnreliable, by_seeking, in_one_pass
    from gavel.media.video_index import read_index

    try:
        require_regular(path)  # av would wait forever on a FIFO, or read a device without end
    except DataError as error:
        raise GavelError(f"cannot read video {path}: {error.message}") from None
    except OSError as error:
        raise GavelError(f"cannot read video {path}: {error.strerror or error}") from None
    try:
        with av.open(str(path)) as container:
            stream = _video_stream(container, path)
            index = read_index(container, stream)
            if index.count == 0:
                raise GavelError(f"cannot read video {path}: its video stream has no frames")
            keep = choose_indices(index.count, index.rate, sampling)
            if index.seekable:
                try:
                    sought = by_seeking(container, stream, index, keep)
                except SeekUnreliable as why:
                    log.info("%s: decoding in one pass (%s)", path, why)
                else:
                    times = tuple(float(t) for _, t in sought)
                    return Frames(
                        images=tuple(image for image, _ in sought),
                        times=times,
                        indices=tuple(keep),
                        total_frames=index.count,
                        duration=index.count / index.rate,
                    )
        # One pass; a second one only if the decoder's frames disagree with the packets.
        for _ in range(2):
            with av.open(str(path)) as container:
                stream = _video_stream(container, path)
                picked, stamps = in_one_pass(container, stream, keep)
                rate = _rate(stream.average_rate, stamps)
            if choose_indices(len(stamps), rate, sampling) == keep:
                break
            keep = choose_indices(len(stamps), rate, sampling)
        else:
            raise GavelError(f"cannot read video {path}: two decodes gave different frames")
    except av.error.FFmpegError as error:
        raise GavelError(f"cannot read video {path}: {error}") from None
    if not stamps:
        raise GavelError(f"cannot read video {path}: no frame could be decoded")
    return Frames(
        images=tuple(image for image, _ in picked),
        times=tuple(
            float(t) if t is not None else i / rate for (_, t), i in zip(picked, keep, strict=True)
        ),
        indices=tuple(keep),
        total_frames=len(stamps),
        duration=len(stamps) / rate,
        method="one pass",
    )


_CACHE: OrderedDict[tuple, Frames] = OrderedDict()
_PENDING: dict[tuple, Future] = {}
_LOCK = threading.Lock()


def cache_key(path: Path, sampling: FrameSampling) -> tuple:
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        raise GavelError(f"video not found: {path}") from None
    except OSError as error:
        raise GavelError(f"cannot read video {path}: {error.strerror}") from None
    return (str(path.resolve()), stat.st_size, stat.st_mtime_ns, sampling)


def claim(key: tuple) -> tuple[Future, bool]:
    """The future of ``key``'s frames, and whether the caller must fill it (by :func:`fill`):
    a cached or in-progress sampling is shared, so one video is decoded once."""
    with _LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            done: Future = Future()
            done.set_result(_CACHE[key])
            return done, False
        if key in _PENDING:
            return _PENDING[key], False
        future: Future = Future()
        future.set_running_or_notify_cancel()  # a waiter giving up cannot cancel it for others
        _PENDING[key] = future
        return future, True


def fill(path: Path, sampling: FrameSampling, key: tuple, future: Future) -> None:
    """Decode and publish the frames of a claimed key (never raises: the future carries it)."""
    try:
        frames = _read(path, sampling)
    except BaseException as error:  # handed to every waiter
        with _LOCK:
            del _PENDING[key]
        future.set_exception(error)
        return
    with _LOCK:
        _CACHE[key] = frames
        held = sum(f.nbytes for f in _CACHE.values())
        while len(_CACHE) > 1 and (len(_CACHE) > CACHE_SIZE or held > CACHE_BYTES):
            _, dropped = _CACHE.popitem(last=False)
            held -= dropped.nbytes
        del _PENDING[key]
    future.set_result(frames)


DEFAULT_SAMPLING = FrameSampling()


def sample_frames(path: str | Path, sampling: FrameSampling = DEFAULT_SAMPLING) -> Frames:
    """The sampled frames of a video (RGB uint8 arrays, as displayed), from the cache when
    possible. Any unreadable file is one :class:`~gavel.errors.GavelError` naming it."""
    path = Path(path)
    key = cache_key(path, sampling)
    future, mine = claim(key)
    if mine:
        fill(path, sampling, key, future)
    return future.result()
