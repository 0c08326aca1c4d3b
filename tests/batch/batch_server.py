"""A real OpenAI Files + Batches server on 127.0.0.1, for the batch tests.

It implements what gavel's batch mode uses, over HTTP as the ``openai`` client speaks it:

- ``POST /v1/files`` (multipart, purpose ``batch``), ``GET /v1/files``, ``GET /v1/files/ID``,
  ``GET /v1/files/ID/content``;
- ``POST /v1/batches``, ``GET /v1/batches`` (newest first), ``GET /v1/batches/ID``,
  ``POST /v1/batches/ID/cancel``;
- ``POST /v1/chat/completions`` (the online fallback), answered by the same :attr:`reply`.

A batch is ``validating`` at first, then ``in_progress`` for :attr:`FakeBatchServer.duration`
seconds (as it was when the batch was created), finishing its lines evenly over that time, then ``completed`` (or ``expired`` after
:attr:`expire_after` seconds: the lines not finished by then go to the error file as
``batch_expired``, as OpenAI does). :attr:`plan` decides per line (``custom_id``, body, how many
batches carried that id before) what goes wrong: :class:`LineFault` in the error file, an HTTP
status in the output file, or another reply text (an invalid one). :attr:`fail_input` makes a
batch fail as a whole (OpenAI's input validation). :attr:`hold_at` keeps every batch
``in_progress`` with at most that many lines finished until the test lets it go (or cancels it),
so a run is killed or cancelled while it waits, on a machine of any speed.

:attr:`upload_delay` and :attr:`create_delay` hold the reply after the file or batch was made,
so a client killed (or timed out) while waiting leaves the server with something it never heard
of; :attr:`upload_faults` and :attr:`create_faults` lose the reply of the next uploads or
creates after the work was done (``"drop"``: the connection closed without a reply, ``"500"``:
an error answered). Listings are paginated (``limit``, ``after``, ``has_more``) as OpenAI's,
newest first, or, by switches, as other servers give them (refused, ``after`` ignored, oldest
first, every purpose); :meth:`add_batches` gives the account a history of other batches (as
many as a test needs, of any age); :attr:`refuse_metadata` makes a server that refuses batch
``metadata``; :attr:`download_faults` answers the next downloads of a batch's results with an
error status.
Counters: :attr:`uploads`, :attr:`created`, :attr:`sent` (every custom_id, counted once per
batch that carried it), :attr:`billed` (every custom_id, counted once per answer the server gave
and bills: a line of an output file), :attr:`billed_tokens`, :attr:`polls`, :attr:`online` (chat
requests).
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass(frozen=True)
class LineFault:
    """What happens to one request line of a batch instead of a normal answer."""

    #: An entry in the error file with this code (OpenAI's shape: response null).
    error_code: str | None = None
    #: A status other than 200 in the output file, with an error body.
    status: int | None = None
    message: str = "injected failure"
    #: A 200 answer with this text instead of the normal reply (an invalid judge reply).
    reply: str | None = None
    #: ``choices[0].finish_reason`` of that answer.
    finish_reason: str = "stop"
    #: A 200 answer with this body instead of a completion (a broken reply).
    body: Any = None
    #: The answer's line in the output file cut short (a damaged file): billed all the same.
    cut: bool = False


def prompt_of(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if part.get("type") == "text")


def completion(body: dict[str, Any], text: str, finish_reason: str = "stop") -> dict[str, Any]:
    """A chat completion of ``text``; usage: words of the prompt in, words of the reply out."""
    prompt_tokens = len(prompt_of(body).split())
    completion_tokens = len(text.split())
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "test"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


class _Server(ThreadingHTTPServer):
    request_queue_size = 128
    daemon_threads = True
    block_on_close = False


class FakeBatchServer:
    """Start with ``with FakeBatchServer() as server:``; ``server.url`` is the base URL."""

    def __init__(self, *, duration: float = 0.3):
        self.duration = duration
        #: While set, no batch has more than this many lines finished, and one with more lines
        #: stays ``in_progress`` until it is cancelled or this is set back to None: a batch
        #: that waits for the test however slow the machine is (its clock runs on meanwhile).
        self.hold_at: int | None = None
        self.expire_after: float | None = None
        self.fail_input: str | None = None
        self.upload_delay = 0.0
        self.create_delay = 0.0
        #: Answer every upload with a 500 (a server that cannot take files right now).
        self.refuse_uploads = False
        #: What happens to the reply of the next uploads / creates, done all the same.
        self.upload_faults: list[str] = []
        self.create_faults: list[str] = []
        #: The longest page a listing gives, and how many pages were given.
        self.max_page = 100
        self.listed = 0
        #: Listings as some servers and proxies give them: ``list_status`` answers the listing
        #: of a route (``"/files"``, ``"/batches"``) with that HTTP status; ``ignore_after``
        #: gives the first page whatever ``after`` says, and no ``has_more``;
        #: ``oldest_first`` lists in creation order; ``ignore_purpose`` lists files of every
        #: purpose.
        self.list_status: dict[str, int] = {}
        self.ignore_after = False
        self.oldest_first = False
        self.ignore_purpose = False
        #: Fields left out of every file object shown (servers that keep no ``status``).
        self.file_fields_left_out: tuple[str, ...] = ()
        #: Refuse (400) a create that carries ``metadata``, as a server without it may.
        self.refuse_metadata = False
        #: The next downloads of a batch's output file give only its first half of lines
        #: (a file still being written when the batch says ``completed``).
        self.partial_downloads = 0
        #: The next downloads of a batch's output or error file answer this HTTP status
        #: instead (404: a file the server lost or has not made available yet).
        self.download_faults: list[int] = []
        self.downloads = 0
        #: The reply text for a request body; the default echoes the prompt.
        self.reply: Callable[[dict[str, Any]], str] = lambda body: f"echo: {prompt_of(body)}"
        #: (custom_id, body, batches that carried it before) -> a fault or None.
        self.plan: Callable[[str, dict[str, Any], int], LineFault | None] | None = None
        self.files: dict[str, dict[str, Any]] = {}
        self.contents: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.uploads = 0
        self.created = 0
        self.sent: Counter[str] = Counter()
        self.billed: Counter[str] = Counter()
        #: Tokens of every billed answer (``prompt_tokens``, ``completion_tokens``).
        self.billed_tokens: Counter[str] = Counter()
        #: Request bodies of every created batch, by custom_id (the last one seen).
        self.bodies: dict[str, dict[str, Any]] = {}
        self.polls = 0
        #: The Authorization header of every request, in order (where keys went).
        self.authorizations: list[str] = []
        self.online = 0
        self.online_bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._httpd = _Server(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> FakeBatchServer:
        threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    # --- the batch's life -----------------------------------------------------------------

    def _new_file(self, name: str, data: bytes, purpose: str) -> dict[str, Any]:
        file_id = f"file-{len(self.contents) + 1}"
        self.contents[file_id] = data
        entry = {"id": file_id, "object": "file", "bytes": len(data), "created_at": int(time.time()),
                 "filename": name, "purpose": purpose, "status": "processed"}  # fmt: skip
        self.files[file_id] = entry
        return entry

    def _create(self, payload: dict[str, Any]) -> dict[str, Any]:
        lines = [json.loads(x) for x in self.contents[payload["input_file_id"]].splitlines()]
        batch_id = f"batch_{self.created + 1}"
        batch = {
            "id": batch_id, "object": "batch", "endpoint": payload["endpoint"], "errors": None,
            "input_file_id": payload["input_file_id"],
            "completion_window": payload["completion_window"], "status": "validating",
            "output_file_id": None, "error_file_id": None, "created_at": int(time.time()),
            "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
            "metadata": payload.get("metadata"),
        }  # fmt: skip
        plans = []
        for line in lines:
            before = self.sent[line["custom_id"]]
            self.sent[line["custom_id"]] += 1
            self.bodies[line["custom_id"]] = line["body"]
            plans.append(self.plan(line["custom_id"], line["body"], before) if self.plan else None)
        self.batches[batch_id] = batch
        self.created += 1
        batch["_started"] = time.monotonic()
        batch["_duration"] = self.duration  # a later change applies to later batches
        batch["_lines"] = lines
        batch["_plans"] = plans
        return batch

    def _advance(self, batch: dict[str, Any]) -> None:
        """Bring a batch's status up to now (called before it is shown)."""
        if batch["status"] in ("completed", "failed", "expired", "cancelled"):
            return
        elapsed = time.monotonic() - batch["_started"]
        total = len(batch["_lines"])
        if self.fail_input is not None:
            batch["errors"] = {"object": "list", "data": [
                {"code": "invalid_request", "message": self.fail_input, "line": 1, "param": None}
            ]}  # fmt: skip
            batch["status"] = "failed"
            return
        duration = batch["_duration"]
        done = self._done_by(batch, elapsed)
        if batch["status"] == "cancelling":
            self._finish(batch, batch.get("_done_at_cancel", done), "cancelled", "batch_cancelled")
            return
        if self.expire_after is not None and elapsed >= self.expire_after:
            self._finish(batch, self._done_by(batch, self.expire_after), "expired", "batch_expired")
            return
        batch["status"] = "in_progress"
        failed = sum(1 for p in batch["_plans"][:done] if p and p.error_code)
        batch["request_counts"].update(completed=done - failed, failed=failed)
        if done >= total and elapsed >= duration:
            self._finish(batch, total, "completed", None)

    def _done_by(self, batch: dict[str, Any], elapsed: float) -> int:
        """How many of a batch's lines are finished ``elapsed`` seconds after its creation."""
        total, duration = len(batch["_lines"]), batch["_duration"]
        done = min(total, int(total * elapsed / duration)) if duration else total
        return done if self.hold_at is None else min(done, self.hold_at)

    def _finish(self, batch: dict[str, Any], done: int, status: str, rest_code: str | None):
        output, errors = [], []
        for index, (line, fault) in enumerate(zip(batch["_lines"], batch["_plans"], strict=True)):
            entry = {"id": f"batch_req_{index}", "custom_id": line["custom_id"]}
            if index >= done:
                errors.append({**entry, "response": None, "error": {
                    "code": rest_code, "message": f"This request was not run ({status})."}})  # fmt: skip
            elif fault and fault.error_code:
                errors.append({**entry, "response": None,
                               "error": {"code": fault.error_code, "message": fault.message}})  # fmt: skip
            elif fault and fault.body is not None:
                output.append({**entry, "error": None,
                               "response": {"status_code": 200, "body": fault.body}})  # fmt: skip
            elif fault and fault.status:
                body = {"error": {"message": fault.message, "type": "invalid_request_error"}}
                output.append({**entry, "error": None,
                               "response": {"status_code": fault.status, "body": body}})  # fmt: skip
            else:
                text = (
                    fault.reply if fault and fault.reply is not None else self.reply(line["body"])
                )
                reason = fault.finish_reason if fault else "stop"
                output.append({**entry, "error": None, "response": {
                    "status_code": 200, "request_id": f"req_{index}",
                    "body": completion(line["body"], text, reason)},
                    **({"_cut": True} if fault and fault.cut else {})})  # fmt: skip
        for row in output:  # what the server bills: every answer it gave (status 200)
            if row["response"]["status_code"] != 200:
                continue
            self.billed[row["custom_id"]] += 1
            usage = (row["response"].get("body") or {}).get("usage") or {}
            for name in ("prompt_tokens", "completion_tokens"):
                self.billed_tokens[name] += usage.get(name, 0)

        def encode(rows: list[dict[str, Any]]) -> bytes:
            lines = (json.dumps({k: v for k, v in r.items() if k != "_cut"}).encode()[
                : 150 if r.get("_cut") else None] for r in rows)  # fmt: skip
            return b"".join(line + b"\n" for line in lines)

        if output:
            batch["output_file_id"] = self._new_file("out.jsonl", encode(output), "batch_output")[
                "id"
            ]
        if errors:
            batch["error_file_id"] = self._new_file("err.jsonl", encode(errors), "batch_output")[
                "id"
            ]
        batch["request_counts"].update(completed=len(output), failed=len(errors))
        batch["status"] = status

    def page(self, data: list[dict[str, Any]], query: dict[str, list[str]],
             show: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:  # fmt: skip
        """One page of a listing (``data`` newest first), as OpenAI's cursor pagination gives
        it (at most :attr:`max_page` entries, whatever the client asks), each entry as
        ``show`` shows it."""
        if self.oldest_first:
            data = list(reversed(data))
        if self.ignore_after:
            self.listed += 1
            return {"object": "list", "data": [show(e) for e in data[: self.max_page]]}
        after = query.get("after", [None])[0]
        if after is not None:
            ids = [entry["id"] for entry in data]
            data = data[ids.index(after) + 1 :] if after in ids else []
        limit = min(int(query.get("limit", ["20"])[0]), self.max_page)
        self.listed += 1
        return {"object": "list", "data": [show(e) for e in data[:limit]],
                "has_more": len(data) > limit, "first_id": data[0]["id"] if data else None,
                "last_id": data[:limit][-1]["id"] if data else None}  # fmt: skip

    def add_batches(self, count: int, *, age: float = 0.0,
                    metadata: dict[str, str] | None = None) -> None:  # fmt: skip
        """``count`` finished batches that are not the test's (other runs', other users' of
        the account), created ``age`` seconds ago: an account with a long history."""
        created = int(time.time() - age)
        with self._lock:
            for _ in range(count):
                batch_id = f"batch_other_{len(self.batches) + 1}"
                self.batches[batch_id] = {
                    "id": batch_id, "object": "batch", "endpoint": "/v1/chat/completions",
                    "errors": None, "input_file_id": "file-other", "completion_window": "24h",
                    "status": "completed", "output_file_id": None, "error_file_id": None,
                    "created_at": created, "metadata": metadata,
                    "request_counts": {"total": 1, "completed": 1, "failed": 0},
                }  # fmt: skip

    def newest_first(self) -> list[dict[str, Any]]:
        """Every batch, newest first (by ``created_at``; the later made first among equals)."""
        made = list(self.batches.values())
        return sorted(made, key=lambda batch: batch["created_at"])[::-1]

    def shown(self, entry: dict[str, Any]) -> dict[str, Any]:
        """A file object as this server shows it."""
        return {k: v for k, v in entry.items() if k not in self.file_fields_left_out}

    @staticmethod
    def public(batch: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in batch.items() if not k.startswith("_")}

    # --- HTTP ---------------------------------------------------------------------------------

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, status: int, payload: Any, raw: bytes | None = None) -> None:
                data = raw if raw is not None else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

            def _reply(self, status: int, payload: Any, fault: str | None) -> None:
                """The reply, or what ``fault`` makes of it (the work is done either way)."""
                if fault == "drop":
                    self.close_connection = True  # closed without a word
                elif fault == "500":
                    self._send(
                        500, {"error": {"message": "internal error", "type": "server_error"}}
                    )
                else:
                    self._send(status, payload)

            def _missing(self) -> None:
                self._send(404, {"error": {"message": f"no such thing: {self.path}"}})

            def do_GET(self) -> None:
                server.authorizations.append(self.headers.get("Authorization", ""))
                path = urlsplit(self.path).path.removeprefix("/v1")
                query = parse_qs(urlsplit(self.path).query)
                with server._lock:
                    if path in server.list_status:
                        server.listed += 1
                        self._send(server.list_status[path], {"error": {"message": "no route"}})
                    elif path == "/files":
                        purpose = query.get("purpose", [None])[0]
                        if server.ignore_purpose:
                            purpose = None
                        data = [f for f in reversed(server.files.values())
                                if purpose is None or f["purpose"] == purpose]  # fmt: skip
                        self._send(200, server.page(data, query, server.shown))
                    elif path.startswith("/files/") and path.endswith("/content"):
                        file_id = path.split("/")[2]
                        if file_id not in server.contents:
                            return self._missing()
                        if server.download_faults and server.files[file_id]["purpose"] == (
                            "batch_output"
                        ):
                            status = server.download_faults.pop(0)
                            return self._send(status, {"error": {
                                "message": f"No such File object: {file_id}",
                                "type": "invalid_request_error"}})  # fmt: skip
                        server.downloads += 1
                        data = server.contents[file_id]
                        if server.partial_downloads and server.files[file_id]["purpose"] == (
                            "batch_output"
                        ):
                            server.partial_downloads -= 1
                            rows = data.splitlines(keepends=True)
                            data = b"".join(rows[: len(rows) // 2])
                        self._send(200, None, data)
                    elif path.startswith("/files/"):
                        entry = server.files.get(path.split("/")[2])
                        self._send(200, server.shown(entry)) if entry else self._missing()
                    elif path == "/batches":
                        for batch in server.batches.values():
                            server._advance(batch)
                        self._send(200, server.page(server.newest_first(), query, server.public))
                    elif path.startswith("/batches/"):
                        batch = server.batches.get(path.split("/")[2])
                        if batch is None:
                            return self._missing()
                        server.polls += 1
                        server._advance(batch)
                        self._send(200, server.public(batch))
                    else:
                        self._missing()

            def do_POST(self) -> None:
                server.authorizations.append(self.headers.get("Authorization", ""))
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                path = urlsplit(self.path).path.removeprefix("/v1")
                if path == "/files" and server.refuse_uploads:
                    self._send(500, {"error": {"message": "uploads are down"}})
                elif path == "/files":
                    parsed = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
                        b"Content-Type: "
                        + self.headers["Content-Type"].encode()
                        + b"\r\n\r\n"
                        + raw
                    )
                    fields = {}
                    for part in parsed.iter_parts():
                        name = part.get_param("name", header="content-disposition")
                        fields[name] = (part.get_filename(), part.get_payload(decode=True))
                    with server._lock:
                        server.uploads += 1
                        entry = server._new_file(fields["file"][0], fields["file"][1],
                                                 fields["purpose"][1].decode())  # fmt: skip
                        fault = server.upload_faults.pop(0) if server.upload_faults else None
                    time.sleep(server.upload_delay)
                    self._reply(200, server.shown(entry), fault)
                elif (
                    path == "/batches"
                    and server.refuse_metadata
                    and json.loads(raw).get("metadata")
                ):
                    self._send(400, {"error": {"message": "Unrecognized request argument "
                                               "supplied: metadata"}})  # fmt: skip
                elif path == "/batches":
                    with server._lock:
                        batch = server.public(server._create(json.loads(raw)))
                        fault = server.create_faults.pop(0) if server.create_faults else None
                    time.sleep(server.create_delay)
                    self._reply(200, batch, fault)
                elif path.startswith("/batches/") and path.endswith("/cancel"):
                    with server._lock:
                        batch = server.batches.get(path.split("/")[2])
                        if batch is None:
                            return self._missing()
                        server._advance(batch)
                        if batch["status"] in ("validating", "in_progress"):
                            elapsed = time.monotonic() - batch["_started"]
                            batch["_done_at_cancel"] = server._done_by(batch, elapsed)
                            batch["status"] = "cancelling"
                        self._send(200, server.public(batch))
                elif path == "/chat/completions":
                    body = json.loads(raw)
                    with server._lock:
                        server.online += 1
                        server.online_bodies.append(body)
                    self._send(200, completion(body, server.reply(body)))
                else:
                    self._missing()

        return Handler
