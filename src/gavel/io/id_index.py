"""The ids of a file's records, each found by its text, in a few dozen bytes an id.

A dict of a million ids holds a million str objects, a million int objects and the dict's own
table: some 160 bytes an id, scattered through memory among the short-lived records read next to
them, so that the process keeps far more than that. Here the ids are one UTF-8 buffer with
their end offsets, their hashes, and an open-addressing table of positions (linear probing, at
most half full), all flat typed arrays: about 40 bytes an id plus its text, and nothing for the
allocator to fragment.

Hashes are Python's own (``hash(str)``), so an index is valid in the process that built it (and
in processes forked from it), not on disk.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import overload

import numpy as np

_EMPTY = -1
_FIRST_SIZE = 1 << 10


def _encoded(text: str) -> bytes:
    try:
        return text.encode()
    except UnicodeEncodeError:  # a lone surrogate: kept, as Python holds it
        return text.encode("utf-8", "surrogatepass")


class IdIndex(Sequence[str]):
    """Distinct ids in the order added; ``index[i]`` is the ``i``-th, :meth:`get` finds one."""

    def __init__(self, *, lookups: bool = True) -> None:
        """``lookups=False``: ids are only collected (:meth:`add` appends without looking for
        a repeat, :meth:`get` is refused), for a piece of a file whose repeats
        :meth:`joined` finds; a fifth of the cost an id."""
        self._text = bytearray()
        self._ends = array("q")
        self._hashes = array("q")
        self._table = array("q", [_EMPTY]) * (_FIRST_SIZE if lookups else 0)
        self._mask = _FIRST_SIZE - 1
        if not lookups:
            self.add = self._append  # type: ignore[method-assign]
            self.get = self._no_lookups  # type: ignore[method-assign]

    def __len__(self) -> int:
        return len(self._ends)

    @overload
    def __getitem__(self, position: int) -> str: ...
    @overload
    def __getitem__(self, position: slice) -> list[str]: ...
    def __getitem__(self, position: int | slice) -> str | list[str]:
        if isinstance(position, slice):
            return [self[i] for i in range(*position.indices(len(self)))]
        ends = self._ends
        end = ends[position]  # an IndexError for a position out of range
        if position < 0:
            position += len(ends)
        start = ends[position - 1] if position else 0
        return self._text[start:end].decode("utf-8", "surrogatepass")

    def __iter__(self) -> Iterator[str]:
        text, start = self._text, 0
        for end in self._ends:
            yield text[start:end].decode("utf-8", "surrogatepass")
            start = end

    def get(self, sample_id: str) -> int | None:
        """The position of ``sample_id``, or None if it was never added."""
        code = hash(sample_id)
        table, hashes, mask = self._table, self._hashes, self._mask
        slot = code & mask
        while True:  # written out (here and in add): this runs once per line of a file
            position = table[slot]
            if position == _EMPTY:
                return None
            if hashes[position] == code and self._text_at(position) == _encoded(sample_id):
                return position
            slot = (slot + 1) & mask

    def add(self, sample_id: str) -> int | None:
        """Add ``sample_id`` at the next position; if it is there already, add nothing and
        return its position (the caller's duplicate)."""
        code = hash(sample_id)
        table, hashes, mask = self._table, self._hashes, self._mask
        slot = code & mask
        while True:
            position = table[slot]
            if position == _EMPTY:
                break
            if hashes[position] == code and self._text_at(position) == _encoded(sample_id):
                return position
            slot = (slot + 1) & mask
        ends = self._ends
        table[slot] = len(ends)
        self._text += _encoded(sample_id)
        ends.append(len(self._text))
        hashes.append(code)
        if 2 * len(ends) > len(table):
            self._rebuild(2 * len(table))
        return None

    def _append(self, sample_id: str) -> None:
        self._text += _encoded(sample_id)
        self._ends.append(len(self._text))
        self._hashes.append(hash(sample_id))

    def _no_lookups(self, sample_id: str) -> int | None:
        raise TypeError("an index made with lookups=False finds no id; join it first")

    def parts(self) -> tuple[bytes, bytes, bytes]:
        """The index's ids as three buffers (their UTF-8 text, each one's end offset, each
        one's hash): what :meth:`joined` takes back, e.g. from a forked process."""
        return bytes(self._text), self._ends.tobytes(), self._hashes.tobytes()

    @classmethod
    def joined(
        cls, parts: Sequence[tuple[bytes, bytes, bytes]]
    ) -> tuple[IdIndex, tuple[int, int] | None]:
        """One index of several indexes' ids in their order (each given as :meth:`parts`, by
        processes forked from this one: the hashes are this process's), built at once, and
        the first position whose id an earlier position already has, with that earlier
        position (None: all distinct)."""
        index = cls()
        for text, ends, hashes in parts:
            offset = len(index._text)
            index._text += text
            local = np.frombuffer(ends, dtype=np.int64)
            index._ends.frombytes((local + offset).tobytes())
            index._hashes.frombytes(hashes)
        size = _FIRST_SIZE
        while 2 * len(index._ends) > size:
            size *= 2
        index._rebuild(size)
        return index, index._first_repeat()

    def _first_repeat(self) -> tuple[int, int] | None:
        """The first position whose id an earlier one has, and the earlier one. Equal hashes are found by sorting;
        each later position of a group, in order, is then compared by text with the earlier
        positions of its hash (a collision of two distinct ids is no repeat). Groups are rare:
        the first true repeat ends the search."""
        hashes = np.frombuffer(self._hashes, dtype=np.int64)
        order = np.argsort(hashes, kind="stable")  # within equal hashes: positions ascending
        same = np.flatnonzero(hashes[order][1:] == hashes[order][:-1])
        for later in np.unique(order[same + 1]).tolist():
            text = self._text_at(later)
            earlier = np.flatnonzero(hashes[:later] == hashes[later])
            for position in earlier.tolist():
                if self._text_at(position) == text:
                    return later, position
        return None

    def _text_at(self, position: int) -> bytearray:
        ends = self._ends
        return self._text[ends[position - 1] if position else 0 : ends[position]]

    def _rebuild(self, size: int) -> None:
        """A table of ``size`` slots for every id, built with numpy: each id takes the first
        free slot at or after its hash's, as if inserted one by one (in another order, which
        lookups do not depend on: no free slot ever lies between an id's slot and its own).

        With the ids sorted by their home slot, the next free slot of each is where the one
        before it went, plus one, unless its home lies further on: one running maximum. The
        few that run past the table's end wrap around to the free slots from its start, in
        order (the run from their home to the end, and every slot before theirs, is full)."""
        mask = size - 1
        hashes = np.frombuffer(self._hashes, dtype=np.int64)
        home = hashes & mask
        order = np.argsort(home, kind="stable")
        steps = np.arange(len(order))
        placed = np.maximum.accumulate(home[order] - steps) + steps
        table = np.full(size, _EMPTY, dtype=np.int64)
        inside = placed < size
        table[placed[inside]] = order[inside]
        wrapped = order[~inside]
        if len(wrapped):
            table[np.flatnonzero(table == _EMPTY)[: len(wrapped)]] = wrapped
        self._table = array("q", table.tobytes())
        self._mask = mask


def id_index(ids: Sequence[str]) -> IdIndex:
    """An index of ``ids`` (distinct) in their order."""
    index = IdIndex()
    for sample_id in ids:
        index.add(sample_id)
    return index
