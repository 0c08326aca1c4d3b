"""Find structured data (JSON objects, Python literals) inside free model text.

Models wrap JSON in code fences, put prose around it, use single quotes or tuples, or think
aloud first. This module finds every candidate and decodes it without ever raising: model text
is untrusted input, and a parser that throws on it loses the sample's raw output.
"""

from __future__ import annotations

import ast
import functools
import json
import re
import warnings
from typing import Any

import msgspec

#: Longest text considered; longer responses are cut (the raw text is stored elsewhere anyway).
MAX_TEXT = 200_000
#: Most bracketed spans tried per response, so hostile text cannot make parsing quadratic.
MAX_CANDIDATES = 64
#: Most characters the bracket matcher scans per response: every unclosed ``[`` rescans the rest
#: of the text, so without a bound ``"[" * 100_000`` would take minutes.
MAX_SCAN = 400_000

_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)
# Possessive quantifiers: a backtracking language tag or blank run would make an unclosed fence
# quadratic.
#: A fence's opening: the backticks, a language tag, blanks (what precedes its contents).
_FENCE_OPENING = re.compile(r"```[a-zA-Z0-9_+-]*+\s*+")
_OPENERS = {"{": "}", "[": "]"}
_OPENER = re.compile(r"[\[{]")
#: The characters the bracket matcher acts on: quotes, the escape, brackets.
_SPECIAL = re.compile(r"[\\\"'\[\]{}]")
_decode_json = msgspec.json.Decoder().decode
#: What a JSON text can begin with (the standard library's reader takes NaN and Infinity too).
_JSON_STARTS = frozenset('{["-0123456789tfnNI')
#: What a Python literal can begin with: a bracket, a quote, a sign or a digit, a string prefix
#: (``b'..'``, ``r"..."``), or one of its words.
_LITERAL_STARTS = frozenset("{[(\"'+-.0123456789bBrRuU")
_LITERAL_WORDS = frozenset({"True", "False", "None"})


def strip_think(text: str) -> str:
    """Remove ``<think>…</think>`` blocks.

    A block never closed (an answer cut off while thinking) drops everything from ``<think>`` on;
    a lone ``</think>`` (the opening tag was in the prompt) drops everything before it.
    Both tags begin with ``<``: a text without one (most answers) is returned as it is, unread.
    """
    if "<" not in text:
        return text
    kept: list[str] = []
    pos = 0
    while (opening := _THINK_OPEN.search(text, pos)) is not None:
        kept.append(text[pos : opening.start()])
        closing = _THINK_CLOSE.search(text, opening.end())
        pos = len(text) if closing is None else closing.end()
    kept.append(text[pos:])
    return _THINK_CLOSE.split("".join(kept))[-1]


def _balanced_spans(text: str, budget: list[int] | None = None) -> list[str]:
    """Outermost ``{…}`` / ``[…]`` spans, aware of quoted strings.

    ``budget`` holds the characters the matcher may still scan (shared between calls).
    """
    budget = [MAX_SCAN] if budget is None else budget
    spans: list[str] = []
    i, n = 0, len(text)
    while i < n and len(spans) < MAX_CANDIDATES and budget[0] > 0:
        opener = _OPENER.search(text, i)  # the next bracket, found in C rather than char by char
        if opener is None:
            break
        i = opener.start()
        end = _match_close(text, i, budget)
        if end is None:
            i += 1
            continue
        spans.append(text[i : end + 1])
        i = end + 1
    return spans


def _match_close(text: str, start: int, budget: list[int]) -> int | None:
    """Where the bracket at ``start`` closes, within the budget (which it uses up), or None."""
    limit = min(len(text), start + budget[0])
    first = _SPECIAL.search(text, start + 1, limit)
    if first is not None and text[first.start()] == _OPENERS[text[start]]:
        # A flat span, such as "[427, 122, 533, 641]": its closer is the first special character.
        end = first.start()
        budget[0] -= end - start
        return end
    return _match_nested(text, start, budget)


def _match_nested(text: str, start: int, budget: list[int]) -> int | None:
    """:func:`_match_close` for any span: brackets nest, quoted strings hide brackets."""
    stack = [_OPENERS[text[start]]]
    quote: str | None = None
    i = start + 1
    limit = min(len(text), start + budget[0])
    try:
        while i < limit:
            special = _SPECIAL.search(text, i, limit)  # skip what can change nothing
            if special is None:
                i = limit
                break
            i = special.start()
            ch = text[i]
            if quote:
                if ch == "\\":
                    i += 2
                    continue
                if ch == quote:
                    quote = None
            elif ch in "\"'":
                # An apostrophe inside prose ("the cat's") is not a quote in JSON; only treat it
                # as one when it follows a delimiter, as in a Python literal.
                prev = text[i - 1] if i > 0 else ""
                if ch == '"' or prev in "[{(,: \n\t":
                    quote = ch
            elif ch in _OPENERS:
                stack.append(_OPENERS[ch])
            elif ch in "}]":
                if ch != stack[-1]:
                    return None
                stack.pop()
                if not stack:
                    return i
            i += 1
        return None
    finally:
        budget[0] -= min(i, limit) - start


def decode_literal(fragment: str) -> Any | None:
    """Decode JSON, falling back to a Python literal (single quotes, tuples, True/None).

    JSON goes through msgspec first (a C decoder; the standard library's reads what it
    refuses: ``NaN``, a lone surrogate, a number too large for a float). Text that cannot
    begin a Python literal (prose: "Yes. The caption ...") is not handed to the compiler,
    which costs far more to refuse it than to read a literal."""
    fragment = fragment.strip()
    if not fragment:
        return None
    if fragment[0] in "{[":
        try:
            return _decode_json(fragment)
        except (msgspec.DecodeError, RecursionError):
            pass
    if fragment[0] in _JSON_STARTS:
        try:
            return json.loads(fragment)
        except (ValueError, RecursionError):
            pass
    if fragment[0] not in _LITERAL_STARTS and fragment not in _LITERAL_WORDS:
        return None
    try:
        # Model text like '\d' is an invalid escape: silence the compiler's warning about it, so
        # parsing neither prints warnings nor changes result when warnings are errors.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = ast.literal_eval(fragment)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return _lists(value)


def _lists(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_lists(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _lists(v) for k, v in value.items()}
    return value


def structured_candidates(text: str) -> list[Any]:
    """Decoded structures in the order a reader would trust them.

    Fenced blocks first, then the whole text, then bracketed spans found in prose. The last
    few texts' structures are remembered: the verdict and the boxes of one answer are read
    from the same text, which is then decoded once. (The values are shared: read them, never
    change them.)
    """
    return list(_candidates(text))


@functools.lru_cache(maxsize=8)
def _candidates(text: str) -> tuple[Any, ...]:
    return tuple(_find_candidates(text))


def _find_candidates(text: str) -> list[Any]:
    text = text[:MAX_TEXT]
    budget = [MAX_SCAN]
    found: list[Any] = []
    for block in _fences(text):
        value = decode_literal(block)
        if value is not None:
            found.append(value)
        else:
            spans = _balanced_spans(block, budget)
            found.extend(v for s in spans if (v := decode_literal(s)) is not None)
    if found:
        return found
    whole = decode_literal(text)
    if isinstance(whole, dict | list):
        return [whole]
    return [v for s in _balanced_spans(text, budget) if (v := decode_literal(s)) is not None]


def _fences(text: str) -> list[str]:
    r"""The contents of the text's fenced blocks (none without three backticks).

    What ``re.findall(r"```[a-zA-Z0-9_+-]*+\s*+(.*?)```", text, re.DOTALL)`` gives, found with
    ``str.find``: that lazy ``(.*?)`` tries the closing backticks at every character. A block's
    contents run from the end of its opening to the next three backticks; an opening with
    none after it ends the search, since any later opening would look for them further on."""
    blocks: list[str] = []
    start = text.find("```")
    while start >= 0:
        opening = _FENCE_OPENING.match(text, start)
        assert opening is not None  # the pattern matches wherever three backticks are
        contents = opening.end()
        end = text.find("```", contents)
        if end < 0:
            break
        blocks.append(text[contents:end])
        start = text.find("```", end + 3)
    return blocks


def repaired_list(text: str) -> list[dict[str, Any]] | None:
    """The well-formed objects of a JSON list that does not decode as a whole, or None.

    Models damage long lists (a stray ``{`` before one object, a missing comma): rather than
    keep only the first object found in it, every object that decodes on its own is kept, in
    order. Only a fenced block, or the whole text, that opens with ``[`` is repaired; an intact
    list, or anything else, gives None and is read as usual.
    """
    text = text[:MAX_TEXT]
    blocks = _fences(text) or [text]
    budget = [MAX_SCAN]
    for block in blocks:
        body = block.strip()
        if not body.startswith("[") or decode_literal(body) is not None:
            continue
        objects = [
            value
            for span in _balanced_spans(body[1:], budget)
            if isinstance(value := decode_literal(span), dict)
        ]
        if objects:
            return objects
    return None


#: The object :func:`lowered_keys` last lowered, and what it gave (one tuple, replaced whole,
#: so a thread never pairs one object with another's keys).
_LAST_LOWERED: tuple[Any, dict[str, Any]] = (None, {})


def lower_keys(obj: dict[Any, Any]) -> dict[str, Any]:
    """``obj`` with its keys lower-cased (a later key wins over an earlier one that lowers to
    the same)."""
    return {str(k).lower(): v for k, v in obj.items()}


def lowered_keys(obj: dict[Any, Any]) -> dict[str, Any]:
    """:func:`lower_keys` of an object decoded from an answer here. The verdict and the boxes
    of an answer are read from the same object, which is then lowered once: the last one is
    remembered by identity, which holds only for values nobody changes (decoded ones; a
    caller's own dict goes to :func:`lower_keys`), and the dict given is shared: read it,
    never change it."""
    global _LAST_LOWERED
    last, lowered = _LAST_LOWERED
    if last is obj:
        return lowered
    lowered = {str(k).lower(): v for k, v in obj.items()}  # lower_keys, without its call
    _LAST_LOWERED = (obj, lowered)
    return lowered


def first_object(text: str) -> dict[str, Any] | None:
    """The first decoded JSON object (a dict) in the text, if any."""
    for value in _candidates(text):  # the remembered tuple itself: only read, so no copy
        if isinstance(value, dict):
            return value
        if isinstance(value, list) and value and isinstance(value[0], dict):
            return value[0]
    return None
