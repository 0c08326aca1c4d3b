"""Running the app with uvicorn on a socket we bind ourselves.

Binding first lets ``--port 0`` pick a free port and still print the real address, which is what
tests and scripts need. The default host is 127.0.0.1: the server is reachable from this
machine only unless ``--host`` says otherwise, and then a warning says that tokens and cookies
travel unencrypted unless a TLS proxy is put in front.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
from pathlib import Path

from gavel.annotate import db


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve(
    db_path: str | Path,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    allowed_hosts: list[str] | None = None,
    access_log: bool = False,
) -> None:
    """Serve a project until interrupted; prints ``serving ... on http://HOST:PORT``."""
    import uvicorn

    from gavel.annotate.app import create_app

    db.connect(db_path).close()  # a missing or foreign file fails here, before binding
    hosts = list(allowed_hosts or [])
    if is_loopback(host):
        hosts += ["127.0.0.1", "localhost", "[::1]"]
    else:
        hosts.append(host)
        print(
            f"warning: serving on {host}, not on loopback: anyone who can reach it can try to log "
            "in, and tokens travel unencrypted unless a TLS proxy is in front",
            file=sys.stderr,
        )
    app = create_app(db_path, allowed_hosts=hosts)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    print(
        f"gavel annotate: serving {db_path} on http://{shown}:{bound} (Ctrl+C to stop)", flush=True
    )
    config = uvicorn.Config(
        app, log_level="warning", access_log=access_log, proxy_headers=False, server_header=False
    )
    uvicorn.Server(config).run(sockets=[sock])
