"""Frame sampling from real encoded videos whose frames carry their own index."""

from __future__ import annotations

import os
from pathlib import Path

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
    real = frames_module._read
    monkeypatch.setattr(frames_module, "_read", lambda p, s: calls.append(p) or real(p, s))
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


# --- unusual files: the right frames, or one clear error naming the file, never a hang -----


def sample_within(path, seconds=60.0):
    """``sample_frames`` in a thread that must finish (a hang fails the test instead)."""
    import threading

    outcome = {}

    def run():
        try:
            outcome["frames"] = sample_frames(path, FrameSampling(count=4))
        except BaseException as error:  # inspected by the caller
            outcome["error"] = error

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"sampling {path} hung"
    return outcome


def test_rotated_videos_come_out_as_displayed(tmp_path, write_video, full_decode):
    np = pytest.importorskip("numpy")
    for rotation, turns in ((90, 1), (-90, 3), (180, 2)):
        path = write_video(tmp_path / f"r{rotation}.mp4", 10, rotation=rotation)
        frames = sample_frames(path, FrameSampling(count=3))
        images, _, _ = full_decode(path)  # the stored, unturned pixels
        for image, i in zip(frames.images, frames.indices, strict=True):
            assert np.array_equal(image, np.rot90(images[i], turns))
        assert frames.images[0].shape == ((64, 48, 3) if turns % 2 else (48, 64, 3))


def test_odd_sizes_keep_every_pixel(tmp_path, write_video, full_decode):
    np = pytest.importorskip("numpy")
    path = write_video(tmp_path / "odd.mp4", 12, size=(65, 49), pix_fmt="yuv444p")
    frames = sample_frames(path, FrameSampling(count=3))
    images, _, _ = full_decode(path)
    assert frames.images[0].shape == (49, 65, 3)
    assert all(
        np.array_equal(a, images[i]) for a, i in zip(frames.images, frames.indices, strict=True)
    )


def test_a_one_frame_video(tmp_path, write_video):
    path = write_video(tmp_path / "one.mp4", 1)
    for sampling in (FrameSampling(count=8), FrameSampling(mode="fps", fps=30)):
        frames = sample_frames(path, sampling)
        assert frames.indices == (0,) and frames.total_frames == 1 and len(frames.images) == 1


def test_an_audio_only_file_is_a_clear_error(tmp_path):
    np = pytest.importorskip("numpy")
    path = tmp_path / "speech.mp4"
    with av.open(str(path), "w") as out:
        stream = out.add_stream("aac", rate=16000)
        samples = np.zeros((1, 16000), dtype=np.float32)
        frame = av.AudioFrame.from_ndarray(samples, format="fltp", layout="mono")
        frame.sample_rate = 16000
        for packet in [*stream.encode(frame), *stream.encode()]:
            out.mux(packet)
    outcome = sample_within(path)
    assert isinstance(outcome.get("error"), GavelError)
    assert str(path) in str(outcome["error"]) and "no video stream" in str(outcome["error"])


@pytest.mark.parametrize("keep", [0.3, 0.6, 0.9])
@pytest.mark.parametrize("faststart", [False, True])
def test_truncated_files_give_the_readable_frames_or_a_clear_error(
    tmp_path, write_video, full_decode, keep, faststart
):
    np = pytest.importorskip("numpy")
    options = {"movflags": "+faststart"} if faststart else {}
    whole = write_video(tmp_path / "whole.mp4", 40, options={"g": "10", "bf": "3"},
                        container_options=options)  # fmt: skip
    path = tmp_path / "cut.mp4"
    data = whole.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])
    outcome = sample_within(path)
    if "error" in outcome:
        assert isinstance(outcome["error"], GavelError) and str(path) in str(outcome["error"])
        return
    frames = outcome["frames"]
    images, _, _ = full_decode(path)  # what decoding every readable frame gives
    assert frames.total_frames == len(images)
    assert all(
        np.array_equal(a, images[i]) for a, i in zip(frames.images, frames.indices, strict=True)
    )


@pytest.mark.parametrize("where", [0.2, 0.5, 0.8])
def test_corrupt_bytes_give_frames_or_a_clear_error(tmp_path, write_video, where):
    path = write_video(tmp_path / "v.mp4", 40, options={"g": "10", "bf": "3"})
    data = bytearray(path.read_bytes())
    start = int(len(data) * where)
    data[start : start + 64] = bytes(range(64))
    path.write_bytes(bytes(data))
    outcome = sample_within(path)
    if "error" in outcome:
        assert isinstance(outcome["error"], GavelError) and str(path) in str(outcome["error"])
    else:
        assert 1 <= len(outcome["frames"].images) <= 4


def test_concurrent_callers_share_one_decode(tmp_path, monkeypatch, counting_video):
    import threading

    import gavel.media.frames as frames_module

    path = counting_video(tmp_path / "count.mp4", 8)
    calls, gate = [], threading.Event()
    real = frames_module._read

    def slow(p, s):
        calls.append(p)
        gate.wait(10)  # every caller arrives while the first is still decoding
        return real(p, s)

    monkeypatch.setattr(frames_module, "_read", slow)
    results = []
    threads = [
        threading.Thread(target=lambda: results.append(sample_frames(path, FrameSampling(count=2))))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    gate.set()
    for thread in threads:
        thread.join(10)
    assert len(calls) == 1 and len(results) == 4 and all(r is results[0] for r in results)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_pipe_or_a_device_is_refused_before_the_decoder_opens_it(tmp_path):
    # av would wait forever for a writer of the FIFO, and read /dev/zero without end.
    pipe = tmp_path / "clip.mp4"
    os.mkfifo(pipe)
    with pytest.raises(GavelError, match=r"cannot read video .*clip\.mp4: is a FIFO"):
        sample_frames(pipe, FrameSampling())
    with pytest.raises(GavelError, match=r"cannot read video /dev/zero: is a device"):
        sample_frames(Path("/dev/zero"), FrameSampling())
