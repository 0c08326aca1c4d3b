"""The HTTP client of a run, against a real server on loopback: one deadline for a whole
attempt, a bounded reply, errors named and classified as the runner reads them."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import socket

import pytest

from gavel.transport import http_client
from gavel.transport.failures import (
    CONNECTION_REFUSED,
    CONNECTION_RESET,
    HTTP_STATUS,
    TIMEOUT,
    classify,
)
from gavel.transport.http_client import (
    APIConnectionError,
    APITimeoutError,
    BadRequestError,
    InternalServerError,
    JSONClient,
    RateLimitError,
)
from gavel.transport.retry import InvalidResponseError, is_retryable, retry_after

BODY = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi there"}]}).encode()


@contextlib.contextmanager
def _serving(fake, plan):
    with fake.FakeOpenAIServer() as server:
        server.plan = plan
        yield server


def _ask(url: str, *, timeout: float = 10.0, key: str = "sk-k", body: bytes = BODY):
    async def main():
        client = JSONClient(url, key, timeout)
        try:
            return await client.post("/chat/completions", body)
        finally:
            await client.close()

    return asyncio.run(main())


def _error(url: str, **options) -> BaseException:
    with pytest.raises(Exception) as caught:
        _ask(url, **options)
    return caught.value


def test_a_reply_and_its_headers_come_back_and_the_key_is_a_bearer_token(fake):
    with fake.FakeOpenAIServer(record=True) as server:
        reply, headers = _ask(server.url, key="sk-secret-1")
        assert reply["choices"][0]["message"]["content"] == "echo: hi there"
        assert headers["content-type"] == "application/json"  # case-insensitive
        (_, body, auth), = server.received  # fmt: skip
        assert body == json.loads(BODY) and auth == "Bearer sk-secret-1"


def test_a_urls_own_credentials_go_as_basic_auth_instead_of_the_key(fake):
    with fake.FakeOpenAIServer(record=True) as server:
        _ask(server.url.replace("http://", "http://user:pw@"), key="sk-not-sent")
        (_, _, auth), = server.received  # fmt: skip
        assert auth == "Basic " + base64.b64encode(b"user:pw").decode()


def test_a_reply_that_trickles_in_past_the_deadline_is_a_timeout(fake):
    # Headers at once, the body dripped over 2 s: a limit on connecting or on the headers alone
    # would accept it; the deadline is on the whole attempt.
    plan = fake.faults_by_marker({"hi": [fake.Fault(drip=2.0)]})
    with _serving(fake, plan) as server:
        error = _error(server.url, timeout=0.5)
        assert isinstance(error, APITimeoutError) and "0.5 s" in str(error)
        assert classify(error).kind == TIMEOUT and is_retryable(error)
        reply, _ = _ask(server.url, timeout=5)  # the fault is used up: a whole reply
        assert reply["choices"][0]["message"]["content"] == "echo: hi there"


def test_a_dripped_reply_within_the_deadline_is_read_whole(fake):
    plan = fake.faults_by_marker({"hi": [fake.Fault(drip=0.3)]})
    with _serving(fake, plan) as server:
        reply, _ = _ask(server.url, timeout=5)
        assert reply["usage"]["completion_tokens"] == 7


def test_a_reply_larger_than_the_limit_is_refused_after_reading_that_much(fake, monkeypatch):
    monkeypatch.setattr(http_client, "MAX_REPLY_BYTES", 1000)
    huge = json.dumps({"choices": [{"message": {"content": "x" * 5000}}]}).encode()
    plan = fake.faults_by_marker({"hi": [fake.Fault(body=huge)]})
    with _serving(fake, plan) as server:
        error = _error(server.url)
        assert isinstance(error, InvalidResponseError) and "1,000" in str(error)


def test_a_reply_without_a_length_is_bounded_too(monkeypatch):
    """Chunked transfer encoding says no length up front: the limit is counted as it comes."""
    monkeypatch.setattr(http_client, "MAX_REPLY_BYTES", 1000)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    async def serve(reader, writer):
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n")  # fmt: skip
        for _ in range(10):
            writer.write(b"200\r\n" + b" " * 0x200 + b"\r\n")
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        writer.close()

    async def main():
        server = await asyncio.start_server(serve, sock=listener)
        client = JSONClient(f"http://127.0.0.1:{port}/v1", "k", 5)
        try:
            with pytest.raises(InvalidResponseError, match="longer than the 1,000 bytes"):
                await client.post("/chat/completions", BODY)
        finally:
            await client.close()
            server.close()

    asyncio.run(main())


def test_error_statuses_are_named_as_the_official_client_names_them(fake):
    plan = fake.faults_by_marker({
        "hi": [fake.Fault(status=400, message="image too large"),
               fake.Fault(status=429, headers={"Retry-After": "3"}),
               fake.Fault(status=503, payload=b"<html>bad gateway</html>")],
    })  # fmt: skip
    with _serving(fake, plan) as server:
        refused = _error(server.url)
        assert isinstance(refused, BadRequestError) and refused.status_code == 400
        failure = classify(refused)
        assert (failure.kind, failure.status, failure.server) == (
            HTTP_STATUS, 400, "image too large")  # fmt: skip
        assert not is_retryable(refused)
        limited = _error(server.url)
        assert isinstance(limited, RateLimitError) and retry_after(limited) == 3.0
        assert is_retryable(limited)
        down = _error(server.url)
        assert isinstance(down, InternalServerError) and down.body is None
        assert classify(down).server == "<html>bad gateway</html>"


def test_a_broken_reply_is_invalid_and_a_dropped_one_a_reset(fake):
    plan = fake.faults_by_marker({"hi": [fake.Fault(body=b"{not json"), fake.Fault(drop=True)]})
    with _serving(fake, plan) as server:
        broken = _error(server.url)
        assert isinstance(broken, InvalidResponseError) and is_retryable(broken)
        dropped = _error(server.url)
        assert isinstance(dropped, APIConnectionError) and is_retryable(dropped)
        assert classify(dropped).kind == CONNECTION_RESET


def test_nothing_listening_is_a_refused_connection():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    error = _error(f"http://127.0.0.1:{port}/v1")
    assert isinstance(error, APIConnectionError)
    assert classify(error).kind == CONNECTION_REFUSED


def test_the_proxy_is_the_environments_and_no_proxy_exempts(monkeypatch):
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "HTTP_PROXY",
                 "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    assert http_client._proxy_for("https://api.example.com/v1") == (None, None)
    monkeypatch.setenv("HTTPS_PROXY", "http://bob:pw@proxy.example:3128")
    proxy, auth = http_client._proxy_for("https://api.example.com/v1")
    assert proxy == "http://proxy.example:3128" and (auth.login, auth.password) == ("bob", "pw")
    assert http_client._proxy_for("http://api.example.com/v1") == (None, None)
    monkeypatch.setenv("NO_PROXY", "api.example.com")
    assert http_client._proxy_for("https://api.example.com/v1") == (None, None)
