"""Backoff for wrong tokens: the schedule on a made-up clock, then the real server over HTTP
(login form and bearer tokens), where the right token still gets in."""

from __future__ import annotations

import http.client
import re
import socket
import time
from urllib.parse import urlencode

from gavel.annotate.throttle import TokenBackoff


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def fail(backoff: TokenBackoff, client: str) -> None:
    backoff.ended(client, backoff.started(client), right=False)


def test_the_wait_doubles_after_the_free_failures_and_a_right_token_clears_it():
    clock = Clock()
    backoff = TokenBackoff(free=3, first=1.0, cap=8.0, forget=100.0, clock=clock)
    for _ in range(2):
        fail(backoff, "a")
        assert backoff.wait("a") == 0
    waits = []
    for _ in range(6):  # the 3rd failure: 1 s, then 2, 4, 8, 8 (the cap), 8
        fail(backoff, "a")
        waits.append(backoff.wait("a"))
        clock.now += waits[-1]
        assert backoff.wait("a") == 0  # the wait is over: the next token is looked at
    assert waits == [1, 2, 4, 8, 8, 8]
    assert backoff.wait("b") == 0  # other addresses are not affected
    fail(backoff, "a")
    clock.now += 0.5
    assert backoff.wait("a") == 8  # whole seconds, rounded up (7.5 -> 8)
    clock.now += 7.5
    backoff.ended("a", backoff.started("a"), right=True)
    fail(backoff, "a")
    assert backoff.wait("a") == 0  # the count started again


def test_unknown_outcomes_are_not_counted_and_old_failures_are_forgotten():
    clock = Clock()
    backoff = TokenBackoff(free=1, first=5.0, forget=60.0, clock=clock)
    backoff.ended("a", backoff.started("a"), right=None)  # e.g. the database was locked
    assert backoff.wait("a") == 0
    fail(backoff, "a")
    assert backoff.wait("a") == 5
    clock.now += 61
    fail(backoff, "a")  # the earlier failure is forgotten: this is the first again
    assert backoff.wait("a") == 5


def test_checks_in_flight_count_once_the_address_has_failed():
    backoff = TokenBackoff(free=3, clock=Clock())
    for _ in range(3):  # an address that never failed is never held up by parallel requests
        backoff.started("a")
    assert backoff.wait("a") == 0
    fail(backoff, "b")
    first = backoff.started("b")
    assert backoff.wait("b") == 0  # 1 failure + 1 running < 3
    second = backoff.started("b")
    assert backoff.wait("b") == 1  # 1 + 2 running: those checks decide first
    backoff.ended("b", first, right=None)
    assert backoff.wait("b") == 0  # 1 + 1 running again
    backoff.ended("b", second, right=True)
    assert backoff.wait("b") == 0
    # A check that began before the address had failed does not count on the later record.
    early = backoff.started("c")
    fail(backoff, "c")
    backoff.started("c")
    backoff.ended("c", early, right=None)
    backoff.started("c")
    assert backoff.wait("c") == 1  # 1 failure + the 2 checks still running


def bearer(server, token: str, source: str = "127.0.0.1") -> tuple[int, dict[str, str]]:
    """GET /api/next with ``token`` from the loopback address ``source``."""
    connection = http.client.HTTPConnection(
        "127.0.0.1", server.port, timeout=20, source_address=(source, 0)
    )
    try:
        connection.request("GET", "/api/next", headers={"Authorization": f"Bearer {token}"})
        response = connection.getresponse()
        response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}
    finally:
        connection.close()


def other_loopback_address() -> str | None:
    """127.0.0.2 where the system routes it to loopback (Linux does), else None."""
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.2", 0))
        except OSError:
            return None
    return "127.0.0.2"


def test_wrong_bearer_tokens_are_throttled_and_the_right_one_still_gets_in(served):
    project, server = served
    statuses = [bearer(server, "gvl_wrong")[0] for _ in range(40)]
    assert statuses[:5] == [401] * 5  # the free attempts
    assert set(statuses[5:]) == {429}  # then a wait, with tokens no longer looked at
    status, headers = bearer(server, project.tokens["ana"])
    assert status == 429 and headers["retry-after"] == "1"  # 5 failures: 1 s
    other = other_loopback_address()
    if other is not None:  # another address is not held up at all
        assert bearer(server, project.tokens["ana"], other)[0] == 200
    time.sleep(int(headers["retry-after"]))
    assert bearer(server, project.tokens["ana"])[0] == 200  # at once when the wait is over
    assert bearer(server, "gvl_wrong")[0] == 401  # and the count started again


def test_wrong_logins_are_throttled_on_the_login_form(served):
    project, server = served

    def post_login(token: str) -> tuple[int, dict[str, str], bytes]:
        _, headers, body = server.request("GET", "/login")
        nonce = re.search(r'name="csrf" value="([^"]+)"', body.decode()).group(1)
        return server.request(
            "POST",
            "/login",
            raw=urlencode({"csrf": nonce, "token": token}).encode(),
            headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "Cookie": headers["set-cookie"].split(";")[0],
                "Origin": server.url,
            },
        )

    answers = [post_login("gvl_wrong") for _ in range(30)]
    assert [a[0] for a in answers[:5]] == [401] * 5
    assert {a[0] for a in answers[5:]} == {429}
    status, headers, page = answers[-1]
    assert b"Too many wrong tokens from your address" in page and "retry-after" in headers
    time.sleep(int(headers["retry-after"]))
    status, headers, _ = post_login(project.tokens["ana"])
    assert status == 303 and "gavel_session=" in headers["set-cookie"]
