"""Text a model copied from its prompt, found and removed before an answer is read.

A small or broken model often parrots its prompt: the answer template
(``{"hallucination": true or false, ...}``), the judge's ``{ "score": 1-5, ... }``, a rule such
as "Use an empty list when there is no error.", or the question with its "yes or no". Read as an
answer, such text looks like a verdict, a score or a "yes". Readers therefore remove what was
copied before they look for an answer, so only the model's own words can earn credit.

What counts as copied: a whole *fragment* of a prompt, where the fragments of a prompt are its
lines, its sentences (split at ``.``, ``?`` or ``!`` followed by a blank) and its double-quoted
strings (the placeholders of an answer template) of at least :data:`MIN_WORDS` words, with the template's fields (``{caption}``) as further cut points.
Matching ignores case, runs of blanks and markdown asterisks, and a fragment's final full stop
is optional. Parts of a sentence are not fragments: "there is no error" is a real answer even
though the prompt says "Use an empty list when there is no error.".

Matching is cheap when nothing was copied (the common case): a fragment is only tried when the
answer contains its first three words in a row, and for an ASCII answer that test is a few passes
in C over its bytes rather than a Python loop over its words.
"""

from __future__ import annotations

import itertools
import re
import string
from collections.abc import Iterable
from dataclasses import dataclass

#: Fewest words (``\w+`` runs) a fragment must have; shorter lines ("Caption:") are left alone.
MIN_WORDS = 3

_WORD = re.compile(r"\w+")
_TOKEN = re.compile(r"\w+|[^\w\s*]")
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+")
_QUOTED = re.compile(r'"([^"]+)"')
_GAP_WORDS = r"[\s*]+"
_GAP_OTHER = r"[\s*]*"
#: For an ASCII text's bytes: a word character (``\w``: a letter, a digit, ``_``) lower-cased,
#: anything else a blank; split at the blanks, the result is ``_WORD.findall(text.lower())``.
_ASCII_WORDS = bytes(
    ord(chr(c).lower()) if c < 128 and (chr(c).isalnum() or chr(c) == "_") else ord(" ")
    for c in range(256)
)


def template_pieces(template: str) -> list[str]:
    """The fixed text of a ``str.format`` template, cut at its fields (``{{`` unescaped)."""
    pieces = [""]
    for literal, field, *_ in string.Formatter().parse(template):
        pieces[-1] += literal
        if field is not None:
            pieces.append("")
    return [piece for piece in pieces if piece]


def fragments(text: str) -> list[str]:
    """The lines, sentences and double-quoted strings (a template's placeholder values, such
    as ``"one short sentence"``) of ``text`` that have at least :data:`MIN_WORDS` words."""
    found: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        pieces = [line, *_SENTENCE_END.split(line), *_QUOTED.findall(line)]
        for piece in pieces:
            piece = piece.strip()
            if len(_WORD.findall(piece)) >= MIN_WORDS and piece not in found:
                found.append(piece)
    return found


def _pattern(fragment: str) -> str:
    tokens = _TOKEN.findall(fragment)
    stop = False
    while len(tokens) > 1 and tokens[-1] == ".":
        tokens.pop()  # the final full stop is optional
        stop = True
    parts = [re.escape(tokens[0])]
    for before, token in itertools.pairwise(tokens):
        gap = _GAP_WORDS if before[-1].isalnum() and token[0].isalnum() else _GAP_OTHER
        parts.append(gap + re.escape(token))
    if tokens[-1][-1].isalnum():
        parts.append(r"\b")
    if stop:
        parts.append(r"[\s*]*+\.?")
    if tokens[0][0].isalnum():
        parts.insert(0, r"\b")
    return "".join(parts)


@dataclass(frozen=True)
class Stripped:
    """An answer with the copied prompt text replaced by blanks."""

    text: str
    #: How many fragments were found (0: nothing was copied).
    copied: int

    @property
    def echoed(self) -> bool:
        return self.copied > 0

    @property
    def empty(self) -> bool:
        """Nothing of the model's own is left: no word at all."""
        return _WORD.search(self.text) is None


class EchoFilter:
    """Finds and removes the fragments of some prompt texts in answers."""

    def __init__(self, texts: Iterable[str]):
        self.fragments: list[str] = []
        for text in texts:
            for fragment in fragments(text):
                if fragment not in self.fragments:
                    self.fragments.append(fragment)
        # Longest first, so a line is removed whole before one of its sentences is tried.
        self.fragments.sort(key=len, reverse=True)
        self._by_start: dict[tuple[str, ...], list[int]] = {}
        for index, fragment in enumerate(self.fragments):
            words = _WORD.findall(fragment.lower())
            self._by_start.setdefault(tuple(words[:MIN_WORDS]), []).append(index)
        self._firsts = {start[0] for start in self._by_start}
        self._compiled: dict[int, re.Pattern[str]] = {}
        # The starts as byte strings, for the prefilter of ASCII answers (which looks at runs of
        # three words); None, no prefilter, when a start is not three words long: a shorter one
        # matches at the very end of an answer, which only the general path handles.
        self._ascii_starts: frozenset[tuple[bytes, ...]] | None = None
        if MIN_WORDS == 3 and all(len(start) == 3 for start in self._by_start):
            self._ascii_starts = frozenset(
                tuple(word.encode() for word in start) for start in self._by_start
            )

    @classmethod
    def from_templates(cls, templates: Iterable[str], literal: Iterable[str] = ()) -> EchoFilter:
        """Fragments of ``str.format`` templates (cut at their fields) and of plain texts."""
        texts = [piece for template in templates for piece in template_pieces(template)]
        return cls([*texts, *literal])

    def remove(self, text: str) -> Stripped:
        """``text`` with every copied fragment replaced by a blank."""
        return Stripped(*self.removed(text))

    def removed(self, text: str) -> tuple[str, int]:
        """What :meth:`remove` gives, as a plain pair (the text, the fragments found): a reader
        that only looks at the two is spared building the record."""
        if not self._by_start:
            return text, 0
        if self._copies_nothing(text):
            return text, 0
        words = _WORD.findall(text.lower())
        firsts, by_start = self._firsts, self._by_start
        starts = {
            run
            for i, word in enumerate(words)
            if word in firsts and (run := tuple(words[i : i + MIN_WORDS])) in by_start
        }
        if not starts:
            return text, 0
        candidates = sorted(i for start in starts for i in self._by_start[start])
        copied = 0
        for index in candidates:
            pattern = self._compiled.get(index)
            if pattern is None:
                pattern = re.compile(_pattern(self.fragments[index]), re.IGNORECASE)
                self._compiled[index] = pattern
            text, found = pattern.subn(" ", text)
            copied += found
        return text, copied

    def _copies_nothing(self, text: str) -> bool:
        """True when ``text`` surely holds no fragment's first words in a row (False: maybe).

        Exact for an ASCII text, where the words of ``text.lower()`` are the runs the byte
        table keeps: no run of three of them is a start. The work is done by C (translate,
        split, zip, a set test), where the general path loops over the words in Python; any
        other text takes that path."""
        starts = self._ascii_starts
        if starts is None or not text.isascii():
            return False
        words = text.encode().translate(_ASCII_WORDS).split()
        return starts.isdisjoint(zip(words, words[1:], words[2:], strict=False))
