"""The requests of a run as OpenAI Batch JSONL: one line per request, ``custom_id`` its address.

A line is ``{"custom_id": KEY, "method": "POST", "url": "/v1/chat/completions", "body": BODY}``
where BODY is what :meth:`OpenAIChatModel.request_body` builds, the very body an online run
sends, and KEY the request's content address in the answer cache
(:meth:`gavel.runner.cache.AnswerCache.key`): the same question to the same model always gets
the same id, so an answer found in an output file is matched to its request by content, never
by position, and a request whose inputs changed since the file was written matches nothing.

The same file runs through vLLM's offline ``vllm run-batch``. Hosted batch APIs cap a file
(OpenAI: 50,000 requests, 200 MB), so a run is cut into parts within both limits. The size each
image was sent at (what the ``pixel`` box convention scales back from) is kept beside each part,
so merging never encodes an image again.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from gavel.errors import GavelError
from gavel.io.files import atomic_write_bytes, plain_mode
from gavel.io.reading import bounded_lines
from gavel.requests import Request
from gavel.runner.validating import repair_turns

ENDPOINT = "/v1/chat/completions"
#: OpenAI's limits on one batch input file, with room to spare for the bytes.
MAX_REQUESTS = 50_000
MAX_BYTES = 190 * 1024 * 1024
#: Bodies built at once (images are encoded off the event loop).
BUILD_AT_ONCE = 16

_encode = msgspec.json.Encoder().encode


@dataclass(frozen=True)
class Written:
    """One requests file as written: its name stem, request count and SHA-256."""

    path: Path
    count: int
    sha256: str
    sizes: dict[str, list[int]]


def request_line(custom_id: str, body: dict[str, Any]) -> bytes:
    """One line of the file. msgspec writes it: the body's images are JSON already
    (``msgspec.Raw``), taken as they are."""
    line = {"custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": body}
    return _encode(line) + b"\n"


async def _bodies(model: Any, keyed: list[tuple[str, Request]]):
    """``(custom_id, body, sent size)`` in order, a few built at once."""
    for start in range(0, len(keyed), BUILD_AT_ONCE):
        chunk = keyed[start : start + BUILD_AT_ONCE]
        built = await asyncio.gather(*(model.request_body(request) for _, request in chunk))
        for (key, _), (body, sent) in zip(chunk, built, strict=True):
            yield key, body, sent


def lines(model: Any, keyed: list[tuple[str, Request]]) -> Iterator[tuple[str, bytes, Any]]:
    """``(custom_id, line, sent size)`` for every request, built on a private event loop."""
    loop = asyncio.new_event_loop()
    try:
        agen = _bodies(model, keyed)
        while True:
            try:
                key, body, sent = loop.run_until_complete(agen.__anext__())
            except StopAsyncIteration:
                return
            yield key, request_line(key, body), sent
    finally:
        loop.run_until_complete(agen.aclose())
        loop.close()


class _Staged:
    """A file written beside its target and renamed over it once complete and synced."""

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, self.temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        plain_mode(fd)
        self.handle = os.fdopen(fd, "wb")
        self.digest = hashlib.sha256()
        self.bytes = 0
        self.count = 0

    def write(self, line: bytes) -> None:
        self.handle.write(line)
        self.digest.update(line)
        self.bytes += len(line)
        self.count += 1

    def commit(self) -> None:
        self.handle.flush()
        os.fsync(self.handle.fileno())
        self.handle.close()
        os.replace(self.temp, self.path)

    def abandon(self) -> None:
        self.handle.close()
        Path(self.temp).unlink(missing_ok=True)


def write_parts(
    model: Any,
    keyed: list[tuple[str, Request]],
    path_of: Iterable[Path],
    *,
    sizes_for: Callable[[Path], Path] | None = None,
    max_requests: int = MAX_REQUESTS,
    max_bytes: int = MAX_BYTES,
) -> list[Written]:
    """Write the requests into as many files (taken in turn from ``path_of``) as the limits
    need; each file, and its sent sizes (at ``sizes_for(file)``, by default beside it), is
    complete before it is renamed into place."""
    sizes_for = sizes_for or sizes_path
    paths = iter(path_of)
    written: list[Written] = []
    staged: _Staged | None = None
    sizes: dict[str, list[int]] = {}

    def finish() -> None:
        assert staged is not None
        atomic_write_bytes(sizes_for(staged.path), json.dumps(sizes).encode())
        staged.commit()
        written.append(Written(staged.path, staged.count, staged.digest.hexdigest(), sizes))

    try:
        for key, line, sent in lines(model, keyed):
            full = staged is not None and (
                staged.count >= max_requests or staged.bytes + len(line) > max_bytes
            )
            if staged is not None and full:
                finish()
                staged, sizes = None, {}
            if staged is None:
                staged = _Staged(next(paths))
            staged.write(line)
            if sent is not None:
                sizes[key] = list(sent)
        if staged is not None:
            finish()
            staged = None
    finally:
        if staged is not None:
            staged.abandon()
    return written


def sizes_path(requests: Path) -> Path:
    """``NAME.requests.jsonl`` -> ``NAME.sent.json``; any other name gets ``.sent.json``."""
    name = requests.name.removesuffix(".requests.jsonl").removesuffix(".jsonl")
    return requests.with_name(f"{name}.sent.json")


def read_sizes(path: Path) -> dict[str, tuple[int, int]]:
    """The sent image sizes written with a requests file (none for a text-only run)."""
    try:
        data = json.loads(path.read_bytes())
        return {key: (int(value[0]), int(value[1])) for key, value in data.items()}
    except FileNotFoundError:
        return {}
    except (ValueError, TypeError, AttributeError, IndexError) as error:
        raise GavelError(f"{path}: not a file of sent image sizes ({error})") from None


def read_custom_ids(requests: Path) -> list[str]:
    """The ids in a requests file, in order (line numbers of a failed batch's errors)."""
    ids = []
    with requests.open("rb") as handle:
        for number, line in enumerate(bounded_lines(handle, requests), 1):
            if not line.strip():
                continue
            try:
                ids.append(json.loads(line)["custom_id"])
            except (ValueError, KeyError, TypeError) as error:
                raise GavelError(
                    f"{requests}:{number}: not a batch request line ({error})"
                ) from None
    return ids


def read_repairs(requests: Path, instruction: str) -> dict[str, tuple[dict[str, Any], ...]]:
    """The repair turns each request of a requests file was sent with (the refused replies
    and ``instruction`` its messages end with, :func:`gavel.runner.validating.repair_turns`),
    by custom_id, for the requests sent with any: what a batch asked, read from what was
    sent, so a merge after a crash knows it as the run that wrote the file did."""
    turns: dict[str, tuple[dict[str, Any], ...]] = {}
    with requests.open("rb") as handle:
        for number, line in enumerate(bounded_lines(handle, requests), 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                messages = entry["body"]["messages"]
                count = repair_turns(messages, instruction)
            except (ValueError, KeyError, TypeError, AttributeError) as error:
                raise GavelError(
                    f"{requests}:{number}: not a batch request line ({error})"
                ) from None
            if count:
                turns[entry["custom_id"]] = tuple(messages[len(messages) - 2 * count :])
    return turns
