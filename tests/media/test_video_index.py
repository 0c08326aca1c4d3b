"""The packet scan counts frames and maps them to timestamps whatever the container claims."""

from __future__ import annotations

import struct

import pytest

from gavel.media.frames import FrameSampling, sample_frames
from gavel.media.video_index import read_index

av = pytest.importorskip("av")
np = pytest.importorskip("numpy")


def index_of(path):
    with av.open(str(path)) as container:
        return read_index(container, container.streams.video[0])


def test_b_frames_are_indexed_in_presentation_order(tmp_path, write_video):
    path = write_video(tmp_path / "b.mp4", 20, options={"g": "10", "bf": "3"})
    index = index_of(path)
    assert index.count == 20 and index.seekable
    assert list(index.pts) == sorted(index.decode_pts) and list(index.pts) != list(index.decode_pts)
    # Every frame's keyframe comes no later in the file and shows no later.
    for pts in index.pts:
        start = index.start_for(pts)
        assert start in index.keyframes
        assert start <= index.position(pts) and index.decode_pts[start] <= pts


def test_a_lying_frame_count_does_not_change_the_frames(tmp_path, write_video, full_decode):
    """An AVI whose headers claim 1000 frames (and so a 125 s duration) for its 40."""
    path = write_video(tmp_path / "honest.avi", codec="mpeg4", options={"g": "10"})
    data = bytearray(path.read_bytes())
    stream_header, main_header = data.index(b"strh"), data.index(b"avih")
    struct.pack_into("<I", data, stream_header + 8 + 32, 1000)  # strh dwLength
    struct.pack_into("<I", data, main_header + 8 + 16, 1000)  # avih dwTotalFrames
    lying = tmp_path / "lying.avi"
    lying.write_bytes(bytes(data))
    with av.open(str(lying)) as container:
        assert container.streams.video[0].frames == 1000  # the lie is really read
    assert index_of(lying).declared_frames == 1000 and index_of(lying).count == 40
    frames = sample_frames(lying, FrameSampling(count=4))
    truth = sample_frames(path, FrameSampling(count=4))
    images, _, _ = full_decode(path)
    assert frames.indices == truth.indices == (5, 15, 25, 35)
    assert frames.total_frames == 40
    assert all(
        np.array_equal(a, images[i]) for a, i in zip(frames.images, frames.indices, strict=True)
    )


def test_a_missing_duration_does_not_change_the_frames(tmp_path, write_video, full_decode):
    """An MP4 whose movie, track and media durations are all zeroed."""
    path = write_video(tmp_path / "whole.mp4", options={"g": "10", "bf": "2"})
    data = bytearray(path.read_bytes())
    for box, offset in ((b"mvhd", 16), (b"tkhd", 20), (b"mdhd", 16)):  # version-0 boxes
        struct.pack_into(">I", data, data.index(box) + 4 + offset, 0)
    cut = tmp_path / "no-duration.mp4"
    cut.write_bytes(bytes(data))
    with av.open(str(cut)) as container:
        assert container.duration is None  # the duration is really gone
    frames = sample_frames(cut, FrameSampling(mode="fps", fps=2))
    images, _, _ = full_decode(path)
    assert frames.indices == (0, 4, 8, 12, 16, 20, 24, 28, 32, 36)
    assert frames.duration == pytest.approx(5.0)
    assert all(
        np.array_equal(a, images[i]) for a, i in zip(frames.images, frames.indices, strict=True)
    )


def test_webm_has_no_frame_count_and_is_counted_from_its_packets(tmp_path, write_video):
    path = write_video(tmp_path / "v.webm", 30, codec="libvpx-vp9",
                       options={"deadline": "realtime", "cpu-used": "8"})  # fmt: skip
    index = index_of(path)
    assert index.declared_frames == 0 and index.count == 30 and index.seekable


def test_a_stream_without_timestamps_is_not_seekable(tmp_path, write_video):
    index = index_of(write_video(tmp_path / "raw.h264", 12, format="h264"))
    assert index.count == 12 and not index.seekable


def test_the_index_of_a_long_stream_costs_a_few_bytes_a_frame():
    """An hour at 30 fps (108,000 packets, a keyframe every 250, B-frame reordering) scanned
    from a stand-in demuxer: the index keeps its timestamps in int64 arrays, so what it holds
    and what the scan allocates at its peak stay near 8 bytes per array per frame (Python
    tuples and dicts of ints took over 100 bytes a frame)."""
    import tracemalloc
    from fractions import Fraction
    from types import SimpleNamespace

    frames = 108_000
    reorder = [0, 3, 1, 2]  # decode order within each group of four (I/P then B-frames)

    class Container:
        def demux(self, stream):
            for n in range(frames):
                pts = (n // 4) * 4 + reorder[n % 4]
                yield SimpleNamespace(size=1, is_keyframe=n % 250 == 0, is_discard=False,
                                      is_corrupt=False, pts=pts * 512)  # fmt: skip

    stream = SimpleNamespace(time_base=Fraction(1, 15360), average_rate=30, frames=0)
    tracemalloc.start()
    index = read_index(Container(), stream)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert index.count == frames and index.seekable
    held = index.pts.nbytes + index.decode_pts.nbytes + index.keyframes.nbytes
    assert held <= 3 * 8 * frames + 8 * frames // 250 + 64
    assert peak < 48 * frames  # arrays, the sort's temporary copies, a few packets
    # The lookups still find every frame's keyframe.
    for pts in index.pts[:: frames // 97]:
        start = index.start_for(int(pts))
        assert start % 250 == 0 and index.decode_pts[start] <= pts
        assert index.position(int(pts)) is not None
    assert index.position(1) is None
