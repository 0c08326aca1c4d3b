"""The frames a video stream holds, read from its packets without decoding a single one.

A frame is identified by its presentation timestamp (pts): frame ``i`` of a video is the one
with the ``i``-th smallest pts, which is the ``i``-th frame a decoder outputs (decoders output
in presentation order, whatever order B-frames are stored in). One pass over the container's
packets gives every pts, which packets are keyframes, and so the count, without converting a
pixel: a few milliseconds per minute of video, and exact even when the container's own
``frames`` field or duration is wrong or missing (the field is kept, for the record).

Seeking needs this map to be trustworthy; :attr:`VideoIndex.seekable` is False whenever it may
not be (a packet without pts, two packets with one pts, a first packet that is not a keyframe,
packets the demuxer marks to discard or as corrupt), and the caller then decodes in one pass.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

_EMPTY = np.zeros(0, dtype=np.int64)
#: Stands for a packet without a pts while scanning (no real timestamp is this small).
_MISSING = -(2**63)


@dataclass(frozen=True, eq=False)
class VideoIndex:
    """What the packets say. Timestamps are held as int64 arrays (8 bytes a frame, about 24 MB
    for a nine-hour video at 30 fps) rather than Python lists, tuples and dicts (over 100 MB)."""

    #: Presentation timestamps in presentation order (stream time base); None if any is missing.
    pts: np.ndarray | None
    #: How many frames the stream holds (its packets with data).
    count: int
    time_base: Fraction
    #: Frames per second: the stream's average rate, else measured from the timestamps.
    rate: float
    seekable: bool
    #: The container's ``frames`` field (0 when it has none); not trusted, only recorded.
    declared_frames: int
    #: pts of each packet in decode order, and the decode positions of the keyframes.
    decode_pts: np.ndarray = field(default_factory=lambda: _EMPTY)
    keyframes: np.ndarray = field(default_factory=lambda: _EMPTY)
    #: The decode position of each frame of ``pts`` (the order that sorts ``decode_pts``).
    _order: np.ndarray = field(default_factory=lambda: _EMPTY, repr=False, compare=False)

    def start_for(self, pts: int) -> int:
        """The decode position of the keyframe to start decoding at to reach frame ``pts``:
        the last keyframe stored before it whose own pts is not later."""
        position = self.position(pts)
        if position is None:
            raise KeyError(pts)
        k = int(np.searchsorted(self.keyframes, position, side="right")) - 1
        while k > 0 and self.decode_pts[self.keyframes[k]] > pts:
            k -= 1
        return int(self.keyframes[max(k, 0)])

    def position(self, pts: int) -> int | None:
        """The decode position of the packet with this pts (None for a pts not in the index)."""
        if self.pts is None or not len(self._order):
            return None
        at = int(np.searchsorted(self.pts, pts))
        if at < len(self.pts) and self.pts[at] == pts:
            return int(self._order[at])
        return None


def read_index(container: Any, stream: Any) -> VideoIndex:
    """Scan ``stream``'s packets (the container is left at its end: seek before decoding)."""
    stamps = array("q")  # pts in decode order (_MISSING where a packet has none)
    keyframes = array("q")
    trusted = complete = True
    for packet in container.demux(stream):
        if not packet.size:  # the flush packet PyAV adds at the end
            continue
        if packet.is_keyframe:
            keyframes.append(len(stamps))
        if packet.is_discard or packet.is_corrupt:
            trusted = False
        if packet.pts is None:
            complete = False
            stamps.append(_MISSING)
        else:
            stamps.append(packet.pts)
    time_base = stream.time_base or Fraction(1, 1)
    decode_pts = np.frombuffer(stamps, dtype=np.int64) if stamps else _EMPTY
    order = np.argsort(decode_pts, kind="stable")
    ordered = decode_pts[order]
    rate = float(stream.average_rate) if stream.average_rate else 0.0
    if not rate:  # measured as from the decoded frames' times, float for float
        known = ordered if complete else ordered[ordered != _MISSING]
        first, last = (
            (float(int(known[0])) * time_base.numerator / time_base.denominator,
             float(int(known[-1])) * time_base.numerator / time_base.denominator)
            if len(known) else (0.0, 0.0)
        )  # fmt: skip
        rate = (len(known) - 1) / (last - first) if len(known) > 1 and last > first else 1.0
    seekable = (
        trusted
        and complete
        and len(stamps) > 0
        and keyframes[:1] == array("q", [0])
        and not bool(np.any(ordered[1:] == ordered[:-1]))
    )
    return VideoIndex(
        pts=ordered if complete else None,
        count=len(stamps),
        time_base=Fraction(time_base),
        rate=rate,
        seekable=seekable,
        declared_frames=int(stream.frames or 0),
        decode_pts=decode_pts if seekable else _EMPTY,
        keyframes=np.frombuffer(keyframes, dtype=np.int64) if seekable and keyframes else _EMPTY,
        _order=order if seekable else _EMPTY,
    )
