"""Seeking gives exactly the frames, times and indices of a decode of every frame."""

from __future__ import annotations

from fractions import Fraction

import pytest

from gavel.media import decode
from gavel.media.frames import FrameSampling, choose_indices, sample_frames

av = pytest.importorskip("av")
np = pytest.importorskip("numpy")

SAMPLINGS = [
    FrameSampling(count=8),
    FrameSampling(count=3),
    FrameSampling(mode="fps", fps=3, max_frames=32),
    FrameSampling(mode="fps", fps=2, max_frames=5),
]

#: Each codec with short keyframe intervals, so most frames are reached from a keyframe before.
CODECS = {
    "h264-bframes.mp4": dict(options={"g": "10", "bf": "3"}),
    "h264-bframes.mkv": dict(options={"g": "10", "bf": "3"}),
    "mpeg4-bframes.mp4": dict(codec="mpeg4", options={"g": "10", "bf": "2", "qscale": "3"}),
    "vp9.webm": dict(
        codec="libvpx-vp9", options={"g": "10", "deadline": "realtime", "cpu-used": "8"}
    ),
    # Variable frame rate: intervals of 60, 100, 140 and 180 ms in turn.
    "vfr-h264.mp4": dict(
        options={"g": "10", "bf": "2"},
        time_base=Fraction(1, 1000),
        stamps=[sum(60 + 40 * (k % 4) for k in range(i)) for i in range(40)],
    ),
}


def assert_same_as_full_decode(path, frames, sampling, full_decode):
    images, stamps, rate = full_decode(path)
    keep = choose_indices(len(images), rate, sampling)
    assert frames.indices == tuple(keep)
    assert frames.total_frames == len(images)
    assert frames.duration == len(images) / rate
    assert frames.times == tuple(i / rate if stamps[i] is None else stamps[i] for i in keep)
    assert len(frames.images) == len(keep)
    for image, i in zip(frames.images, keep, strict=True):
        assert np.array_equal(image, images[i]), f"frame {i} differs"


@pytest.mark.parametrize("name", CODECS)
def test_seeking_gives_the_full_decodes_pixels(tmp_path, write_video, full_decode, name):
    path = write_video(tmp_path / name, **CODECS[name])
    for sampling in SAMPLINGS:
        frames = sample_frames(path, sampling)
        assert frames.method == "seek"  # reached by seeking, not by the one-pass fallback
        assert_same_as_full_decode(path, frames, sampling, full_decode)


def test_the_b_frame_files_really_reorder(tmp_path, write_video):
    """The B-frame cases test something: packets are stored out of presentation order."""
    for name in ("h264-bframes.mp4", "mpeg4-bframes.mp4", "vfr-h264.mp4"):
        path = write_video(tmp_path / name, **CODECS[name])
        with av.open(str(path)) as container:
            stamps = [p.pts for p in container.demux(video=0) if p.size]
        assert stamps != sorted(stamps), name


def test_vfr_times_are_the_files_own(tmp_path, write_video):
    path = write_video(tmp_path / "vfr.mp4", **CODECS["vfr-h264.mp4"])
    frames = sample_frames(path, FrameSampling(count=4))
    stamps = CODECS["vfr-h264.mp4"]["stamps"]
    assert frames.times == pytest.approx([stamps[i] / 1000 for i in frames.indices])


def test_only_the_kept_frames_are_converted(tmp_path, write_video, monkeypatch):
    path = write_video(tmp_path / "long.mp4", 120, options={"g": "12", "bf": "3"})
    converted = []
    real = decode.to_rgb
    monkeypatch.setattr(decode, "to_rgb", lambda frame: converted.append(frame.pts) or real(frame))
    frames = sample_frames(path, FrameSampling(count=4))
    assert len(converted) == 4 and len(frames.images) == 4


def test_frames_far_apart_are_reached_by_seeking_not_decoding_through(
    tmp_path, write_video, monkeypatch
):
    """Work follows the kept frames: with 4 of 240 frames and a keyframe every 12, far fewer
    than 240 frames are decoded."""
    path = write_video(tmp_path / "long.mp4", 240, options={"g": "12", "bf": "3"})
    decoded = []
    real = decode._decoded

    def counting(first, packets):
        for frame in real(first, packets):
            decoded.append(frame.pts)
            yield frame

    monkeypatch.setattr(decode, "_decoded", counting)
    frames = sample_frames(path, FrameSampling(count=4))
    assert frames.method == "seek"
    assert len(decoded) <= 4 * 12 + 4 * 4  # a keyframe interval (and B-frame delay) per frame


def test_files_without_timestamps_are_decoded_in_one_pass(tmp_path, write_video, full_decode):
    """A raw H.264 stream has no timestamps to seek by: one pass, the same frames."""
    path = write_video(tmp_path / "raw.h264", format="h264", options={"g": "10"})
    for sampling in SAMPLINGS:
        frames = sample_frames(path, sampling)
        assert frames.method == "one pass"
        assert_same_as_full_decode(path, frames, sampling, full_decode)


def test_a_seek_that_misses_falls_back_to_one_pass(tmp_path, write_video, full_decode, monkeypatch):
    """Where a demuxer's seek does not land where the index says, the answer is still right."""
    path = write_video(tmp_path / "h264.mp4", options={"g": "10", "bf": "3"})

    def unreliable(container, stream, index, start):
        raise decode.SeekUnreliable("simulated")

    monkeypatch.setattr(decode, "_seek", unreliable)
    frames = sample_frames(path, FrameSampling(count=5))
    assert frames.method == "one pass"
    assert_same_as_full_decode(path, frames, FrameSampling(count=5), full_decode)
