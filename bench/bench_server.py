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
``SERVED <requests> <images> <bytes>``.
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


class Counters:
    requests = 0
    images = 0
    bytes = 0


def make_app(latency: float, reply: str, counters: Counters) -> web.Application:
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

    async def chat(request: web.Request) -> web.Response:
        body = await request.read()
        counters.requests += 1
        counters.images += body.count(b'"image_url"')
        counters.bytes += len(body)
        await asyncio.sleep(latency)
        return web.Response(body=completion, content_type="application/json")

    async def models(request: web.Request) -> web.Response:
        listed = {"object": "list", "data": [{"id": "bench-model", "object": "model"}]}
        return web.json_response(listed)

    app = web.Application(client_max_size=1 << 30)
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_get("/v1/models", models)
    return app


async def serve(latency: float, reply: str) -> None:
    counters = Counters()
    runner = web.AppRunner(make_app(latency, reply, counters), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, backlog=4096)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    print(f"PORT {port}", flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)  # until the parent closes our stdin
    await runner.cleanup()
    print(f"SERVED {counters.requests} {counters.images} {counters.bytes}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--reply", default=DEFAULT_REPLY)
    args = parser.parse_args()
    asyncio.run(serve(args.latency, args.reply))


if __name__ == "__main__":
    main()
