"""A loopback OpenAI-protocol server started in a subprocess for benchmarks.

In its own process the server's work does not count against the client being measured. The
default is the fault-injecting server of the tests; ``lean=True`` starts ``bench_server.py``,
whose own CPU per request is a small fraction of any client's (for image bodies).
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
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
