"""Slow and idle connections against the real server on loopback: every request must arrive
within the deadline or its connection is closed, and beyond the connection limit requests are
answered 503 instead of queueing."""

from __future__ import annotations

import http.client
import select
import socket
import time

#: Generous bound for a connection to be closed once its 1 s deadline has passed.
BOUND_SECONDS = 10.0


def slow_client(port: int) -> socket.socket:
    """A connection that has sent half of its headers and never sends the blank line."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(b"GET /login HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    return sock


def closed_by_server(sock: socket.socket) -> bool:
    """True once the server has closed ``sock`` (end of file or reset), without blocking."""
    readable, _, _ = select.select([sock], [], [], 0)
    if not readable:
        return False
    try:
        return sock.recv(4096) == b""
    except ConnectionError:
        return True


def test_connections_with_unfinished_headers_are_closed_within_the_deadline(project, start_server):
    server = start_server(project.db, options={"request_seconds": 1.0})
    slow = [slow_client(server.port) for _ in range(40)]
    idle = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(5)]
    started = time.monotonic()
    open_ = list(slow)
    while open_ and time.monotonic() - started < BOUND_SECONDS:
        for sock in list(open_):  # trickle a byte each round: it must not extend the deadline
            if closed_by_server(sock):
                open_.remove(sock)
                continue
            try:
                sock.sendall(b"X")
            except OSError:
                open_.remove(sock)
        time.sleep(0.1)
    assert open_ == [], f"{len(open_)} slow connections still open after {BOUND_SECONDS} s"
    assert all(closed_by_server(sock) for sock in idle)  # ones that sent nothing, too
    for sock in slow + idle:
        sock.close()
    assert server.request("GET", "/login")[0] == 200  # the server itself is fine


def test_a_finished_request_is_not_cut_by_the_deadline(project, start_server):
    server = start_server(project.db, options={"request_seconds": 1.0})
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(b"GET /login HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        time.sleep(1.5)  # longer than the deadline, but the request was complete at once
        assert sock.recv(64).startswith(b"HTTP/1.1 200")


def test_requests_beyond_the_connection_limit_are_answered_503(project, start_server):
    server = start_server(project.db, options={"request_seconds": 1.0, "max_connections": 8})
    held = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(8)]
    time.sleep(0.2)  # let the server accept them all
    assert server.request("GET", "/login")[0] == 503
    started = time.monotonic()
    while time.monotonic() - started < BOUND_SECONDS and not all(map(closed_by_server, held)):
        time.sleep(0.1)
    assert server.request("GET", "/login")[0] == 200  # the held ones were closed: room again
    for sock in held:
        sock.close()


def test_one_address_holding_many_connections_does_not_starve_the_others(
    project, start_server, loopback_addresses
):
    server = start_server(project.db, options={"request_seconds": 60.0})
    hog = [slow_client(server.port) for _ in range(220)]  # unfinished, all from 127.0.0.1
    refused: set[int] = set()  # beyond the 50 an address may hold, each is answered 503 at once
    started = time.monotonic()
    while len(refused) < 220 - 50 and time.monotonic() - started < BOUND_SECONDS:
        readable, _, _ = select.select([s for s in hog if s.fileno() not in refused], [], [], 0.1)
        for sock in readable:
            assert sock.recv(64).startswith(b"HTTP/1.1 503")
            refused.add(sock.fileno())
    time.sleep(0.2)  # none of the 50 held is answered: they have sent no whole request
    assert len(refused) == 220 - 50
    assert not select.select([s for s in hog if s.fileno() not in refused], [], [], 0)[0]
    answered = []
    for n in range(45):  # 45 people, each from an address of their own
        connection = http.client.HTTPConnection(
            "127.0.0.1", server.port, timeout=20, source_address=(f"127.0.1.{n + 1}", 0)
        )
        try:
            connection.request("GET", "/login")
            answered.append(connection.getresponse().status)
        finally:
            connection.close()
    assert answered == [200] * 45
    for sock in hog:
        sock.close()


def test_the_per_address_limit_is_a_setting(project, start_server):
    server = start_server(project.db, options={"max_per_address": 2})
    held = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(2)]
    time.sleep(0.2)
    status, _, body = server.request("GET", "/login")
    assert status == 503 and b"too many connections from your address" in body
    for sock in held:
        sock.close()
    time.sleep(0.2)
    assert server.request("GET", "/login")[0] == 200
