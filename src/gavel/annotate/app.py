"""The annotation web app (Starlette): pages for each role, a small JSON API, the dashboard.

Every request except the login page and the static files needs a user: a session cookie
(after logging in with the access token) or ``Authorization: Bearer TOKEN``. A user only ever
sees items of their own stage. Database work runs in worker threads, one short-lived SQLite
connection per request, so a slow save never blocks other people's pages.

Logging in replaces the browser's session: the one its cookie named is deleted, so a cookie
copied before a login (or left by the previous person at a shared computer) stops working.
"""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qs

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from gavel.annotate import db, stats, store
from gavel.annotate.payload import CATEGORIES, PayloadError
from gavel.annotate.security import (
    BodyTooLarge,
    SecurityHeaders,
    cross_site,
    origin_host,
    parse_origin,
    read_body,
    same_secret,
)
from gavel.annotate.throttle import TokenThrottle
from gavel.annotate.users import (
    SESSION_SECONDS,
    Session,
    User,
    end_session,
    replace_session,
    session_by_id,
    user_by_token,
)
from gavel.curate.images import resolve_image
from gavel.errors import DataError
from gavel.io.jsonl import parse_json

SESSION_COOKIE = "gavel_session"
LOGIN_COOKIE = "gavel_login"
MAX_JSON = 256 * 1024
MAX_FORM = 8 * 1024
DASHBOARD_ROLES = ("reviewer", "checker")
T = TypeVar("T")


class Denied(Exception):
    """Stop handling a request with this response."""

    def __init__(self, response: Response):
        self.response = response


def create_app(
    db_path: str | Path,
    *,
    allowed_hosts: list[str] | None = None,
    public_origin: str | None = None,
    throttle: TokenThrottle | None = None,
) -> Starlette:
    """The app for one project file. ``allowed_hosts`` guards against DNS rebinding (the
    default accepts only loopback names). ``public_origin`` (``https://name[:port]``, from
    :func:`gavel.annotate.security.parse_origin`) is the address browsers use when a TLS proxy
    is in front: the server itself sees only the proxy's plain HTTP, so it could neither
    recognise its own pages' ``Origin`` nor know that cookies may be ``Secure``. ``throttle``
    holds the backoff settings for wrong tokens (the defaults of :mod:`gavel.annotate.throttle`
    without it)."""
    db_path = Path(db_path)
    public_origin = parse_origin(public_origin) if public_origin else None  # as browsers send it
    public_https = bool(public_origin and public_origin.startswith("https://"))
    throttle = throttle or TokenThrottle()  # wrong tokens, for this server's lifetime
    with db.opened(db_path) as conn:
        root = db.images_root(conn, db_path)
    templates = Environment(
        loader=PackageLoader("gavel.annotate", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
    )

    async def in_db(work: Callable[[sqlite3.Connection], T]) -> T:
        def run() -> T:
            with db.opened(db_path) as conn:
                return work(conn)

        return await run_in_threadpool(run)

    def page(name: str, status: int = 200, **context: Any) -> HTMLResponse:
        return HTMLResponse(templates.get_template(name).render(**context), status_code=status)

    async def checked_token(
        request: Request, token: str, too_many: Callable[[str, int], Response]
    ) -> User | None:
        """The user of ``token``, or None; Denied with ``too_many(message, seconds)`` when the
        token is wrong and its client waits out a backoff (see :mod:`gavel.annotate.throttle`:
        a valid token is accepted first, whoever else guessed wrong from its address)."""
        user = await in_db(lambda conn: user_by_token(conn, token))
        if user is not None:
            return user
        wait = throttle.wrong(request.client.host if request.client else "")
        if wait:
            message = f"too many wrong tokens from your address or network; try again in {wait} s"
            response = too_many(message, wait)
            response.headers["retry-after"] = str(wait)
            raise Denied(response)
        return None

    def too_many_json(message: str, wait: int) -> Response:
        return JSONResponse({"error": message, "retry_after": wait}, 429)

    async def current(request: Request, *, api: bool) -> Session:
        """The user of this request, or Denied (login redirect for pages, 401 for the API)."""
        header = request.headers.get("authorization", "")
        if header.lower().startswith("bearer "):
            token = header[7:].strip()
            user = await checked_token(request, token, too_many_json)
            if user is not None:
                return Session(user, csrf="")
        else:
            cookie = request.cookies.get(SESSION_COOKIE, "")
            session = await in_db(lambda conn: session_by_id(conn, cookie)) if cookie else None
            if session is not None:
                return session
        if api:
            raise Denied(JSONResponse({"error": "log in first (a valid token is needed)"}, 401))
        raise Denied(RedirectResponse("/login", status_code=303))

    def secure(request: Request) -> bool:
        return public_https or request.url.scheme == "https"

    def check_csrf(request: Request, session: Session, form_token: str | None = None) -> None:
        if cross_site(request, public_origin):
            raise Denied(JSONResponse({"error": "cross-site request refused"}, 403))
        if not session.csrf:  # bearer token: no ambient credential, nothing to forge
            return
        given = form_token if form_token is not None else request.headers.get("x-csrf-token")
        if not same_secret(given, session.csrf):
            raise Denied(
                JSONResponse({"error": "missing or wrong CSRF token; reload the page"}, 403)
            )

    def handler(api: bool = False):
        def wrap(function):
            async def endpoint(request: Request) -> Response:
                try:
                    return await function(request)
                except Denied as denied:
                    return denied.response
                except BodyTooLarge as error:
                    return JSONResponse({"error": str(error)}, 413)
                except store.Forbidden as error:
                    if api:
                        return JSONResponse({"error": str(error)}, 403)
                    return page(
                        "message.html", 403, title="Not available", message=str(error), session=None
                    )

            return endpoint

        return wrap

    # --- login ----------------------------------------------------------------------------

    def login_page(request: Request, error: str | None = None, status: int = 200) -> Response:
        nonce = secrets.token_urlsafe(24)
        response = page("login.html", status, login_csrf=nonce, error=error, session=None)
        response.set_cookie(
            LOGIN_COOKIE,
            nonce,
            max_age=3600,
            httponly=True,
            samesite="strict",
            secure=secure(request),
            path="/login",
        )
        return response

    @handler()
    async def login_form(request: Request) -> Response:
        return login_page(request)

    @handler()
    async def login(request: Request) -> Response:
        if cross_site(request, public_origin):
            return login_page(request, "Cross-site login refused.", 403)
        if "application/x-www-form-urlencoded" not in request.headers.get("content-type", ""):
            return login_page(request, "Send the login form.", 400)
        form = parse_qs((await read_body(request, MAX_FORM)).decode("utf-8", "replace"))
        nonce = (form.get("csrf") or [""])[0]
        if not same_secret(nonce, request.cookies.get(LOGIN_COOKIE)):
            return login_page(request, "The login form expired; try again.", 403)
        token = (form.get("token") or [""])[0].strip()

        def too_many(message: str, wait: int) -> Response:
            return login_page(request, message[0].upper() + message[1:] + ".", 429)

        user = await checked_token(request, token, too_many)
        if user is None:
            return login_page(request, "Unknown or disabled token.", 401)
        previous = request.cookies.get(SESSION_COOKIE, "")
        session_id = await in_db(lambda conn: replace_session(conn, user, previous))
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(
            SESSION_COOKIE,
            session_id,
            max_age=SESSION_SECONDS,
            httponly=True,
            samesite="strict",
            secure=secure(request),
            path="/",
        )
        response.delete_cookie(
            LOGIN_COOKIE, path="/login", secure=secure(request), httponly=True, samesite="strict"
        )
        return response

    @handler()
    async def logout(request: Request) -> Response:
        session = await current(request, api=False)
        form = parse_qs((await read_body(request, MAX_FORM)).decode("utf-8", "replace"))
        check_csrf(request, session, (form.get("csrf") or [""])[0])
        cookie = request.cookies.get(SESSION_COOKIE, "")
        await in_db(lambda conn: end_session(conn, cookie))
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(
            SESSION_COOKIE, path="/", secure=secure(request), httponly=True, samesite="strict"
        )
        return response

    # --- pages ----------------------------------------------------------------------------

    @handler()
    async def home(request: Request) -> Response:
        await current(request, api=False)
        return RedirectResponse("/next", status_code=303)

    @handler()
    async def next_page(request: Request) -> Response:
        session = await current(request, api=False)
        item_id = await in_db(lambda conn: store.next_item(conn, session.user))
        if item_id is None:
            return page(
                "message.html",
                title="Nothing to do",
                session=session,
                message=f"No items are waiting for a {session.user.role} right now.",
            )
        return RedirectResponse(f"/item/{item_id}", status_code=303)

    @handler()
    async def item_page(request: Request) -> Response:
        session = await current(request, api=False)
        item_id = request.path_params["item_id"]
        view = await in_db(lambda conn: store.view_item(conn, item_id, session.user))
        data = {
            **asdict(view),
            "role": session.user.role,
            "categories": list(CATEGORIES),
            "image_url": f"/image/{view.id}",
        }
        return page(
            "item.html",
            session=session,
            item=view,
            data=data,
            dashboard=session.user.role in DASHBOARD_ROLES,
        )

    @handler()
    async def image(request: Request) -> Response:
        session = await current(request, api=False)
        item_id = request.path_params["item_id"]
        row = await in_db(lambda conn: store.visible_item(conn, item_id, session.user))
        path = resolve_image(root, row["image"])  # checked again: the folder may have changed
        media = store.MEDIA_TYPES.get(Path(row["image"]).suffix.lower())
        if path is None or media is None:
            return JSONResponse({"error": "image not found"}, 404)
        return FileResponse(
            path, media_type=media, headers={"cache-control": "private, max-age=600"}
        )

    @handler()
    async def dashboard_page(request: Request) -> Response:
        session = await current(request, api=False)
        if session.user.role not in DASHBOARD_ROLES:
            raise store.Forbidden("the dashboard is for reviewers and checkers")
        numbers = await in_db(stats.dashboard)
        return page("dashboard.html", session=session, stats=numbers, dashboard=True)

    # --- API ------------------------------------------------------------------------------

    @handler(api=True)
    async def api_next(request: Request) -> Response:
        session = await current(request, api=True)
        item_id = await in_db(lambda conn: store.next_item(conn, session.user))
        return JSONResponse({"item": item_id})

    @handler(api=True)
    async def api_item(request: Request) -> Response:
        session = await current(request, api=True)
        item_id = request.path_params["item_id"]
        view = await in_db(lambda conn: store.view_item(conn, item_id, session.user))
        return JSONResponse(asdict(view))

    @handler(api=True)
    async def api_save(request: Request) -> Response:
        session = await current(request, api=True)
        check_csrf(request, session)
        if "application/json" not in request.headers.get("content-type", ""):
            return JSONResponse({"error": "send JSON (Content-Type: application/json)"}, 415)
        try:  # refuses nesting too deep to read and lone surrogates, which no writer encodes
            body = parse_json(await read_body(request, MAX_JSON), "the body")
        except DataError as error:
            return JSONResponse({"error": str(error), "field": error.field}, 400)
        if not isinstance(body, dict) or not isinstance(body.get("action"), str):
            return JSONResponse({"error": "expected {action, base_version, annotation}"}, 400)
        base = body.get("base_version")
        if base is not None and (not isinstance(base, int) or isinstance(base, bool)):
            return JSONResponse({"error": "base_version must be an integer or null"}, 400)
        item_id = request.path_params["item_id"]
        try:
            saved = await in_db(
                lambda conn: store.save(
                    conn, item_id, session.user, body["action"], body.get("annotation"), base
                )
            )
        except store.Conflict as conflict:
            return JSONResponse({"error": str(conflict), "latest": conflict.latest}, 409)
        except PayloadError as error:
            return JSONResponse({"error": str(error), "field": error.field}, 400)
        return JSONResponse(asdict(saved))

    @handler(api=True)
    async def api_stats(request: Request) -> Response:
        session = await current(request, api=True)
        if session.user.role not in DASHBOARD_ROLES:
            raise store.Forbidden("the dashboard is for reviewers and checkers")
        return JSONResponse(await in_db(stats.dashboard))

    static = StaticFiles(directory=Path(__file__).parent / "static")
    routes = [
        Route("/login", login_form, methods=["GET"]),
        Route("/login", login, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/", home, methods=["GET"]),
        Route("/next", next_page, methods=["GET"]),
        Route("/item/{item_id:int}", item_page, methods=["GET"]),
        Route("/image/{item_id:int}", image, methods=["GET"]),
        Route("/dashboard", dashboard_page, methods=["GET"]),
        Route("/api/next", api_next, methods=["GET"]),
        Route("/api/items/{item_id:int}", api_item, methods=["GET"]),
        Route("/api/items/{item_id:int}", api_save, methods=["POST"]),
        Route("/api/stats", api_stats, methods=["GET"]),
        Route("/favicon.ico", lambda request: Response(status_code=204), methods=["GET"]),
        Mount("/static", app=static, name="static"),
    ]
    hosts = list(allowed_hosts or ["127.0.0.1", "localhost", "[::1]"])
    if public_origin:  # a proxy that passes the browser's Host on
        hosts.append(origin_host(public_origin))
    middleware = [
        Middleware(SecurityHeaders),
        Middleware(TrustedHostMiddleware, allowed_hosts=hosts),
    ]
    return Starlette(routes=routes, middleware=middleware)
