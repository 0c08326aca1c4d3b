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

from bisect import bisect_right
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any


@dataclass(frozen=True)
class VideoIndex:
    #: Presentation timestamps in presentation order (stream time base); None if any is missing.
    pts: tuple[int, ...] | None
    #: How many frames the stream holds (its packets with data).
    count: int
    time_base: Fraction
    #: Frames per second: the stream's average rate, else measured from the timestamps.
    rate: float
    seekable: bool
    #: The container's ``frames`` field (0 when it has none); not trusted, only recorded.
    declared_frames: int
    #: pts of each packet in decode order, and the decode positions of the keyframes.
    decode_pts: tuple[int, ...] = ()
    keyframes: tuple[int, ...] = ()
    _position: dict[int, int] = field(default_factory=dict, repr=False, compare=False)

    def start_for(self, pts: int) -> int:
        """The decode position of the keyframe to start decoding at to reach frame ``pts``:
        the last keyframe stored before it whose own pts is not later."""
        position = self._position[pts]
        k = bisect_right(self.keyframes, position) - 1
        while k > 0 and self.decode_pts[self.keyframes[k]] > pts:
            k -= 1
        return self.keyframes[max(k, 0)]

    def position(self, pts: int) -> int | None:
        """The decode position of the packet with this pts (None for a pts not in the index)."""
        return self._position.get(pts)


def read_index(container: Any, stream: Any) -> VideoIndex:
    """Scan ``stream``'s packets (the container is left at its end: seek before decoding)."""
    decode_pts: list[int | None] = []
    keyframes: list[int] = []
    trusted = True
    for packet in container.demux(stream):
        if not packet.size:  # the flush packet PyAV adds at the end
            continue
        if packet.is_keyframe:
            keyframes.append(len(decode_pts))
        if packet.is_discard or packet.is_corrupt:
            trusted = False
        decode_pts.append(packet.pts)
    time_base = stream.time_base or Fraction(1, 1)
    known = [p for p in decode_pts if p is not None]
    ordered = sorted(known)
    rate = float(stream.average_rate) if stream.average_rate else 0.0
    if not rate:  # measured as from the decoded frames' times, float for float
        times = [float(p) * time_base.numerator / time_base.denominator for p in ordered]
        rate = (
            (len(times) - 1) / (times[-1] - times[0])
            if len(times) > 1 and times[-1] > times[0]
            else 1.0
        )
    complete = len(known) == len(decode_pts)
    seekable = (
        trusted
        and complete
        and bool(decode_pts)
        and keyframes[:1] == [0]
        and len(set(known)) == len(known)
    )
    return VideoIndex(
        pts=tuple(ordered) if complete else None,
        count=len(decode_pts),
        time_base=Fraction(time_base),
        rate=rate,
        seekable=seekable,
        declared_frames=int(stream.frames or 0),
        decode_pts=tuple(known) if seekable else (),
        keyframes=tuple(keyframes) if seekable else (),
        _position={p: i for i, p in enumerate(known)} if seekable else {},
    )
