"""The loopback OpenAI-protocol server of the tests, started in a subprocess for benchmarks.

In its own process the server's work does not count against the client being measured.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

SERVER = Path(__file__).resolve().parents[1] / "tests" / "runner" / "openai_server.py"


@contextlib.contextmanager
def loopback_server(latency: float, reply: str | None = None) -> Iterator[str]:
    """Yields the server's base URL; the server stops when the block ends."""
    command = [sys.executable, str(SERVER), "--latency", str(latency)]
    if reply is not None:
        command += ["--reply", reply]
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline().split()[1])  # type: ignore[union-attr]
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.stdin.close()  # type: ignore[union-attr]  (the server serves until stdin closes)
        server.wait(timeout=10)
