"""Frame sampling from real encoded videos whose frames carry their own index."""

from __future__ import annotations

import pytest

from gavel.errors import GavelError
from gavel.media.frames import FrameSampling, choose_indices, sample_frames

av = pytest.importorskip("av")


def level(image) -> int:
    return round(float(image.mean()) / 12)


def test_uniform_takes_the_centres_of_equal_segments(tmp_path, counting_video):
    path = tmp_path / "count.mp4"
    counting_video(path, 16)
    frames = sample_frames(path, FrameSampling(mode="uniform", count=4))
    assert frames.indices == (2, 6, 10, 14)  # centres of [0,4), [4,8), [8,12), [12,16)
    assert [level(image) for image in frames.images] == [2, 6, 10, 14]
    assert frames.total_frames == 16
    assert frames.duration == pytest.approx(2.0)
    assert frames.times == pytest.approx((0.25, 0.75, 1.25, 1.75))


def test_fps_sampling_with_a_cap(tmp_path, counting_video):
    path = tmp_path / "count.mp4"
    counting_video(path, 16)
    two_per_second = sample_frames(path, FrameSampling(mode="fps", fps=2))
    assert two_per_second.indices == (0, 4, 8, 12)
    assert [level(image) for image in two_per_second.images] == [0, 4, 8, 12]
    capped = sample_frames(path, FrameSampling(mode="fps", fps=8, max_frames=4))
    assert len(capped.indices) == 4


def test_choose_indices_edge_cases():
    assert choose_indices(3, 8.0, FrameSampling(count=8)) == [0, 1, 2]  # fewer frames than asked
    assert choose_indices(0, 8.0, FrameSampling()) == []
    assert choose_indices(10, 5.0, FrameSampling(mode="fps", fps=50)) == list(range(10))


def test_the_same_video_is_decoded_once(tmp_path, monkeypatch, counting_video):
    import gavel.media.frames as frames_module

    path = tmp_path / "count.mp4"
    counting_video(path, 8)
    calls = []
    real = frames_module._decode
    monkeypatch.setattr(frames_module, "_decode", lambda p: calls.append(p) or real(p))
    first = sample_frames(path, FrameSampling(count=2))
    second = sample_frames(path, FrameSampling(count=2))
    assert first is second and len(calls) == 1


def test_missing_or_broken_videos_are_clear_errors(tmp_path):
    with pytest.raises(GavelError, match="video not found"):
        sample_frames(tmp_path / "nope.mp4")
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(b"not a video at all")
    with pytest.raises(GavelError, match="cannot read video"):
        sample_frames(broken)
