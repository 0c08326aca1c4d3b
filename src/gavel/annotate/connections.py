"""The server's HTTP protocol: uvicorn's h11 one with a deadline for receiving each request.

uvicorn closes idle keep-alive connections (``timeout_keep_alive``) but has no timeout while a
request is being received: its keep-alive timer is cancelled by every byte that arrives, so a
client that opens connections and sends headers slowly (or never finishes them) holds them
forever, and enough of them starve everyone else ("slowloris"). Middleware cannot help: the app
is called only once the headers are complete. So the deadline sits in the protocol: from the
first moment a request may start (the connection is made, or the first byte after a keep-alive
pause) its headers and body must have arrived within ``REQUEST_SECONDS``, or the connection is
closed. Trickling bytes does not extend it. Once the request is in, the deadline is off: a slow
database answer never cuts a connection.

Imported by :func:`gavel.annotate.server.serve` only (it needs uvicorn and h11).
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

#: Seconds a client has to send a whole request (headers and body; bodies are small here).
REQUEST_SECONDS = 15.0
#: Seconds an idle keep-alive connection stays open (uvicorn's own default, named here).
KEEP_ALIVE_SECONDS = 5
#: Open connections (and running requests) beyond which a new request is answered 503.
MAX_CONNECTIONS = 200


def deadline_protocol(seconds: float) -> type[H11Protocol]:
    """The h11 protocol class with a ``seconds`` deadline for receiving each request."""

    class DeadlineH11Protocol(H11Protocol):
        request_deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state in (h11.IDLE, h11.SEND_BODY):  # a request is coming in
                self._arm()
            else:
                self._disarm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            if self.request_deadline is None:
                self.request_deadline = self.loop.call_later(seconds, self._expired)

        def _disarm(self) -> None:
            if self.request_deadline is not None:
                self.request_deadline.cancel()
                self.request_deadline = None

        def _expired(self) -> None:
            self.request_deadline = None
            if self.conn.their_state in (h11.IDLE, h11.SEND_BODY) and not (
                self.transport.is_closing()
            ):
                self.transport.close()

    return DeadlineH11Protocol


def uvicorn_options(
    request_seconds: float | None = None, max_connections: int | None = None
) -> dict[str, Any]:
    """The settings :func:`gavel.annotate.server.serve` gives ``uvicorn.Config`` (``None``: the
    defaults above)."""
    return {
        "http": deadline_protocol(request_seconds or REQUEST_SECONDS),
        "timeout_keep_alive": KEEP_ALIVE_SECONDS,
        "limit_concurrency": max_connections or MAX_CONNECTIONS,
    }
