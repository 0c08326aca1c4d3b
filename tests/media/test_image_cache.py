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


def _ask(cache: EncodedImages, names, size: int = 400) -> int:
    """Each name asked for in turn (encoded and put on a miss); how many were found."""
    found = 0
    for name in names:
        if cache.get(name) is not None:
            found += 1
        else:
            cache.put(name, _image(size))
    return found


def test_files_that_come_back_in_a_cycle_longer_than_the_budget_are_still_found() -> None:
    # Ten files in a cycle, room for four: least recently used alone evicts each file just
    # before it is asked again and finds none; keeping what is held finds four a round.
    cache = EncodedImages(max_bytes=4 * 400)
    names = [f"image{i}" for i in range(10)]
    _ask(cache, names)  # the first round: every file encoded
    assert [_ask(cache, names) for _ in range(5)] == [4] * 5
    assert len(cache) == 4 and cache.bytes == 1600 and cache.refused == 5 * (10 - 4)


def test_a_cycle_one_file_longer_than_the_budget_finds_all_but_one() -> None:
    # Room for nine of ten: least recently used alone finds none (each file leaves one request
    # before it comes back); only the file that left is sent without being kept.
    names = [f"image{i}" for i in range(10)]
    cache = EncodedImages(max_bytes=9 * 400)
    _ask(cache, names)
    assert _ask(cache, names) == 9 and cache.refused == 1


def test_a_file_that_left_and_is_then_in_use_again_is_kept() -> None:
    cache = EncodedImages(max_bytes=2 * 400)
    _ask(cache, ["a", "b", "c"])  # a left
    # a asked five times in a row: refused once as a cycle, then it is in use: kept.
    assert _ask(cache, ["a"] * 5) == 3 and cache.get("a") is not None and cache.refused == 1


def test_files_in_order_of_their_image_leave_as_before() -> None:
    # Several captions per image, an image's captions together: each file is found for its
    # later captions and leaves when it is no longer asked for, as least recently used does.
    cache = EncodedImages(max_bytes=2 * 400)
    names = [f"image{i}" for i in range(20) for _ in range(3)]
    assert _ask(cache, names) == 40 and cache.refused == 0 and len(cache) == 2


def test_the_keys_remembered_are_bounded() -> None:
    cache = EncodedImages(max_bytes=400)
    _ask(cache, [f"image{i}" for i in range(5000)])
    assert len(cache._left) <= 256 and len(cache) == 1


def test_get_or_make_encodes_once_without_an_event_loop() -> None:
    cache, made = EncodedImages(max_bytes=1000), []

    def make():
        made.append(1)
        return _image(400)

    first = cache.get_or_make("a", make)
    assert cache.get_or_make("a", make) is first and len(made) == 1
    assert (cache.hits, cache.misses) == (1, 1)
