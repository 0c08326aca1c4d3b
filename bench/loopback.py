"""A loopback OpenAI-protocol server started in a subprocess for benchmarks.

In its own process the server's work does not count against the client being measured. The
default is the fault-injecting server of the tests; ``lean=True`` starts ``bench_server.py``,
whose own CPU per request is a small fraction of any client's (for image bodies).
``counting_server`` is the lean server shared by several clients, each under a label, with
what it served each of them.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

SERVER = Path(__file__).resolve().parents[1] / "tests" / "runner" / "openai_server.py"
LEAN_SERVER = Path(__file__).resolve().parent / "bench_server.py"


@contextlib.contextmanager
def loopback_server(
    latency: float, reply: str | None = None, *, lean: bool = False
) -> Iterator[str]:
    """Yields the server's base URL; the server stops when the block ends."""
    command = [sys.executable, str(LEAN_SERVER if lean else SERVER), "--latency", str(latency)]
    if reply is not None:
        command += ["--reply", reply]
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline().split()[1])  # type: ignore[union-attr]
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.stdin.close()  # type: ignore[union-attr]  (the server serves until stdin closes)
        server.wait(timeout=10)


@dataclass(frozen=True)
class Served:
    """What one label's requests brought the lean server (``bench_server.py``'s report)."""

    requests: int
    images: int
    bytes: int
    seconds: float  # from the label's first request arriving to its last reply sent


@dataclass
class CountingServer:
    """The lean server shared by several clients, each run under a label of its own."""

    base: str
    served: dict[str, Served] = field(default_factory=dict)  # filled when the block ends

    def url(self, label: str) -> str:
        """The base URL a run under ``label`` is given (``http://127.0.0.1:PORT/LABEL/v1``)."""
        return f"{self.base}/{label}/v1"


@contextlib.contextmanager
def counting_server(latency: float, reply: str | None = None) -> Iterator[CountingServer]:
    """The lean server, with what it served by label once the block ends: the server counts
    by the label in each request's path, so a client's own count is never what is trusted."""
    command = [sys.executable, str(LEAN_SERVER), "--latency", str(latency)]
    if reply is not None:
        command += ["--reply", reply]
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert server.stdin is not None and server.stdout is not None
    port = int(server.stdout.readline().split()[1])
    counting = CountingServer(f"http://127.0.0.1:{port}")
    try:
        yield counting
    finally:
        server.stdin.close()  # the server serves until its standard input closes
        report = server.stdout.read()
        server.wait(timeout=30)
    for line in report.splitlines():
        if line.startswith("SERVED-LABEL "):
            label, requests, images, sent, seconds = line.split()[1:]
            counting.served[label] = Served(int(requests), int(images), int(sent), float(seconds))
