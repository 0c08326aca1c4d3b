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

uvicorn's own connection limit is global: one client holding that many connections open
(unfinished, within the deadline, again and again) would have every other person's request
answered 503. So each address may hold at most ``MAX_PER_ADDRESS`` connections, well below the
global limit; a connection beyond that is answered 503 at once and closed, before it is read
or counted towards the global limit.

Imported by :func:`gavel.annotate.server.serve` only (it needs uvicorn and h11).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from gavel.annotate.limits import (
    KEEP_ALIVE_SECONDS,
    MAX_CONNECTIONS,
    MAX_PER_ADDRESS,
    REQUEST_SECONDS,
)

_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: 45\r\nconnection: close\r\n\r\n"
    b"too many connections from your address; wait\n"
)


def _address(transport: asyncio.BaseTransport) -> str:
    peer = transport.get_extra_info("peername")
    return str(peer[0]) if isinstance(peer, tuple) and peer else ""


def deadline_protocol(seconds: float, per_address: int = MAX_PER_ADDRESS) -> type[H11Protocol]:
    """The h11 protocol class with a ``seconds`` deadline for receiving each request and at
    most ``per_address`` open connections per client address."""
    open_per_address: Counter[str] = Counter()  # this server's connections, by address

    class DeadlineH11Protocol(H11Protocol):
        request_deadline: asyncio.TimerHandle | None = None
        address: str | None = None  # set once the connection counts towards its address

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            address = _address(transport)
            if open_per_address[address] >= per_address:
                transport.write(_BUSY)
                transport.close()
                return
            open_per_address[address] += 1
            self.address = address
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            if self.address is None:  # refused: nothing it sends is read
                return
            super().data_received(data)
            if self.conn.their_state in (h11.IDLE, h11.SEND_BODY):  # a request is coming in
                self._arm()
            else:
                self._disarm()

        def connection_lost(self, exc: Exception | None) -> None:
            if self.address is None:
                return
            open_per_address[self.address] -= 1
            if not open_per_address[self.address]:
                del open_per_address[self.address]
            self.address = None
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
    request_seconds: float | None = None,
    max_connections: int | None = None,
    max_per_address: int | None = None,
) -> dict[str, Any]:
    """The settings :func:`gavel.annotate.server.serve` gives ``uvicorn.Config`` (``None``: the
    defaults of :mod:`gavel.annotate.limits`)."""
    return {
        "http": deadline_protocol(
            request_seconds or REQUEST_SECONDS, max_per_address or MAX_PER_ADDRESS
        ),
        "timeout_keep_alive": KEEP_ALIVE_SECONDS,
        "limit_concurrency": max_connections or MAX_CONNECTIONS,
    }
