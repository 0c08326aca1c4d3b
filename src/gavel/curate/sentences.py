"""Splitting a model's long caption into the single sentences that GAVEL pairs are made of.

A GAVEL item checks one sentence D against an image, so a paragraph from an image-to-text model
becomes one candidate pair per sentence. Captioning models write prose, bullet lists, numbered
lists and Markdown, so the splitter first breaks at line ends and list markers, then inside each
line at sentence ends, and keeps the full stops of abbreviations ("Mr.", "e.g."), initials,
decimals and ellipses from ending a sentence. Fragments that are not claims (headings ending in
a colon, one or two words) are dropped: there is nothing in them to verify.
"""

from __future__ import annotations

import re

#: Words whose full stop does not end a sentence (compared in lower case, without the stop).
ABBREVIATIONS = frozenset(
    {
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "st",
        "sr",
        "jr",
        "vs",
        "approx",
        "ca",
        "cf",
        "fig",
        "no",
        "nos",
        "e.g",
        "i.e",
        "a.m",
        "p.m",
        "u.s",
        "u.k",
        "mt",
        "ft",
        "lt",
        "col",
        "gen",
        "sgt",
        "capt",
        "rev",
        "inc",
        "ltd",
        "co",
        "corp",
        "dept",
        "est",
    }
)
#: Fewer words than this and a fragment is not a checkable claim.
MIN_WORDS = 3
#: Longer sentences are cut at a word boundary (model text is untrusted; keep records bounded).
MAX_CHARS = 1000

_LIST_MARKER = re.compile(r"^\s*(?:[-*•·◦▪‣]+|\(?\d{1,3}[.)]|\(?[a-zA-Z][.)](?=\s))\s+")
_HEADING = re.compile(r"^\s*#{1,6}\s+")
_EMPHASIS = re.compile(r"(\*\*|__|`)")
# A candidate end: . ! ? (or an ellipsis), optional closing quotes or brackets, then spaces.
_END = re.compile(r"(\.{3}|…|[.!?])([\"'”’)\]]*)(\s+)")
_NEXT_STARTS_SENTENCE = re.compile(r"[\"'“‘(\[]?[A-Z0-9]")
_WORD_BEFORE = re.compile(r"(\S+)$")


def split_sentences(text: str, *, min_words: int = MIN_WORDS) -> list[str]:
    """The sentences of ``text`` in order, stripped, with non-claims dropped."""
    sentences: list[str] = []
    for line in text.replace("\r", "\n").split("\n"):
        line = _EMPHASIS.sub("", _HEADING.sub("", _LIST_MARKER.sub("", line))).strip()
        if line:
            sentences.extend(_split_line(line))
    return [_cap(s) for s in sentences if _is_claim(s, min_words)]


def _split_line(line: str) -> list[str]:
    pieces: list[str] = []
    start = 0
    for match in _END.finditer(line):
        rest = line[match.end() :]
        if not _NEXT_STARTS_SENTENCE.match(rest):
            continue
        if match.group(1) == "." and _is_abbreviation(line[start : match.start()]):
            continue
        pieces.append(line[start : match.end()].strip())
        start = match.end()
    pieces.append(line[start:].strip())
    return [p for p in pieces if p]


def _is_abbreviation(before: str) -> bool:
    word = _WORD_BEFORE.search(before)
    if word is None:
        return False
    token = word.group(1).lstrip("\"'“‘([").lower()
    if token in ABBREVIATIONS:
        return True
    return len(token) == 1 and token.isalpha() and word.group(1)[-1].isupper()  # an initial


def _is_claim(sentence: str, min_words: int) -> bool:
    if sentence.endswith(":"):
        return False  # a heading for a list ("In the image:")
    return len(sentence.split()) >= min_words


def _cap(sentence: str) -> str:
    if len(sentence) <= MAX_CHARS:
        return sentence
    return sentence[:MAX_CHARS].rsplit(" ", 1)[0]
