"""A small annotation project on a real SQLite file, and the real server in a subprocess."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the annotation app needs the 'annotate' extra")

from PIL import Image, ImageDraw

from gavel.annotate import db
from gavel.annotate.store import import_pairs
from gavel.annotate.users import add_user

CAPTIONS = [
    ("street#0", "street.png", "A red car is parked next to the tree."),
    ("street#1", "street.png", "Two people <b>walk</b> past the shop & smile."),
    ("kitchen#0", "rooms/kitchen.jpg", "A white cup stands on the table."),
    ("kitchen#1", "rooms/kitchen.jpg", "Three apples lie in a bowl."),
]


@dataclass
class Project:
    root: Path
    db: Path
    images: Path
    tokens: dict[str, str] = field(default_factory=dict)


def make_project(
    root: Path, *, double: float = 0.0, users: dict[str, str] | None = None
) -> Project:
    """Images, a pairs file, the database with its items, and one user per role."""
    images = root / "photos"
    (images / "rooms").mkdir(parents=True)
    street = Image.new("RGB", (400, 300), "#bcd")
    ImageDraw.Draw(street).rectangle((40, 150, 160, 230), fill="blue")  # the "red" car is blue
    street.save(images / "street.png")
    Image.new("RGB", (640, 480), "#eed").save(images / "rooms" / "kitchen.jpg")
    pairs = root / "scored.jsonl"
    pairs.write_text(
        "".join(
            json.dumps({"id": i, "image": im, "caption": c, "alignment": 2.0, "source": "vlm"})
            + "\n"
            for i, im, c in CAPTIONS
        )
    )
    path = root / "project.sqlite"
    project = Project(root=root, db=path, images=images)
    conn = db.connect(path, create=True)
    try:
        import_pairs(conn, path, pairs, images, double=double)
        for name, role in (
            users or {"ana": "annotator", "rev": "reviewer", "chk": "checker"}
        ).items():
            project.tokens[name] = add_user(conn, name, role)
    finally:
        conn.close()
    return project


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return make_project(tmp_path)


@pytest.fixture(name="make_project")
def make_project_fixture():
    """``make_project(root, double=..., users=...)`` for tests that need another project."""
    return make_project


SERVE = (
    "import json, sys; from gavel.annotate.server import serve; "
    "serve(sys.argv[1], port=0, **json.loads(sys.argv[2]))"
)
#: Seconds a server may take to print its address before the test fails (instead of hanging).
START_SECONDS = 60


class Server:
    """The annotation server in a subprocess on a free loopback port."""

    def __init__(
        self,
        db_path: Path,
        env: dict[str, str] | None = None,
        command: list[str] | None = None,
        options: dict[str, Any] | None = None,
    ):
        self.db_path = db_path
        # By default the server function `gavel annotate serve` calls (with ``options`` as its
        # keyword arguments), without the command line's imports (0.5 s instead of 2 s a
        # start); test_cli.py runs the command itself.
        command = command or [sys.executable, "-c", SERVE, str(db_path), json.dumps(options or {})]
        self.proc = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
        )
        line = self._first_line()
        match = re.search(r"http://127\.0\.0\.1:(\d+)", line)
        if not match:
            self.proc.kill()
            raise RuntimeError(f"server did not start: {line!r} {self.proc.stderr.read()!r}")  # type: ignore[union-attr]
        self.port = int(match.group(1))
        self.url = f"http://127.0.0.1:{self.port}"
        self._wait_ready()

    def _first_line(self) -> str:
        """The server's first line of output, waiting at most START_SECONDS: a server that hangs
        before printing it fails the test instead of hanging the whole suite."""
        lines: list[str] = []
        reader = threading.Thread(
            target=lambda: lines.append(self.proc.stdout.readline()),  # type: ignore[union-attr]
            daemon=True,
        )
        reader.start()
        reader.join(START_SECONDS)
        if reader.is_alive():
            self.proc.kill()  # the pending readline then ends at end of file
            reader.join(10)
            raise RuntimeError(f"server printed no address within {START_SECONDS} s")
        return lines[0] if lines else ""

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                self.request("GET", "/login")
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("server did not answer")

    def request(
        self,
        method: str,
        path: str,
        *,
        token: str | None = None,
        body: Any = None,
        headers: dict[str, str] | None = None,
        raw: bytes | None = None,
        timeout: float = 20,
    ) -> tuple[int, dict[str, str], bytes]:
        """One HTTP request; returns (status, lower-cased headers, body)."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        sent = dict(headers or {})
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        payload = raw
        if body is not None:
            payload = json.dumps(body).encode()
            sent.setdefault("Content-Type", "application/json")
        try:
            connection.request(method, path, body=payload, headers=sent)
            response = connection.getresponse()
            found: dict[str, str] = {}
            for key, value in response.getheaders():  # repeated headers (set-cookie): one a line
                key = key.lower()
                found[key] = f"{found[key]}\n{value}" if key in found else value
            return response.status, found, response.read()
        finally:
            connection.close()

    def json(self, method: str, path: str, **options: Any) -> tuple[int, Any]:
        status, _, data = self.request(method, path, **options)
        return status, json.loads(data) if data else None

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=10)
        self.kill()


@pytest.fixture
def start_server():
    """Start servers (``start_server(db_path, env=..., options=...)``); all are stopped after the
    test."""
    for module in ("starlette", "uvicorn", "jinja2"):
        pytest.importorskip(module, reason="the annotation server needs the 'annotate' extra")
    started: list[Server] = []

    def start(
        db_path: Path,
        env: dict[str, str] | None = None,
        command: list[str] | None = None,
        options: dict[str, Any] | None = None,
    ) -> Server:
        server = Server(db_path, env, command, options)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def loopback_addresses() -> None:
    """Skips the test where the system routes only 127.0.0.1 to loopback (Linux routes all of
    127.0.0.0/8, so clients can come from many addresses)."""
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.2", 0))
        except OSError:
            pytest.skip("this system routes only 127.0.0.1 to loopback")


def add_items(project: Project, count: int) -> list[int]:
    """``count`` more items of the project's street image, imported as ``init`` does; their
    ids."""
    pairs = project.root / f"more-{count}.jsonl"
    pairs.write_text("".join(
        json.dumps({"id": f"street#{i + 10}", "image": "street.png",
                    "caption": f"Sentence number {i} about the red car."}) + "\n"
        for i in range(count)
    ))  # fmt: skip
    conn = db.connect(project.db)
    try:
        before = {row[0] for row in conn.execute("SELECT id FROM items")}
        import_pairs(conn, project.db, pairs, project.images)
        return sorted({row[0] for row in conn.execute("SELECT id FROM items")} - before)
    finally:
        conn.close()


@pytest.fixture(name="more_items")
def more_items_fixture():
    """``more_items(project, count)``: more items to work on; their ids."""
    return add_items


@pytest.fixture
def served(project: Project, start_server) -> tuple[Project, Server]:
    return project, start_server(project.db)


HALLUCINATED = {
    "verdict": "hallucinated",
    "category": "Color",
    "explanation": "The car is blue, not red.",
    "boxes": [[40, 150, 120, 80]],
}


@pytest.fixture
def hallucinated() -> dict[str, Any]:
    """A valid annotation of item 1 (the street image's first sentence)."""
    return {**HALLUCINATED, "boxes": [list(b) for b in HALLUCINATED["boxes"]]}
