"""Running the app with uvicorn on a socket we bind ourselves.

Binding first lets ``--port 0`` pick a free port and still print the real address, which is what
tests and scripts need. The default host is 127.0.0.1: the server is reachable from this
machine only unless ``--host`` says otherwise, and then a warning says that tokens and cookies
travel unencrypted unless a TLS proxy is put in front.

A wildcard address (``0.0.0.0``, ``::``) is refused unless ``--allowed-host`` or
``--public-origin`` names the addresses people will use: the ``Host`` check (against DNS
rebinding) can only accept names it was told, and a wildcard is no name, so such a server
would start and then answer every request "Invalid host header".
"""

from __future__ import annotations

import ipaddress
import socket
import sys
from collections.abc import Mapping
from pathlib import Path

from gavel.annotate import db
from gavel.errors import ConfigError


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_wildcard(host: str) -> bool:
    """True for the "every address" hosts (``0.0.0.0``, ``::``, empty)."""
    if host in ("", "*"):
        return True
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


def serve(
    db_path: str | Path,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    allowed_hosts: list[str] | None = None,
    public_origin: str | None = None,
    access_log: bool = False,
    request_seconds: float | None = None,
    max_connections: int | None = None,
    max_per_address: int | None = None,
    throttle: Mapping[str, float] | None = None,
) -> None:
    """Serve a project until interrupted; prints ``serving ... on http://HOST:PORT``.

    ``public_origin`` (checked with :func:`gavel.annotate.security.parse_origin`) is the
    address of a TLS proxy in front, as browsers see it. ``request_seconds``,
    ``max_connections`` and ``max_per_address`` change the limits of
    :mod:`gavel.annotate.connections`; ``throttle`` holds settings of
    :class:`gavel.annotate.throttle.TokenThrottle` (by field name) for wrong tokens.
    """
    import uvicorn

    from gavel.annotate.app import create_app
    from gavel.annotate.connections import uvicorn_options
    from gavel.annotate.security import parse_origin
    from gavel.annotate.throttle import TokenThrottle

    if public_origin is not None:
        try:
            public_origin = parse_origin(public_origin)
        except ValueError as error:
            raise ConfigError(f"--public-origin {public_origin!r}: {error}") from None
    hosts = list(allowed_hosts or [])
    if is_wildcard(host) and not hosts and public_origin is None:
        raise ConfigError(
            f"--host {host or '(empty)'} listens on every address, but requests are accepted "
            "only for host names the server knows (against DNS rebinding): name the ones "
            "people will use with --allowed-host NAME (repeatable) or --public-origin URL"
        )
    db.connect(db_path).close()  # a missing or foreign file fails here, before binding
    if is_loopback(host):
        hosts += ["127.0.0.1", "localhost", "[::1]"]
    else:
        if not is_wildcard(host):
            hosts.append(f"[{host}]" if ":" in host else host)
        if public_origin is not None and public_origin.startswith("https://"):
            print(
                f"warning: serving on {host}, not on loopback: the TLS proxy should be the only "
                "way in (bind to 127.0.0.1 when it runs on this machine)",
                file=sys.stderr,
            )
        else:
            print(
                f"warning: serving on {host}, not on loopback: anyone who can reach it can try "
                "to log in, and tokens travel unencrypted unless a TLS proxy is in front "
                "(then give --public-origin https://NAME)",
                file=sys.stderr,
            )
    app = create_app(
        db_path,
        allowed_hosts=hosts,
        public_origin=public_origin,
        throttle=TokenThrottle(**(throttle or {})),  # type: ignore[arg-type]
    )
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    behind = f" behind {public_origin}" if public_origin else ""
    print(
        f"gavel annotate: serving {db_path} on http://{shown}:{bound}{behind} (Ctrl+C to stop)",
        flush=True,
    )
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=access_log,
        proxy_headers=False,
        server_header=False,
        **uvicorn_options(request_seconds, max_connections, max_per_address),
    )
    uvicorn.Server(config).run(sockets=[sock])
