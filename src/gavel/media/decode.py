"""Decoding the chosen frames of a video, converting only those to RGB.

Two strategies, giving the same pixels:

- :func:`by_seeking`: for each chosen frame, seek to the keyframe it depends on and decode
  forward to it (or keep decoding when it lies in the run already being decoded). Work and
  memory grow with the number of frames kept, not with the video's length.
- :func:`in_one_pass`: decode the whole stream once, converting the frames at the chosen
  positions; for files whose timestamps cannot be trusted to seek by, or where seeking did
  not land where the index says it should.

Frames are returned as displayed: a display matrix (phones' rotated videos) turns the picture
by its quarter turns.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Sequence
from typing import Any

import numpy as np

from gavel.media.video_index import VideoIndex

#: Seeks tried for one frame before seeking is given up on for the file.
SEEK_TRIES = 3


class SeekUnreliable(Exception):
    """Seeking did not reach a frame where the index says it is (the caller decodes in one
    pass instead)."""


def to_rgb(frame: Any) -> np.ndarray:
    """The frame as an RGB array, turned as its display matrix says."""
    image = frame.to_ndarray(format="rgb24")
    turns = round((getattr(frame, "rotation", 0) or 0) / 90) % 4  # PyAV 14 reads the matrix
    return np.ascontiguousarray(np.rot90(image, turns)) if turns else image


def by_seeking(
    container: Any, stream: Any, index: VideoIndex, positions: Sequence[int]
) -> list[tuple[np.ndarray, float]]:
    """The frames at ``positions`` (presentation order, ascending) and their times.

    Raises :class:`SeekUnreliable` when a seek lands after the keyframe it aimed at, on a
    packet the index does not know, or when decoding passes a frame's pts without meeting it.
    """
    assert index.pts is not None
    kept: list[tuple[np.ndarray, float]] = []
    frames: Generator[Any, None, None] | None = None
    last = None  # pts of the last frame taken from ``frames``
    for position in positions:
        target = int(index.pts[position])
        start = index.start_for(target)
        start_pts = int(index.decode_pts[start])
        if frames is None or last is None or start_pts > last:
            if frames is not None:
                frames.close()  # stops the previous run's demuxing
            frames = _seek(container, stream, index, start)
        for frame in frames:
            if frame.pts is None:
                raise SeekUnreliable("a decoded frame has no timestamp")
            last = frame.pts
            if frame.pts == target:
                kept.append((to_rgb(frame), frame.time))
                break
            if frame.pts > target:
                raise SeekUnreliable(f"decoding passed pts {target} without meeting it")
        else:
            raise SeekUnreliable(f"the stream ended before pts {target}")
    return kept


def _seek(container: Any, stream: Any, index: VideoIndex, start: int) -> Generator[Any, None, None]:
    """Frames decoded from the keyframe at decode position ``start`` (or an earlier one)."""
    keyframe_pts = int(index.decode_pts[start])
    earlier = [int(index.decode_pts[k]) for k in index.keyframes[index.keyframes < start][::-1]]
    # The keyframe's own pts first; then earlier keyframes, for demuxers that seek by dts.
    for target in [keyframe_pts, *earlier][:SEEK_TRIES]:
        container.seek(target, stream=stream, backward=True, any_frame=False)
        packets = container.demux(stream)
        first = next((p for p in packets if p.size), None)
        if first is None or first.pts is None:
            continue
        landed = index.position(first.pts)
        if landed is None or not first.is_keyframe:
            raise SeekUnreliable(f"a seek landed on pts {first.pts}, not on a keyframe")
        if landed <= start:
            return _decoded(first, packets)
    raise SeekUnreliable(f"no seek reached the keyframe at pts {keyframe_pts}")


def _decoded(first: Any, packets: Iterator[Any]) -> Generator[Any, None, None]:
    yield from first.decode()
    for packet in packets:
        yield from packet.decode()  # the last, empty packet flushes the decoder


def in_one_pass(
    container: Any, stream: Any, positions: Sequence[int]
) -> tuple[list[tuple[np.ndarray, float | None]], list[float | None]]:
    """The frames at ``positions`` of the decoded stream, and every frame's time (None where
    a frame has no timestamp): one sequential pass over a freshly opened ``container``,
    converting only those."""
    wanted = set(positions)
    kept: list[tuple[np.ndarray, float | None]] = []
    times: list[float | None] = []
    for frame in container.decode(stream):
        if len(times) in wanted:
            kept.append((to_rgb(frame), frame.time))
        times.append(frame.time)
    return kept, times
