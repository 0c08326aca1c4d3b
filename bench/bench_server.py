"""A lean OpenAI-compatible server on loopback for throughput benchmarks.

The fault-injecting server of the tests (``tests/runner/openai_server.py``) is a threaded
``http.server`` that parses every body as JSON: right for checking behaviour, but at 64 image
requests in flight (600 KB bodies) its own CPU would be what the benchmark measures. This one
is ``aiohttp.web``: its C HTTP parser reads a body, it sleeps ``--latency`` seconds without
holding a thread, and answers one fixed completion, so nearly all of the machine is left to the
clients being compared. It never parses the body beyond counting its image parts (a byte
search), which it reports with the bytes received when it stops.

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
import sys

from aiohttp import web

#: The reply every request gets unless ``--reply`` says otherwise: a GAVEL answer (a verdict,
#: an explanation and one box), which every benchmark's reader reads without failing.
DEFAULT_REPLY = 'Hallucination: yes. The suit is orange, not blue. {"bbox_2d": [12, 30, 200, 260]}'


#: How an image part of a chat message starts: its ``type`` (the part's ``image_url`` key
#: holds the same word, so the bare word would count each image twice).
IMAGE_PART_TYPES = (b'"type": "image_url"', b'"type":"image_url"')


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


def image_parts(body: bytes) -> int:
    """The image parts of a request body. It walks from quote to quote (``bytes.find`` of one
    byte is a memchr: the base64 between two quotes is skipped, not scanned for a pattern),
    so the count costs little beside the body's own reading."""
    count = 0
    quote = body.find(b'"')
    while quote != -1:
        if body.startswith(IMAGE_PART_TYPES, quote):
            count += 1
        quote = body.find(b'"', quote + 1)
    return count


def make_app(
    latency: float, reply: str, counters: Counters, by_label: dict[str, Counters]
) -> web.Application:
    completion = json.dumps(
        {
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
    ).encode()

    loop = asyncio.get_running_loop()

    async def chat(request: web.Request) -> web.Response:
        body = await request.read()
        arrived = loop.time()
        images = image_parts(body)
        counters.add(body, images, arrived)
        label = request.match_info.get("label")
        if label is not None:
            by_label.setdefault(label, Counters()).add(body, images, arrived)
        await asyncio.sleep(latency)
        if label is not None:
            by_label[label].last = loop.time()
        return web.Response(body=completion, content_type="application/json")

    async def models(request: web.Request) -> web.Response:
        listed = {"object": "list", "data": [{"id": "bench-model", "object": "model"}]}
        return web.json_response(listed)

    app = web.Application(client_max_size=1 << 30)
    for prefix in ("", "/{label}"):
        app.router.add_post(prefix + "/v1/chat/completions", chat)
        app.router.add_get(prefix + "/v1/models", models)
    return app


async def serve(latency: float, reply: str) -> None:
    counters = Counters()
    by_label: dict[str, Counters] = {}
    runner = web.AppRunner(make_app(latency, reply, counters, by_label), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, backlog=4096)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    print(f"PORT {port}", flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)  # until the parent closes our stdin
    await runner.cleanup()
    print(f"SERVED {counters.requests} {counters.images} {counters.bytes}", flush=True)
    for label, counted in by_label.items():
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
