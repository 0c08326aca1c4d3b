"""Backoff for wrong tokens: the schedule on a made-up clock, then the real server over HTTP
(login form and bearer tokens, from many loopback addresses), where a valid token always gets
in at once."""

from __future__ import annotations

import http.client
import random
import re
from urllib.parse import urlencode

from gavel.annotate.throttle import TokenBackoff, TokenThrottle, network_of


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_wait_doubles_after_the_free_failures_up_to_the_cap():
    clock = Clock()
    backoff = TokenBackoff(free=3, first=1.0, cap=8.0, forget=100.0, clock=clock)
    for _ in range(2):
        backoff.failed("a")
        assert backoff.wait("a") == 0
    waits = []
    for _ in range(6):  # the 3rd failure: 1 s, then 2, 4, 8, 8 (the cap), 8
        backoff.failed("a")
        waits.append(backoff.wait("a"))
        clock.now += waits[-1]
        assert backoff.wait("a") == 0  # the wait is over: the next wrong one is a 401 again
    assert waits == [1, 2, 4, 8, 8, 8]
    assert backoff.wait("b") == 0  # other keys are not affected
    backoff.failed("a")
    clock.now += 0.5
    assert backoff.wait("a") == 8  # whole seconds, rounded up (7.5 -> 8)


def test_old_failures_are_forgotten():
    clock = Clock()
    backoff = TokenBackoff(free=1, first=5.0, forget=60.0, clock=clock)
    backoff.failed("a")
    assert backoff.wait("a") == 5
    clock.now += 61
    assert backoff.wait("a") == 0
    backoff.failed("a")  # the earlier failure is forgotten: this is the first again
    assert backoff.wait("a") == 5


def test_networks_and_everyone_are_counted_besides_each_address():
    throttle = TokenThrottle(free=2, free_network=3, free_all=5, first=10.0, clock=Clock())
    assert network_of("10.1.2.3") == "10.1.2.0/24"
    assert network_of("2001:db8:1:2:3:4:5:6") == "2001:db8:1:2::/64"
    assert network_of("::ffff:10.1.2.3") == "10.1.2.0/24"  # an IPv4 client on an IPv6 socket
    assert [throttle.wrong("10.0.0.1") for _ in range(3)] == [0, 0, 10]  # the address waits
    assert throttle.wrong("10.0.0.2") == 0  # its neighbour's first: the network's 3rd
    assert throttle.wrong("10.0.0.3") == 10  # a third address of the network waits at once
    assert throttle.wrong("10.9.0.1") == 0  # another network: everyone's 4th
    assert throttle.wrong("10.8.0.1") == 0  # everyone's 5th
    assert throttle.wrong("10.7.0.1") == 10  # then every client waits
    assert throttle.answered == {401: 5, 429: 3}


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


def test_wrong_bearer_tokens_are_throttled_and_the_right_one_gets_in_at_once(served):
    project, server = served
    statuses = [bearer(server, "gvl_wrong")[0] for _ in range(40)]
    assert statuses[:5] == [401] * 5  # the free attempts
    assert set(statuses[5:]) == {429}  # then a wait
    assert bearer(server, "gvl_wrong")[1]["retry-after"] == "1"  # 5 failures: 1 s
    assert bearer(server, project.tokens["ana"])[0] == 200  # a valid token is never held up


def test_the_right_token_is_never_refused_while_another_guesses_from_its_address(served):
    project, server = served
    answers = [
        (bearer(server, "gvl_wrong")[0], bearer(server, project.tokens["ana"])[0])
        for _ in range(30)
    ]
    assert [right for _, right in answers] == [200] * 30
    assert [wrong for wrong, _ in answers][:5] == [401] * 5
    assert {wrong for wrong, _ in answers[5:]} == {429}


def test_guesses_from_many_addresses_are_throttled_by_network_and_for_everyone(
    project, start_server, loopback_addresses
):
    # A first wait of a minute: nothing ends during the test, so the counts are exact.
    server = start_server(project.db, options={"throttle": {"first": 60.0}})
    one_network = [bearer(server, "gvl_wrong", f"127.0.0.{n}")[0] for n in range(2, 102)]
    assert one_network.count(401) == 20 and one_network.count(429) == 80  # the /24's 20
    rng = random.Random(5)
    sources = [
        f"127.{rng.randint(1, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}" for _ in range(400)
    ]
    scattered = [bearer(server, "gvl_wrong", source)[0] for source in sources]
    assert scattered.count(401) == 80 and scattered.count(429) == 320  # everyone's 100 in all
    status, headers = bearer(server, "gvl_wrong", "127.0.0.1")  # a fresh address waits too
    assert status == 429 and 0 < int(headers["retry-after"]) <= 60
    for source in ("127.0.0.1", "127.0.0.7", sources[-1]):  # and valid tokens still get in
        assert bearer(server, project.tokens["ana"], source)[0] == 200


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
    assert b"Too many wrong tokens from your address or network" in page
    assert "retry-after" in headers
    status, headers, _ = post_login(project.tokens["ana"])  # at once: a valid token is checked
    assert status == 303 and "gavel_session=" in headers["set-cookie"]
