"""A lean OpenAI-compatible server on loopback for throughput benchmarks.

The fault-injecting server of the tests (``tests/runner/openai_server.py``) is a threaded
``http.server`` that parses every body as JSON: right for checking behaviour, but at 64 image
requests in flight (600 KB bodies) its own CPU would be what the benchmark measures. This one is
an asyncio protocol that speaks just enough HTTP/1.1 (keep-alive, ``Content-Length`` or chunked
bodies): it reads a body, answers it ``--latency`` seconds later from a timer (no thread, no
task per request), always with one fixed completion, so nearly all of the machine is left to
the clients being compared. Its own CPU per request is a fraction of any client's (about
0.05 ms for a small request; a 600 KB image body costs what the kernel takes to copy it). It
never parses the body beyond counting its image parts, which it reports with the bytes
received when it stops.

    python bench/bench_server.py --latency 0.2 [--reply TEXT]

prints ``PORT <n>`` once listening and serves until its standard input closes, then prints
``SERVED <requests> <images> <bytes>``. A client may put a label of its own before ``/v1``
(``http://127.0.0.1:<n>/LABEL/v1``): then one more line per label, ``SERVED-LABEL <label>
<requests> <images> <bytes> <seconds>`` (seconds from the label's first request arriving to
its last reply sent), tells apart the runs of several clients sharing the server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import sys

#: The reply every request gets unless ``--reply`` says otherwise: a GAVEL answer (a verdict,
#: an explanation and one box), which every benchmark's reader reads without failing.
DEFAULT_REPLY = 'Hallucination: yes. The suit is orange, not blue. {"bbox_2d": [12, 30, 200, 260]}'
#: How an image part of a chat message starts: its ``type`` (the part's ``image_url`` key
#: holds the same word, so the bare word would count each image twice).
IMAGE_PART_TYPES = (b'"type": "image_url"', b'"type":"image_url"')
#: The longest request head read (request line and headers).
MAX_HEAD = 64 * 1024


class Counters:
    """What one label's requests (or all of them) brought."""

    def __init__(self) -> None:
        self.requests = 0
        self.images = 0
        self.bytes = 0
        self.first = 0.0
        self.last = 0.0

    def add(self, body: bytes, images: int, arrived: float) -> None:
        if not self.requests:
            self.first = arrived
        self.requests += 1
        self.images += images
        self.bytes += len(body)


def image_parts(body: bytes | bytearray) -> int:
    """The image parts of a request body. It walks from quote to quote (``find`` of one byte
    is a memchr: the base64 between two quotes is skipped, not scanned for a pattern), so the
    count costs little beside the body's own reading."""
    count = 0
    quote = body.find(b'"')
    while quote != -1:
        if body.startswith(IMAGE_PART_TYPES, quote):
            count += 1
        quote = body.find(b'"', quote + 1)
    return count


def response(status: str, body: bytes) -> bytes:
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


class Server:
    """The replies and the counts every connection shares."""

    def __init__(self, latency: float, reply: str):
        self.latency = latency
        self.counters = Counters()
        self.by_label: dict[str, Counters] = {}
        completion = {
            "id": "chatcmpl-bench",
            "object": "chat.completion",
            "created": 0,
            "model": "bench-model",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107},
        }
        self.completion = response("200 OK", json.dumps(completion).encode())
        listed = {"object": "list", "data": [{"id": "bench-model", "object": "model"}]}
        self.models = response("200 OK", json.dumps(listed).encode())
        self.missing = response("404 Not Found", b'{"detail": "Not Found"}')

    def label_of(self, path: str, route: str) -> tuple[bool, str | None]:
        """Whether ``path`` is ``route`` (``/v1/...``), and the label before it, if any."""
        if path == route:
            return True, None
        prefix, found, rest = path.partition(route)
        if found and not rest and prefix.count("/") == 1 and prefix.startswith("/"):
            return True, prefix[1:]
        return False, None


class Connection(asyncio.Protocol):
    """One client connection: requests one after the other (a client waits for each reply).

    A request's head is parsed once; its body is gathered as the chunks arrive and joined
    once, when all of it is there."""

    def __init__(self, server: Server):
        self.server = server
        self.buffer = bytearray()  # the head being read, or a chunked body
        self.head: tuple[str, str, dict[str, str]] | None = None
        self.pieces: list[bytes] = []  # a Content-Length body as it arrives
        self.received = 0
        self.expected = 0
        self.transport: asyncio.Transport | None = None
        self.loop = asyncio.get_running_loop()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def data_received(self, data: bytes) -> None:
        while data and self.transport is not None:
            data = self._take(data)

    def _take(self, data: bytes) -> bytes:
        """Use what ``data`` holds of the current request; what is left over belongs to the
        next one."""
        if self.head is None:
            self.buffer += data
            end = self.buffer.find(b"\r\n\r\n")
            if end == -1:
                if len(self.buffer) > MAX_HEAD:
                    self._close()
                return b""
            lines = bytes(self.buffer[:end]).decode("latin-1").split("\r\n")
            method, path = ([*lines[0].split(" "), "", ""])[:2]
            headers = {}
            for line in lines[1:]:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            self.head = (method, path.split("?")[0], headers)
            rest = bytes(self.buffer[end + 4 :])
            self.buffer = bytearray()
            self.expected = int(headers.get("content-length") or 0)
            self.received = 0
            self.pieces = []
            data = rest
        method, path, headers = self.head
        if headers.get("transfer-encoding", "").lower() == "chunked":
            self.buffer += data
            body, used = _chunked(self.buffer, 0)
            if body is None:
                return b""
            rest = bytes(self.buffer[used:])
            self.buffer = bytearray()
        else:
            wanted = self.expected - self.received
            if len(data) < wanted:
                self.pieces.append(data)
                self.received += len(data)
                return b""
            self.pieces.append(data[:wanted])
            body, rest = b"".join(self.pieces), data[wanted:]
            self.pieces = []
        self.head = None
        self._answer(method, path, body, headers.get("connection", ""))
        return rest

    def _answer(self, method: str, path: str, body: bytes, connection: str) -> None:
        server = self.server
        close = connection.lower() == "close"
        chat, label = server.label_of(path, "/v1/chat/completions")
        if method == "POST" and chat:
            arrived = self.loop.time()
            images = image_parts(body)
            server.counters.add(body, images, arrived)
            if label is not None:
                server.by_label.setdefault(label, Counters()).add(body, images, arrived)
            self.loop.call_later(server.latency, self._reply, server.completion, label, close)
            return
        listing, _ = server.label_of(path, "/v1/models")
        self._reply(server.models if method == "GET" and listing else server.missing, None, close)

    def _reply(self, payload: bytes, label: str | None, close: bool) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        self.transport.write(payload)
        if label is not None:
            self.server.by_label[label].last = self.loop.time()
        if close:
            self._close()

    def _close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None


def _chunked(buffer: bytearray, start: int) -> tuple[bytes | None, int]:
    """A chunked body from ``start``: (the body, where the request ends), or (None, 0) while
    it is not all there."""
    pieces = []
    at = start
    while True:
        line_end = buffer.find(b"\r\n", at)
        if line_end == -1:
            return None, 0
        size = int(bytes(buffer[at:line_end]).split(b";")[0], 16)
        at = line_end + 2
        if size == 0:
            trailer_end = buffer.find(b"\r\n", at)
            return (b"".join(pieces), trailer_end + 2) if trailer_end != -1 else (None, 0)
        if len(buffer) < at + size + 2:
            return None, 0
        pieces.append(bytes(buffer[at : at + size]))
        at += size + 2


async def serve(latency: float, reply: str) -> None:
    server = Server(latency, reply)
    loop = asyncio.get_running_loop()
    listening = await loop.create_server(lambda: Connection(server), "127.0.0.1", 0, backlog=4096)
    port = listening.sockets[0].getsockname()[1]
    print(f"PORT {port}", flush=True)
    await loop.run_in_executor(None, sys.stdin.read)  # until the parent closes our stdin
    listening.close()
    counters = server.counters
    print(f"SERVED {counters.requests} {counters.images} {counters.bytes}", flush=True)
    for label, counted in server.by_label.items():
        seconds = counted.last - counted.first
        print(
            f"SERVED-LABEL {label} {counted.requests} {counted.images} {counted.bytes} "
            f"{seconds:.3f}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--reply", default=DEFAULT_REPLY)
    args = parser.parse_args()
    asyncio.run(serve(args.latency, args.reply))


if __name__ == "__main__":
    main()
