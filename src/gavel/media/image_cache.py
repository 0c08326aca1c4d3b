"""Images encoded once per run, within a memory budget.

Several GAVEL captions are asked about one image, and the two questions of a VideoHallucer pair
about one video: reading, decoding and base64-encoding the same file for each request was most
of a client's CPU. :class:`EncodedImages` keeps what was sent for a file (its data URL, or a
video's sampled frames) for the next request that sends it, least recently used first out once
the entries hold more than ``max_bytes``, so memory is bounded whatever the data.

Least recently used alone keeps nothing useful when the files come back in a cycle longer than
the budget holds (a data file in caption order, each image's first caption, then each one's
second): each file leaves just before it is asked for again, and every request encodes. So the
keys of files that left are remembered (keys only, a few thousand), and a file that comes back
after it left, while the budget is full, is sent without being kept: what is held stays, and is
found on the next round (a cycle of N files with room for B keeps about B/N of them, not none).
A file that comes back twice within a budget's worth of requests is kept as usual: that is a
file in use again, not a cycle.

An entry is found again by the file's path, size, modification time and inode, so a file
replaced during a run is encoded afresh; a request for a file that is being encoded waits for
that encoding instead of starting another (on one event loop; a new loop, as a new
``asyncio.run`` makes, starts with nothing pending).
"""

from __future__ import annotations

import asyncio
import os
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from pathlib import Path

from gavel.media.image_urls import EncodedImage

#: What a run keeps unless told: 256 MiB, some 300 photos of 600 KB or 10,000 video frames.
DEFAULT_MAX_BYTES = 256 * 1024 * 1024

#: Keys of files that left remembered, per entry held (and at least :data:`MIN_LEFT`).
LEFT_PER_ENTRY = 8
MIN_LEFT = 256
#: The refusal time of a file that left and was never refused: long ago.
_NEVER_REFUSED = -(1 << 62)

#: What is sent for one file: an image, or a video's sampled frames.
Value = tuple[EncodedImage, ...]


def size_of(value: Value) -> int:
    return sum(image.nbytes for image in value)


class EncodedImages:
    """The encoded form of recently sent files, at most ``max_bytes`` of them (0: none kept)."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES):
        if max_bytes < 0:
            raise ValueError("max_bytes must not be negative")
        self.max_bytes = max_bytes
        self.bytes = 0
        self.hits = 0
        self.misses = 0
        #: Files not kept because they came back in a cycle longer than the budget.
        self.refused = 0
        self._entries: OrderedDict[Hashable, Value] = OrderedDict()
        #: Keys that left (or were refused), with the request count when last refused.
        self._left: OrderedDict[Hashable, int] = OrderedDict()
        #: Requests looked up so far: the clock a file's return is measured by.
        self._asked = 0
        self._pending: dict[Hashable, asyncio.Future[Value]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    def __len__(self) -> int:
        return len(self._entries)

    @staticmethod
    def key(path: Path, *extra: Hashable) -> Hashable:
        """What tells one file's content from another's (the file unreadable: its path only,
        and the encoder says why)."""
        try:
            stat = os.stat(path)
        except OSError:
            return (str(path), None, *extra)
        return (str(path), stat.st_size, stat.st_mtime_ns, stat.st_ino, *extra)

    def get(self, key: Hashable) -> Value | None:
        """The entry for ``key`` (a request for it: the clock moves), or None."""
        self._asked += 1
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
            self.hits += 1
        return value

    def put(self, key: Hashable, value: Value) -> None:
        """Keep ``value``: the oldest entries leave to make room, unless ``key`` is a file
        that left and came back in a cycle (see the module's text); one larger than the whole
        budget is not kept."""
        size = size_of(value)
        if size > self.max_bytes:
            return
        old = self._entries.pop(key, None)
        if old is not None:
            self.bytes -= size_of(old)
        elif self.bytes + size > self.max_bytes and self._cycling(key):
            return
        self._entries[key] = value
        self.bytes += size
        while self.bytes > self.max_bytes:
            gone_key, gone = self._entries.popitem(last=False)
            self.bytes -= size_of(gone)
            self._remember(gone_key, _NEVER_REFUSED)  # its next return is refused

    def _cycling(self, key: Hashable) -> bool:
        """Whether ``key`` left and now came back in a cycle the budget cannot hold (it is
        then refused, and remembered as refused now). Coming back again within a budget's
        worth of requests of its refusal is a file in use again: it is kept."""
        refused_at = self._left.pop(key, None)
        if refused_at is None:
            return False
        if self._asked - refused_at <= len(self._entries):
            return False
        self._remember(key, self._asked)
        self.refused += 1
        return True

    def _remember(self, key: Hashable, refused_at: int) -> None:
        self._left[key] = refused_at
        self._left.move_to_end(key)
        while len(self._left) > max(MIN_LEFT, LEFT_PER_ENTRY * len(self._entries)):
            self._left.popitem(last=False)

    def get_or_make(self, key: Hashable, make: Callable[[], Value]) -> Value:
        """The entry for ``key``, made by ``make()`` when there is none: for a caller with no
        event loop, asking one file at a time (a Ray Data worker's rows)."""
        found = self.get(key)
        if found is not None:
            return found
        self.misses += 1
        value = make()
        self.put(key, value)
        return value

    async def fetch(self, key: Hashable, make: Callable[[], Awaitable[Value]]) -> Value:
        """The entry for ``key``, made by ``make()`` when there is none (once, however many
        requests ask at the same time)."""
        found = self.get(key)
        if found is not None:
            return found
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._loop, self._pending = loop, {}
        waiting = self._pending.get(key)
        if waiting is not None:
            self.hits += 1
            try:
                return await asyncio.shield(waiting)
            except asyncio.CancelledError:
                if not waiting.cancelled():
                    raise  # this request was cancelled, not the encoding it waited for
            return await self.fetch(key, make)  # that request was cancelled: encode it here
        self.misses += 1
        future: asyncio.Future[Value] = loop.create_future()
        self._pending[key] = future
        try:
            value = await make()
        except asyncio.CancelledError:
            future.cancel()
            raise
        except BaseException as error:
            future.set_exception(error)
            future.exception()  # retrieved: no "never retrieved" warning when none waits
            raise
        finally:
            self._pending.pop(key, None)
        future.set_result(value)
        self.put(key, value)
        return value
