"""Encoded images kept for the requests that send them again: once per file, within a budget."""

from __future__ import annotations

import asyncio
import os

import pytest

from gavel.media.image_cache import EncodedImages
from gavel.media.image_urls import EncodedImage


def _image(size: int, tag: bytes = b"x") -> tuple[EncodedImage, ...]:
    return (EncodedImage(b'"' + tag * (size - 202) + b'"', (1, 1)),)  # nbytes == size


def test_the_oldest_entries_leave_once_the_budget_is_spent() -> None:
    cache = EncodedImages(max_bytes=1000)
    for name in "abc":
        cache.put(name, _image(400))
    assert cache.get("a") is None and len(cache) == 2 and cache.bytes == 800
    assert cache.get("b") is not None  # b is now the newest: c leaves next
    cache.put("d", _image(400))
    assert cache.get("c") is None and cache.get("b") is not None and cache.bytes == 800
    cache.put("huge", _image(5000))  # larger than the whole budget: not kept
    assert cache.get("huge") is None and cache.bytes == 800
    cache.put("b", _image(300))  # replaced: counted once
    assert cache.bytes == 700
    assert EncodedImages(0).max_bytes == 0
    with pytest.raises(ValueError):
        EncodedImages(-1)


def test_a_file_asked_for_at_once_by_many_requests_is_encoded_once() -> None:
    cache = EncodedImages()
    made = []

    async def make() -> tuple[EncodedImage, ...]:
        made.append(1)
        await asyncio.sleep(0.01)
        return _image(300)

    async def main() -> list[tuple[EncodedImage, ...]]:
        return await asyncio.gather(*(cache.fetch("k", make) for _ in range(20)))

    found = asyncio.run(main())
    assert len(made) == 1 and all(value is found[0] for value in found)
    assert (cache.misses, cache.hits) == (1, 19)
    asyncio.run(cache.fetch("k", make))  # another event loop: still kept
    assert len(made) == 1


def test_a_failed_encoding_reaches_every_request_that_waited_and_is_not_kept() -> None:
    cache = EncodedImages()
    calls = []

    async def broken() -> tuple[EncodedImage, ...]:
        calls.append(1)
        await asyncio.sleep(0.01)
        raise OSError("cannot read")

    async def main() -> list[object]:
        return await asyncio.gather(
            *(cache.fetch("k", broken) for _ in range(3)), return_exceptions=True
        )

    errors = asyncio.run(main())
    assert len(calls) == 1 and all(isinstance(e, OSError) for e in errors)
    assert len(cache) == 0


def test_a_cancelled_encoding_is_done_by_the_request_that_waited() -> None:
    cache = EncodedImages()

    async def slow() -> tuple[EncodedImage, ...]:
        await asyncio.sleep(0.05)
        return _image(300)

    async def main() -> tuple[EncodedImage, ...]:
        first = asyncio.create_task(cache.fetch("k", slow))
        await asyncio.sleep(0)
        second = asyncio.create_task(cache.fetch("k", slow))
        await asyncio.sleep(0.01)
        first.cancel()
        return await second

    assert asyncio.run(main())[0].size == (1, 1)
    assert len(cache) == 1


def test_a_file_changed_on_disk_is_another_entry(tmp_path) -> None:
    path = tmp_path / "a.png"
    path.write_bytes(b"one")
    first = EncodedImages.key(path)
    assert EncodedImages.key(path) == first
    path.write_bytes(b"other")
    os.utime(path, ns=(1, 1))
    assert EncodedImages.key(path) != first
    assert EncodedImages.key(tmp_path / "missing.png") == (str(tmp_path / "missing.png"), None)
