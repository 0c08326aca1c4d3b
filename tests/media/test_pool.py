"""Decoding off the event loop, on a pool sized to the cores, once per video in flight."""

from __future__ import annotations

import asyncio
import threading

import pytest

import gavel.media.frames as frames_module
from gavel.media.frames import FrameSampling
from gavel.media.pool import cores, decode_pool, sample_frames_async

pytest.importorskip("av")


def test_the_pool_has_a_thread_per_core():
    assert decode_pool()._max_workers == cores() >= 1


def test_the_event_loop_runs_while_a_video_decodes(tmp_path, monkeypatch, counting_video):
    """The decode waits for a coroutine on the loop to let it go: were decoding on the loop,
    the coroutine could not run and the decode would wait in vain."""
    path = counting_video(tmp_path / "count.mp4", 8)
    released = threading.Event()
    seen = {}
    real = frames_module._read

    def gated(p, s):
        seen["released while decoding"] = released.wait(10)
        return real(p, s)

    monkeypatch.setattr(frames_module, "_read", gated)

    async def main():
        decoding = asyncio.create_task(sample_frames_async(path, FrameSampling(count=2)))
        await asyncio.sleep(0)
        released.set()
        return await decoding

    frames = asyncio.run(main())
    assert seen == {"released while decoding": True} and frames.indices == (2, 6)


def test_a_pairs_two_questions_share_one_decode(tmp_path, monkeypatch, counting_video):
    path = counting_video(tmp_path / "count.mp4", 8)
    calls = []
    real = frames_module._read
    monkeypatch.setattr(frames_module, "_read", lambda p, s: calls.append(p) or real(p, s))

    async def main():
        sampling = FrameSampling(count=3)
        return await asyncio.gather(*(sample_frames_async(path, sampling) for _ in range(2)))

    basic, hallucination = asyncio.run(main())
    assert basic is hallucination and len(calls) == 1


def test_decoding_errors_reach_every_waiter(tmp_path):
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(b"not a video at all")

    async def main():
        sampling = FrameSampling(count=3)
        return await asyncio.gather(
            *(sample_frames_async(broken, sampling) for _ in range(2)), return_exceptions=True
        )

    errors = asyncio.run(main())
    assert all("cannot read video" in str(e) and str(broken) in str(e) for e in errors)
