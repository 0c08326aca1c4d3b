"""A real OpenAI-compatible Chat Completions server on 127.0.0.1, with injectable faults.

Used by the runner tests and ``bench/runner_throughput.py``. It is a plain threaded
``http.server`` (one thread per connection, HTTP/1.1 keep-alive), so a reply that sleeps only
blocks its own connection, as a real server's slow reply does.

``POST /v1/chat/completions`` answers ``choices[0].message.content`` and ``usage``. The reply
text echoes the prompt (``echo: <prompt>``), so a test can tell which request an answer belongs
to, unless :attr:`FakeOpenAIServer.reply` computes it (a judge's JSON, say). Faults are planned
per request by :attr:`FakeOpenAIServer.plan`, a function of the parsed request body and the
request's number that returns a :class:`Fault` or ``None``; :func:`faults_by_marker` builds one
from ``{text found in the prompt: [fault, fault, ...]}``.

``usage`` counts the prompt's words (and 100 tokens an image) and 7 completion tokens, unless
:attr:`FakeOpenAIServer.tokenizer` is set (a ``tokenizers.Tokenizer``): then the prompt is
rendered as a ChatML chat (``<|im_start|>role\ncontent<|im_end|>`` per message, then the
assistant's opening) and counted with it, each image adds :attr:`FakeOpenAIServer.image_tokens`
of its data URL, and the completion is the reply's tokens, as a real server counts them.

:attr:`FakeOpenAIServer.limit` (a :class:`SlidingWindowLimit`) makes it a rate-limited API: a
request beyond its requests or tokens in the last ``window`` seconds is refused with 429 and
``Retry-After`` (and OpenAI's ``retry-after-ms``) saying when the oldest will have left the
window; or, as some providers do, with only OpenAI's ``x-ratelimit-remaining-*`` and
``x-ratelimit-reset-*`` headers on every reply, or with no rate header at all. Its counters
are what the rate-limit tests and ``bench/rate_limits.py`` assert on.

``GET /v1/models`` lists :attr:`FakeOpenAIServer.served` (404, as FastAPI says it, while that is
``None``). :meth:`FakeOpenAIServer.kill` stops it as a killed process stops: the port closed and
every open connection reset; a new server on the same ``port`` is the restart.

Not collected by pytest (the file name does not start with ``test_``). Run it as a script for
the benchmark: ``python tests/runner/openai_server.py --latency 0.2`` prints ``PORT <n>``.
"""

from __future__ import annotations

import argparse
import bisect
import contextlib
import itertools
import json
import math
import socket
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Fault:
    """What to do instead of (or before) a normal reply."""

    #: HTTP status to answer with (an error body is sent); ``None`` keeps 200.
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    #: Seconds to sleep before answering (longer than the client timeout = a timeout).
    delay: float = 0.0
    #: Raw bytes to send as a 200 body instead of the normal JSON (malformed JSON).
    body: bytes | None = None
    #: Close the connection without answering.
    drop: bool = False
    #: The error message sent with ``status`` (some servers echo what they were sent).
    message: str | None = None
    #: The whole JSON error body sent with ``status`` instead of OpenAI's
    #: ``{"error": {"message": ...}}``, e.g. FastAPI's ``{"detail": ...}``; bytes are sent raw.
    payload: Any = None
    #: Seconds over which the reply's body trickles in, a few bytes at a time, after its
    #: headers (a slow or stalling server); 0 sends it at once.
    drip: float = 0.0


def fastapi_detail(detail: Any) -> Fault:
    """A 422 as FastAPI servers (``transformers serve``) send it: ``{"detail": ...}``."""
    return Fault(status=422, payload={"detail": detail})


def unknown_model(name: str) -> Fault:
    """A 400 for a model the server does not serve, in vLLM's words."""
    return Fault(
        status=400,
        payload={
            "object": "error",
            "message": f"The model `{name}` does not exist.",
            "type": "NotFoundError",
            "code": 400,
        },
    )


def prompt_text(body: dict[str, Any]) -> str:
    """The text parts of the last user message."""
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if part.get("type") == "text")


def image_urls(body: dict[str, Any]) -> list[str]:
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return []
    return [p["image_url"]["url"] for p in content if p.get("type") == "image_url"]


def faults_by_marker(
    plan: dict[str, list[Fault]],
) -> Callable[[dict[str, Any], int], Fault | None]:
    """Faults for the requests whose prompt contains a marker, used up one per request."""
    queues = {marker: list(faults) for marker, faults in plan.items()}
    lock = threading.Lock()

    def choose(body: dict[str, Any], number: int) -> Fault | None:
        text = prompt_text(body)
        with lock:
            for marker, faults in queues.items():
                if marker in text and faults:
                    return faults.pop(0)
        return None

    return choose


#: What a :class:`SlidingWindowLimit` tells its clients: ``Retry-After`` (and ``retry-after-ms``)
#: on a 429; OpenAI's ``x-ratelimit-remaining-*`` / ``x-ratelimit-reset-*`` on every reply and
#: nothing else; or no rate header at all.
HEADER_MODES = ("retry-after", "ratelimit", "none")


class SlidingWindowLimit:
    """At most ``requests`` requests and ``tokens`` tokens (prompt + completion, as the reply's
    ``usage`` counts them) accepted in any ``window`` seconds, as hosted APIs limit a key. A
    refused request is not counted against the window. ``headers`` (one of
    :data:`HEADER_MODES`) is what the replies say about it."""

    def __init__(self, requests: int | None = None, tokens: int | None = None, window: float = 1.0,
                 headers: str = "retry-after"):  # fmt: skip
        if headers not in HEADER_MODES:
            raise ValueError(f"headers must be one of {HEADER_MODES}")
        self.requests = requests
        self.tokens = tokens
        self.window = window
        self.headers = headers
        self._lock = threading.Lock()
        self._recent: deque[tuple[float, int]] = deque()
        self._tokens_in_window = 0
        #: (arrival time, tokens) of every accepted request.
        self.accepted: list[tuple[float, int]] = []
        #: Arrival times of the refused requests.
        self.refused: list[float] = []

    def admit(self, tokens: int, now: float | None = None) -> float | None:
        """None when the request is accepted (and counted), else seconds until it could be."""
        return self.decide(tokens, now)[0]

    def decide(self, tokens: int, now: float | None = None) -> tuple[float | None, dict[str, str]]:
        """:meth:`admit`, with the headers the reply (a 429 or the answer) carries."""
        now = time.monotonic() if now is None else now
        with self._lock:
            while self._recent and self._recent[0][0] <= now - self.window:
                self._tokens_in_window -= self._recent.popleft()[1]
            wait = self._wait(tokens, now)
            if wait is not None:
                self.refused.append(now)
            else:
                self._recent.append((now, tokens))
                self._tokens_in_window += tokens
                self.accepted.append((now, tokens))
            if self.headers == "retry-after":
                return wait, {} if wait is None else _retry_after(wait)
            if self.headers == "none":
                return wait, {}
            return wait, self._state(now)

    def _state(self, now: float) -> dict[str, str]:
        """OpenAI's headers for the window as it is now: what is left of each limit, and the
        time until the window is back to its initial state (empty: the newest request in it
        has left), in OpenAI's duration format."""
        reset = format_duration(self._recent[-1][0] + self.window - now if self._recent else 0.0)
        headers = {}
        if self.requests is not None:
            headers["x-ratelimit-remaining-requests"] = str(self.requests - len(self._recent))
            headers["x-ratelimit-reset-requests"] = reset
        if self.tokens is not None:
            left = max(self.tokens - self._tokens_in_window, 0)
            headers["x-ratelimit-remaining-tokens"] = str(left)
            headers["x-ratelimit-reset-tokens"] = reset
        return headers

    def _wait(self, tokens: int, now: float) -> float | None:
        over_requests = self.requests is not None and len(self._recent) >= self.requests
        over_tokens = self.tokens is not None and self._tokens_in_window + tokens > self.tokens
        if not (over_requests or over_tokens):
            return None
        # Walk the window from its oldest entry until enough would have left it.
        count, total = len(self._recent), self._tokens_in_window
        for when, used in self._recent:
            count -= 1
            total -= used
            if (self.requests is None or count < self.requests) and (
                self.tokens is None or total + tokens <= self.tokens
            ):
                return max(when + self.window - now, 0.001)
        return self.window  # larger than the whole budget: never accepted

    @property
    def tokens_accepted(self) -> int:
        return sum(tokens for _, tokens in self.accepted)

    def fill(self, step: float = 0.01) -> tuple[float | None, float | None]:
        """How full the window was on average, of requests and of tokens (None: not limited),
        sampled every ``step`` seconds from one window after the first request (the window
        is empty at first) to the last acceptance: the share of the allowed rate used, a
        steady client's rate over the limit, and never above 1 however the requests bunch."""
        times = [when for when, _ in self.accepted]
        totals = list(itertools.accumulate((tokens for _, tokens in self.accepted), initial=0))
        start = min([times[0], *self.refused]) + self.window
        samples = [start + k * step for k in range(int((times[-1] - start) / step) + 1)]
        if not samples:
            raise ValueError("the run was shorter than one window")
        requests = tokens = 0.0
        for when in samples:
            low, high = (
                bisect.bisect_right(times, when - self.window),
                bisect.bisect_right(times, when),
            )
            requests += high - low
            tokens += totals[high] - totals[low]
        return (
            None if self.requests is None else requests / len(samples) / self.requests,
            None if self.tokens is None else tokens / len(samples) / self.tokens,
        )

    @property
    def refused_share(self) -> float:
        """The share of the requests sent that were refused."""
        return len(self.refused) / (len(self.accepted) + len(self.refused))


class _Server(ThreadingHTTPServer):
    request_queue_size = 1024  # many clients connect at once; the default backlog is 5


class FakeOpenAIServer:
    """Start with ``with FakeOpenAIServer() as server:``; ``server.url`` is the base URL."""

    def __init__(self, *, latency: float = 0.0, record: bool = True, port: int = 0):
        self.latency = latency
        self.record = record
        self.plan: Callable[[dict[str, Any], int], Fault | None] | None = None
        #: The reply text for a request (body, number); ``None`` echoes the prompt.
        self.reply: Callable[[dict[str, Any], int], str] | None = None
        #: ``choices[0].finish_reason`` of every reply (``length``: as if cut by max_tokens).
        self.finish_reason = "stop"
        #: The ``model`` every reply names (None: the name asked, as vLLM answers; a
        #: single-model llama-server names the one it holds whatever was asked).
        self.answer_as: str | None = None
        #: A ``tokenizers.Tokenizer`` that counts ``usage`` (None: words, and 7 out).
        self.tokenizer: Any = None
        #: The tokens one image costs, from its data URL (with ``tokenizer``).
        self.image_tokens: Callable[[str], int] = lambda url: 100
        self.hits = 0
        #: Prompts answered, with how often (every request received, whatever its outcome).
        self.prompts: Counter[str] = Counter()
        #: (time received, parsed body, Authorization header) of every request, when recording.
        self.received: list[tuple[float, dict[str, Any], str | None]] = []
        #: The entries ``GET /v1/models`` lists (``[{"id": ...}]``); None: no such route.
        self.served: list[dict[str, Any]] | None = None
        #: How often ``GET /v1/models`` was asked.
        self.models_asked = 0
        #: Answer ``GET /v1/models`` with this instead (an error status, a body of another
        #: shape), as providers whose list is missing or odd do.
        self.models_fault: Fault | None = None
        #: A rate limit enforced on ``POST /v1/chat/completions`` (None: unlimited).
        self.limit: SlidingWindowLimit | None = None
        #: Generate one request at a time (``latency`` each), the others waiting their turn,
        #: as ``transformers serve`` does; then :attr:`generated` records each request's
        #: (arrival, start, end) times.
        self.serial = False
        self.generated: list[tuple[float, float, float]] = []
        self._generating = threading.Lock()
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._httpd = _Server(("127.0.0.1", port), self._handler_class())
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self.port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self._thread: threading.Thread | None = None

    def __enter__(self) -> FakeOpenAIServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def kill(self) -> None:
        """Stop as a killed process does: nothing listens, open connections are reset."""
        self.__exit__(None, None, None)
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
                connection.close()

    def count_usage(self, body: dict[str, Any], reply: dict[str, Any]) -> dict[str, int]:
        """``usage`` as a real server counts it, with :attr:`tokenizer`."""

        def tokens(text: str) -> int:
            return len(self.tokenizer.encode(text, add_special_tokens=False).ids)

        chat = ""
        images = 0
        for message in body["messages"]:
            content = message["content"]
            if not isinstance(content, str):
                images += sum(self.image_tokens(u) for u in image_urls({"messages": [message]}))
                content = "".join(p.get("text", "") for p in content if p.get("type") == "text")
            chat += f"<|im_start|>{message['role']}\n{content}<|im_end|>\n"
        prompt = tokens(chat + "<|im_start|>assistant\n") + images
        completion = tokens(reply["choices"][0]["message"]["content"])
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                # Headers and body go out in two writes: without this, Nagle's algorithm and
                # the client's delayed ACK add ~40 ms to every reply, as with any real server
                # that forgot it.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                with server._lock:
                    server._connections.add(self.connection)

            def finish(self) -> None:
                with server._lock:
                    server._connections.discard(self.connection)
                with contextlib.suppress(OSError):
                    super().finish()

            def do_GET(self) -> None:
                with server._lock:
                    server.models_asked += self.path.endswith("/models")
                fault = server.models_fault
                if fault is not None and self.path.endswith("/models"):
                    if isinstance(fault.payload, bytes):
                        self._send_raw(fault.status or 200, fault.payload, fault.headers)
                    else:
                        self._send(fault.status or 200, fault.payload, fault.headers)
                    return
                if not self.path.endswith("/models") or server.served is None:
                    self._send(404, {"detail": "Not Found"})
                    return
                self._send(200, {"object": "list", "data": server.served})

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if not self.path.endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                body = json.loads(raw)
                with server._lock:
                    server.hits += 1
                    number = server.hits
                    server.prompts[prompt_text(body)] += 1
                    if server.record:
                        server.received.append(
                            (time.monotonic(), body, self.headers.get("Authorization"))
                        )
                rate_headers: dict[str, str] = {}
                if server.limit is not None:
                    wait, rate_headers = server.limit.decide(sum(_usage(body)))
                    if wait is not None:  # answered at once, as rate limiters do
                        self._send(429, _rate_limited(wait), rate_headers)
                        return
                fault = server.plan(body, number) if server.plan else None
                delay = server.latency + (fault.delay if fault else 0.0)
                if server.serial:
                    arrived = time.monotonic()
                    with server._generating:
                        started = time.monotonic()
                        time.sleep(delay)
                    with server._lock:
                        server.generated.append((arrived, started, time.monotonic()))
                elif delay:
                    time.sleep(delay)
                if fault and fault.drop:
                    self.close_connection = True
                    self.connection.close()
                    return
                if fault and fault.status:
                    text = fault.message or f"injected {fault.status}"
                    message = {"error": {"message": text, "type": "test"}}
                    if isinstance(fault.payload, bytes):  # not JSON: a proxy's HTML page
                        self._send_raw(fault.status, fault.payload, fault.headers)
                        return
                    if fault.payload is not None:
                        message = fault.payload
                    self._send(fault.status, message, fault.headers)
                    return
                if fault and fault.body is not None:
                    self._send_raw(200, fault.body, fault.headers)
                    return
                text = server.reply(body, number) if server.reply else None
                reply = _completion(body, number, text, server.finish_reason)
                if server.answer_as is not None:
                    reply["model"] = server.answer_as
                if server.tokenizer is not None:
                    reply["usage"] = server.count_usage(body, reply)
                self._send(200, reply, rate_headers, drip=fault.drip if fault else 0.0)

            def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None,
                      drip: float = 0.0):  # fmt: skip
                self._send_raw(status, json.dumps(payload).encode(), headers, drip)

            def _send_raw(self, status: int, data: bytes, headers: dict[str, str] | None = None,
                          drip: float = 0.0):  # fmt: skip
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    if not drip:
                        self.wfile.write(data)
                        return
                    pieces = 20
                    step = max(1, -(-len(data) // pieces))
                    for start in range(0, len(data), step):
                        self.wfile.write(data[start : start + step])
                        self.wfile.flush()
                        time.sleep(drip / pieces)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the client gave up (its timeout)

        return Handler


def _usage(body: dict[str, Any]) -> tuple[int, int]:
    """The (prompt, completion) tokens this server counts for a request: a token per word of
    the prompt and 100 per image; every reply is 7 tokens."""
    return len(prompt_text(body).split()) + 100 * len(image_urls(body)), 7


def _rate_limited(wait: float) -> dict[str, Any]:
    return {
        "error": {
            "message": f"Rate limit reached. Please try again in {wait:.3f}s.",
            "type": "requests",
            "code": "rate_limit_exceeded",
        }
    }


def format_duration(seconds: float) -> str:
    """A duration as OpenAI's headers write it (Go's): ``20ms``, ``1.5s``, ``6m0s``,
    ``1h2m3.5s``."""
    if seconds <= 0:
        return "0s"
    if seconds < 1:
        return f"{round(seconds * 1000)}ms"
    hours, rest = divmod(seconds, 3600)
    minutes, rest = divmod(rest, 60)
    text = f"{rest:.3f}".rstrip("0").rstrip(".") + "s"
    if hours or minutes:
        text = f"{int(minutes)}m{text}"
    return f"{int(hours)}h{text}" if hours else text


def _retry_after(wait: float) -> dict[str, str]:
    """``Retry-After`` in whole seconds (what HTTP allows) and OpenAI's ``retry-after-ms``."""
    return {"Retry-After": str(math.ceil(wait)), "retry-after-ms": str(math.ceil(wait * 1000))}


def _completion(
    body: dict[str, Any], number: int, reply: str | None = None, finish_reason: str = "stop"
) -> dict[str, Any]:
    text = prompt_text(body)
    prompt_tokens, completion_tokens = _usage(body)
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "test"),
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": f"echo: {text}" if reply is None else reply,
                },
                "finish_reason": finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per reply")
    parser.add_argument("--reply", default=None, help="answer this text instead of the echo")
    args = parser.parse_args()
    with FakeOpenAIServer(latency=args.latency, record=False) as server:
        if args.reply is not None:
            server.reply = lambda body, number: args.reply
        print(f"PORT {server.port}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            sys.stdin.read()  # serve until stdin closes (the parent exits or closes it)


if __name__ == "__main__":
    main()
