"""Decoding videos off the event loop, on a thread pool sized to the machine's cores.

An asynchronous run keeps many requests in flight; were each to decode its video on the event
loop, every request would wait on one video at a time. Here decoding runs on a shared pool of
one thread per core (PyAV releases the interpreter lock while it decodes and converts, so the
threads run in parallel), while requests whose frames are ready go on being sent. A video
another request is already decoding is awaited, not decoded again and not waited for on a
pool thread: the two questions of a pair share one decode and keep both cores decoding.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from gavel.media.frames import Frames, cache_key, claim, fill
from gavel.media.sampling import FrameSampling

T = TypeVar("T")

_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def decode_pool() -> ThreadPoolExecutor:
    """The shared pool (made on first use), one thread per core."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=cores(), thread_name_prefix="gavel-decode")
        return _POOL


async def in_pool(function: Callable[..., T], *args: Any) -> T:
    """``function(*args)`` on the decode pool, awaited (for work that follows a decode, such
    as encoding the frames)."""
    return await asyncio.get_running_loop().run_in_executor(decode_pool(), function, *args)


async def sample_frames_async(path: str | Path, sampling: FrameSampling) -> Frames:
    """:func:`gavel.media.frames.sample_frames` without blocking the event loop."""
    path = Path(path)
    key = cache_key(path, sampling)
    future, mine = claim(key)
    if mine:
        decode_pool().submit(fill, path, sampling, key, future)
    return await asyncio.wrap_future(future)
