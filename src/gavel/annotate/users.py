"""People, their access tokens and their browser sessions.

A token is 256 random bits shown once, when the user is added; the database keeps only its
SHA-256 (a slow password hash buys nothing for a secret that cannot be guessed), so a copy of
the project file does not let anyone log in. Logging in with the token starts a session whose
random id lives in an HttpOnly cookie and, hashed, in ``sessions``, with its own CSRF token.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import sqlite3
from dataclasses import dataclass

from gavel.annotate.db import now, write
from gavel.errors import ConfigError

ROLES = ("annotator", "reviewer", "checker")
#: The item stage each role works on (a role sees only items in its stage).
STAGE_OF_ROLE = {"annotator": "annotate", "reviewer": "review", "checker": "reviewed"}
SESSION_SECONDS = 12 * 3600
TOKEN_PREFIX = "gvl_"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")


@dataclass(frozen=True)
class User:
    id: int
    name: str
    role: str

    @property
    def stage(self) -> str:
        return STAGE_OF_ROLE[self.role]


@dataclass(frozen=True)
class Session:
    user: User
    csrf: str


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def add_user(conn: sqlite3.Connection, name: str, role: str) -> str:
    """Create a user; returns the access token (shown once, stored only as a hash)."""
    if role not in ROLES:
        raise ConfigError(f"unknown role {role!r}; use one of {', '.join(ROLES)}")
    if not _NAME.fullmatch(name):
        raise ConfigError("a name is 1-64 letters, digits, '.', '_', '@' or '-'")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with write(conn):
        if conn.execute("SELECT 1 FROM users WHERE name = ?", (name,)).fetchone():
            raise ConfigError(f"a user named {name!r} exists already")
        conn.execute(
            "INSERT INTO users(name, role, token_sha256, created) VALUES (?, ?, ?, ?)",
            (name, role, digest(token), now()),
        )
    return token


def list_users(conn: sqlite3.Connection) -> list[sqlite3.Row]:
    return conn.execute("SELECT id, name, role, active, created FROM users ORDER BY id").fetchall()


def set_active(conn: sqlite3.Connection, name: str, active: bool) -> None:
    """Disable (or re-enable) a user; disabling also ends their sessions."""
    with write(conn):
        found = conn.execute("UPDATE users SET active = ? WHERE name = ?", (int(active), name))
        if found.rowcount == 0:
            raise ConfigError(f"no user named {name!r}")
        if not active:
            conn.execute(
                "DELETE FROM sessions WHERE user_id = (SELECT id FROM users WHERE name = ?)",
                (name,),
            )


def user_by_token(conn: sqlite3.Connection, token: str) -> User | None:
    if not token.startswith(TOKEN_PREFIX) or len(token) > 200:
        return None
    row = conn.execute(
        "SELECT id, name, role FROM users WHERE token_sha256 = ? AND active = 1", (digest(token),)
    ).fetchone()
    return User(row["id"], row["name"], row["role"]) if row else None


def start_session(conn: sqlite3.Connection, user: User) -> str:
    """A new session for ``user``; returns its id (for the cookie; stored only hashed)."""
    return replace_session(conn, user, None)


def replace_session(conn: sqlite3.Connection, user: User, previous: str | None) -> str:
    """A new session for ``user`` that ends ``previous`` (the id the browser's cookie held, of
    whichever user) in the same transaction: a login replaces the browser's session, so an old
    copy of its cookie cannot outlive it. Returns the new id (stored only hashed)."""
    session_id = secrets.token_urlsafe(32)
    created = now()
    with write(conn):
        conn.execute("DELETE FROM sessions WHERE expires < ?", (created,))
        if previous:
            conn.execute("DELETE FROM sessions WHERE id_sha256 = ?", (digest(previous),))
        conn.execute(
            "INSERT INTO sessions(id_sha256, user_id, csrf, created, expires) VALUES (?, ?, ?, ?, ?)",
            (
                digest(session_id),
                user.id,
                secrets.token_urlsafe(32),
                created,
                created + SESSION_SECONDS,
            ),
        )
    return session_id


def session_by_id(conn: sqlite3.Connection, session_id: str) -> Session | None:
    if not session_id or len(session_id) > 200:
        return None
    row = conn.execute(
        "SELECT u.id, u.name, u.role, s.csrf FROM sessions s JOIN users u ON u.id = s.user_id "
        "WHERE s.id_sha256 = ? AND s.expires > ? AND u.active = 1",
        (digest(session_id), now()),
    ).fetchone()
    if row is None:
        return None
    return Session(User(row["id"], row["name"], row["role"]), row["csrf"])


def end_session(conn: sqlite3.Connection, session_id: str) -> None:
    with write(conn):
        conn.execute("DELETE FROM sessions WHERE id_sha256 = ?", (digest(session_id),))
