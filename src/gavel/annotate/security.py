"""The web app's defences, each small enough to read at once.

- **Headers** on every response: a Content-Security-Policy that allows only the app's own
  scripts, styles and images (no inline script, so injected markup cannot run), no framing, no
  MIME sniffing, no referrer to other sites (``same-origin``: ``no-referrer`` would make browsers
  send ``Origin: null`` with our own form posts), and no caching of pages that show annotations.
- **Cross-site requests**: every state-changing request made with the session cookie must carry
  the session's CSRF token (header ``X-CSRF-Token`` or form field ``csrf``); the cookie is
  ``SameSite=Strict`` as well, and a request whose ``Origin`` or ``Sec-Fetch-Site`` says it came
  from another site is refused outright. Requests with ``Authorization: Bearer`` need no CSRF
  token: a browser never adds that header on its own.
- **Behind a TLS proxy** the server only ever sees plain HTTP, so it cannot know the address
  people's browsers use; ``--public-origin https://name`` says it. ``Origin`` is then compared
  with that origin (not with the scheme of the proxy's request, which is always ``http``), and
  cookies are marked ``Secure``. Forwarded headers are not trusted instead: anyone who can reach
  the port directly could forge them.
- **Bodies** are read up to a fixed size; a larger one is refused before it is parsed.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:  # only for annotations: `serve --public-origin` checks its value without it
    from starlette.requests import Request

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
ASGIApp = Callable[
    [Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]], Awaitable[None]
]

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]


class SecurityHeaders:
    """ASGI middleware adding the headers above (and ``no-store`` outside ``/static``)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        static = scope.get("path", "").startswith("/static/")

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers.extend(_HEADERS)
                if not static:
                    headers.append((b"cache-control", b"no-store"))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)


class BodyTooLarge(Exception):
    pass


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refusing more than ``limit`` bytes (declared or actually sent)."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        raise BodyTooLarge(f"request body larger than {limit} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(f"request body larger than {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


_DEFAULT_PORTS = {"http": 80, "https": 443}


def parse_origin(value: str) -> str:
    """``scheme://host[:port]`` in the form browsers send as ``Origin`` (lower case, default
    port left out), so that a plain string comparison is exact; ValueError when ``value`` is
    not an http(s) origin (a path, query, user name or fragment is refused, not dropped: it
    would suggest the app can live under a path, which it cannot)."""
    parts = urlsplit(value.strip())
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise ValueError("expected http://NAME[:PORT] or https://NAME[:PORT]")
    if parts.username is not None or parts.password is not None:
        raise ValueError("an origin has no user name or password")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValueError("an origin is scheme, name and port only (no path, query or fragment)")
    host = parts.hostname
    if not host:
        raise ValueError("the origin names no host")
    try:
        port = parts.port
    except ValueError as error:
        raise ValueError(f"bad port ({error})") from None
    try:
        if ipaddress.ip_address(host).version == 6:
            host = f"[{host}]"
    except ValueError:  # a name: browsers send its ASCII (punycode) form
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            raise ValueError(f"{host!r} is not a valid host name") from None
    shown_port = f":{port}" if port is not None and port != _DEFAULT_PORTS[scheme] else ""
    return f"{scheme}://{host}{shown_port}"


def origin_host(origin: str) -> str:
    """The host of an origin made by :func:`parse_origin`, as a ``Host`` header names it."""
    rest = origin.split("://", 1)[1]
    if rest.startswith("["):
        return rest[: rest.index("]") + 1]
    return rest.split(":", 1)[0]


def cross_site(request: Request, public_origin: str | None = None) -> bool:
    """True when the browser tells us the request comes from another site.

    ``public_origin`` (from :func:`parse_origin`) is the address browsers use when a proxy is in
    front; without it the server's own origin is the request's scheme and ``Host``.
    """
    fetch_site = request.headers.get("sec-fetch-site")
    if fetch_site is not None and fetch_site not in ("same-origin", "none"):
        return True
    origin = request.headers.get("origin")
    if origin is None:
        return False
    own = public_origin or f"{request.url.scheme}://{request.headers.get('host', '')}"
    return origin != own


def same_secret(given: str | None, expected: str | None) -> bool:
    """Constant-time comparison; a missing value never matches."""
    if not given or not expected:
        return False
    return hmac.compare_digest(given.encode(), expected.encode())
