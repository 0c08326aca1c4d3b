"""The real server (a subprocess on loopback) over HTTP: access, roles, CSRF, validation,
escaping and headers. Everything is stored in a real SQLite file."""

from __future__ import annotations

import json
import re
from urllib.parse import urlencode

from gavel.annotate import db, store
from gavel.annotate.users import add_user


def login(server, token: str) -> tuple[str, str]:
    """Log in through the form as a browser does; returns (session cookie, CSRF token)."""
    cookie, _ = login_cookies(server, token)
    _, _, page = server.request("GET", "/item/1", headers={"Cookie": cookie})
    csrf = re.search(r'name="csrf-token" content="([^"]+)"', page.decode()).group(1)
    return cookie, csrf


def login_cookies(
    server, token: str, *, origin: str | None = None, extra: dict[str, str] | None = None
) -> tuple[str, list[str]]:
    """Post the login form (from ``origin``, with more headers ``extra``); returns the session
    cookie and every Set-Cookie line of the login page and of the answer."""
    extra = extra or {}
    status, headers, body = server.request("GET", "/login", headers=extra)
    assert status == 200
    nonce = re.search(r'name="csrf" value="([^"]+)"', body.decode()).group(1)
    set_cookies = headers["set-cookie"].split("\n")
    login_cookie = set_cookies[0].split(";")[0]
    cookies = "; ".join(filter(None, [login_cookie, extra.get("Cookie")]))
    status, headers, _ = server.request(
        "POST",
        "/login",
        raw=urlencode({"csrf": nonce, "token": token}).encode(),
        headers={
            **extra,
            "Content-Type": "application/x-www-form-urlencoded",
            "Cookie": cookies,
            "Origin": origin or server.url,
        },
    )
    assert status == 303, status
    set_cookies += headers["set-cookie"].split("\n")
    cookie = next(part.split(";")[0] for part in set_cookies if part.startswith("gavel_session="))
    assert "HttpOnly" in headers["set-cookie"] and "SameSite=strict" in headers["set-cookie"]
    return cookie, set_cookies


def test_every_request_needs_a_valid_token(served):
    project, server = served
    for path in ("/api/next", "/api/items/1", "/api/stats"):
        status, body = server.json("GET", path)
        assert status == 401 and "log in" in body["error"]
    for path in ("/next", "/item/1", "/image/1", "/dashboard"):
        status, headers, _ = server.request("GET", path)
        assert status == 303 and headers["location"] == "/login"
    assert server.json("GET", "/api/next", token="gvl_not-a-token")[0] == 401
    assert server.json("GET", "/api/next", token=project.tokens["ana"]) == (200, {"item": 1})


def test_each_role_sees_only_its_own_stage(served, hallucinated):
    project, server = served
    ana, rev, chk = (project.tokens[n] for n in ("ana", "rev", "chk"))
    assert server.json("GET", "/api/items/1", token=rev)[0] == 403
    assert server.request("GET", "/image/1", token=rev)[0] == 403
    assert server.json("GET", "/api/next", token=rev) == (200, {"item": None})
    status, _, image = server.request("GET", "/image/1", token=ana)
    assert status == 200 and image.startswith(b"\x89PNG")
    status, saved = server.json(
        "POST",
        "/api/items/1",
        token=ana,
        body={"action": "annotate", "base_version": None, "annotation": hallucinated},
    )
    assert status == 200 and saved["stage"] == "review"
    assert server.json("GET", "/api/items/1", token=ana)[0] == 403  # annotated: gone for ana
    status, view = server.json("GET", "/api/items/1", token=rev)
    assert status == 200 and view["annotation"]["category"] == "Color"
    assert view["history"][0]["author"] == "ana"
    status, error = server.json(
        "POST", "/api/items/1", token=chk, body={"action": "pass", "base_version": saved["version"]}
    )
    assert status == 403 and "not waiting for a checker" in error["error"]
    status, error = server.json(
        "POST", "/api/items/1", token=rev, body={"action": "annotate", "base_version": 1}
    )
    assert status == 400 and error["field"] == "action"
    assert server.json("GET", "/api/stats", token=ana)[0] == 403
    status, numbers = server.json("GET", "/api/stats", token=rev)
    assert status == 200 and numbers["stages"]["review"] == 1


def test_cookie_sessions_need_the_csrf_token(served, hallucinated):
    project, server = served
    cookie, csrf = login(server, project.tokens["ana"])
    body = {"action": "annotate", "base_version": None, "annotation": hallucinated}
    status, error = server.json("POST", "/api/items/1", body=body, headers={"Cookie": cookie})
    assert status == 403 and "CSRF" in error["error"]
    wrong = {"Cookie": cookie, "X-CSRF-Token": csrf[:-2] + "xx"}
    assert server.json("POST", "/api/items/1", body=body, headers=wrong)[0] == 403
    evil = {"Cookie": cookie, "X-CSRF-Token": csrf, "Origin": "http://evil.example"}
    status, error = server.json("POST", "/api/items/1", body=body, headers=evil)
    assert status == 403 and "cross-site" in error["error"]
    site = {"Cookie": cookie, "X-CSRF-Token": csrf, "Sec-Fetch-Site": "cross-site"}
    assert server.json("POST", "/api/items/1", body=body, headers=site)[0] == 403
    good = {"Cookie": cookie, "X-CSRF-Token": csrf, "Origin": server.url}
    assert server.json("POST", "/api/items/1", body=body, headers=good)[0] == 200
    # logging out needs the token too, and ends the session for good
    assert server.request("POST", "/logout", headers={"Cookie": cookie})[0] == 403
    status, _, _ = server.request(
        "POST",
        "/logout",
        raw=f"csrf={csrf}".encode(),
        headers={"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"},
    )
    assert status == 303
    assert server.request("GET", "/next", headers={"Cookie": cookie})[0] == 303  # to /login


def test_login_form_is_protected(served):
    project, server = served
    form = urlencode({"csrf": "made-up", "token": project.tokens["ana"]}).encode()
    status, _, page = server.request(
        "POST", "/login", raw=form, headers={"Content-Type": "application/x-www-form-urlencoded"}
    )
    assert status == 403 and b"expired" in page
    status, headers, _ = server.request(
        "POST",
        "/login",
        raw=form,
        headers={
            "Content-Type": "application/x-www-form-urlencoded",
            "Origin": "http://evil.example",
        },
    )
    assert status == 403 and "gavel_session" not in headers.get("set-cookie", "")


def test_bad_bodies_are_refused_before_anything_is_written(served, hallucinated):
    project, server = served
    ana = project.tokens["ana"]
    status, error = server.json(
        "POST",
        "/api/items/1",
        token=ana,
        raw=b"{not json",
        headers={"Content-Type": "application/json"},
    )
    assert status == 400 and "not valid JSON" in error["error"]
    huge = {"action": "annotate", "annotation": {**hallucinated, "explanation": "x" * 300_000}}
    assert server.json("POST", "/api/items/1", token=ana, body=huge)[0] == 413
    status, error = server.json(
        "POST",
        "/api/items/1",
        token=ana,
        body={"action": "annotate", "annotation": {**hallucinated, "boxes": [[0, 0, -5, 10]]}},
    )
    assert status == 400 and error["field"] == "boxes[0]"
    form = {"Content-Type": "text/plain"}
    assert server.json("POST", "/api/items/1", token=ana, raw=b"{}", headers=form)[0] == 415
    assert server.json("GET", "/api/items/999", token=ana)[0] == 403
    assert server.json("GET", "/api/items/" + "9" * 40, token=ana)[0] == 403
    assert server.request("GET", "/item/../../etc/passwd", token=ana)[0] == 404
    with db.opened(project.db) as conn:
        assert conn.execute("SELECT count(*) FROM versions").fetchone()[0] == 0
        assert store.check_consistency(conn) == []


def test_pages_escape_text_and_send_security_headers(served):
    project, server = served
    cookie, _ = login(server, project.tokens["ana"])
    status, headers, page = server.request("GET", "/item/2", headers={"Cookie": cookie})
    text = page.decode()
    assert status == 200
    assert "Two people &lt;b&gt;walk&lt;/b&gt; past the shop &amp; smile." in text
    assert "<b>walk</b>" not in text.replace("\\u003cb\\u003e", "")  # JSON data is escaped too
    assert "script-src 'self'" in headers["content-security-policy"]
    assert headers["x-frame-options"] == "DENY" and headers["x-content-type-options"] == "nosniff"
    assert headers["cache-control"] == "no-store"


def test_dns_rebinding_hosts_are_refused(served):
    project, server = served
    status, _, _ = server.request(
        "GET", "/api/next", token=project.tokens["ana"], headers={"Host": "evil.example"}
    )
    assert status == 400


def test_a_broken_symlink_or_escaping_image_is_not_served(served):
    project, server = served
    with db.opened(project.db) as conn:
        image = store.item_row(conn, 3)["image"]
    target = project.images / image
    target.unlink()
    target.symlink_to(project.root / "scored.jsonl")  # a file outside the images folder
    assert server.request("GET", "/image/3", token=project.tokens["ana"])[0] == 404


def test_behind_a_tls_proxy_the_public_origin_is_ours_and_cookies_are_secure(
    project, start_server, hallucinated
):
    public = "https://annotate.example"
    server = start_server(project.db, options={"public_origin": public + ":443/"})
    # as the proxy forwards it: plain HTTP, the browser's Host, the browser's https Origin
    proxied = {"Host": "annotate.example"}
    cookie, set_cookies = login_cookies(server, project.tokens["ana"], origin=public, extra=proxied)
    for line in set_cookies:  # the login form's cookie, the session, the deleted login cookie
        assert "; Secure" in line or line.endswith("Secure"), line
    status, _, page = server.request("GET", "/item/1", headers={**proxied, "Cookie": cookie})
    assert status == 200
    csrf = re.search(r'name="csrf-token" content="([^"]+)"', page.decode()).group(1)
    body = {"action": "annotate", "base_version": None, "annotation": hallucinated}
    headers = {**proxied, "Cookie": cookie, "X-CSRF-Token": csrf, "Sec-Fetch-Site": "same-origin"}
    # the server's own http://127.0.0.1:PORT is not the origin browsers use any more
    status, error = server.json(
        "POST", "/api/items/1", body=body, headers={**headers, "Origin": server.url}
    )
    assert status == 403 and "cross-site" in error["error"]
    status, saved = server.json(
        "POST", "/api/items/1", body=body, headers={**headers, "Origin": public}
    )
    assert status == 200 and saved["stage"] == "review"


def test_a_login_ends_the_browser_s_previous_session(served):
    project, server = served
    first, _ = login_cookies(server, project.tokens["ana"])
    assert server.json("GET", "/api/next", headers={"Cookie": first})[0] == 200
    second, _ = login_cookies(server, project.tokens["rev"], extra={"Cookie": first})
    assert second != first
    assert server.json("GET", "/api/next", headers={"Cookie": first})[0] == 401
    assert server.json("GET", "/api/next", headers={"Cookie": second}) == (200, {"item": None})
    with db.opened(project.db) as conn:
        assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 1


def test_other_stages_get_403_and_no_details(served, hallucinated):
    project, server = served
    ana, rev, chk = (project.tokens[n] for n in ("ana", "rev", "chk"))
    with db.opened(project.db) as conn:
        other = add_user(conn, "ana2", "annotator")
    status, saved = server.json(
        "POST",
        "/api/items/1",
        token=ana,
        body={"action": "annotate", "base_version": None, "annotation": hallucinated},
    )
    assert status == 200
    head = saved["version"]
    attempts = [  # item 1 is in review now: none of these may learn who did what, or when
        (ana, {"action": "annotate", "base_version": None, "annotation": hallucinated}),
        (other, {"action": "annotate", "base_version": head, "annotation": hallucinated}),
        (chk, {"action": "pass", "base_version": head}),
        (chk, {"action": "correct", "base_version": head + 7, "annotation": hallucinated}),
        (chk, {"action": "pass", "base_version": None}),
    ]
    for token, body in attempts:
        status, refused = server.json("POST", "/api/items/1", token=token, body=body)
        if token == ana:  # her own earlier annotation is hers to be told about
            assert status == 409 and refused["error"].startswith("You have annotated")
            assert refused["latest"] is None
            continue
        assert status == 403, (body, refused)
        assert set(refused) == {"error"} and "not waiting for a" in refused["error"]
        assert "ana" not in refused["error"].split() and "UTC" not in refused["error"]
    status, accepted = server.json(
        "POST", "/api/items/1", token=rev, body={"action": "accept", "base_version": head}
    )
    assert status == 200
    # a reviewer whose version was superseded by another reviewer is told who and when ...
    with db.opened(project.db) as conn:
        rev2 = add_user(conn, "rev2", "reviewer")
    status, refused = server.json(
        "POST", "/api/items/1", token=rev2, body={"action": "accept", "base_version": head}
    )
    assert status == 409 and refused["latest"]["version"] == accepted["version"]
    # ... but not with a version they cannot have opened, nor about a later stage
    for base in (None, accepted["version"], head + 99):
        status, refused = server.json(
            "POST", "/api/items/1", token=rev2, body={"action": "accept", "base_version": base}
        )
        assert status == 403 and set(refused) == {"error"}, (base, refused)
    with db.opened(project.db) as conn:
        assert len(store.history(conn, 1)) == 2


def test_accept_or_pass_with_a_changed_annotation_is_refused(served, hallucinated):
    project, server = served
    ana, rev, chk = (project.tokens[n] for n in ("ana", "rev", "chk"))
    status, saved = server.json(
        "POST",
        "/api/items/1",
        token=ana,
        body={"action": "annotate", "base_version": None, "annotation": hallucinated},
    )
    head = saved["version"]
    _, view = server.json("GET", "/api/items/1", token=rev)
    edited = [
        {**view["annotation"], "explanation": "A different explanation."},
        {**view["annotation"], "boxes": [[10, 10, 50, 50]]},
        {**view["annotation"], "verdict": "correct"},
        {"category": "Obj"},  # a partial annotation is a change too
    ]
    for annotation in edited:
        status, refused = server.json(
            "POST",
            "/api/items/1",
            token=rev,
            body={"action": "accept", "base_version": head, "annotation": annotation},
        )
        assert status == 400 and refused["field"] == "annotation", refused
        assert "correction" in refused["error"]
    # the page sends what its form holds: the unchanged annotation (ints for floats), a note
    unchanged = {**view["annotation"], "boxes": [[40, 150, 120, 80]], "note": "Looks right."}
    status, accepted = server.json(
        "POST",
        "/api/items/1",
        token=rev,
        body={"action": "accept", "base_version": head, "annotation": unchanged},
    )
    assert status == 200 and accepted["action"] == "accept"
    status, refused = server.json(
        "POST",
        "/api/items/1",
        token=chk,
        body={
            "action": "pass",
            "base_version": accepted["version"],
            "annotation": {**hallucinated, "category": "Obj"},
        },
    )
    assert status == 400 and refused["field"] == "annotation"
    with db.opened(project.db) as conn:
        history = store.history(conn, 1)
        assert [v["action"] for v in history] == ["annotate", "accept"]
        assert history[1]["annotation"]["note"] == "Looks right."
        assert history[1]["annotation"]["explanation"] == hallucinated["explanation"]


def test_an_annotator_cannot_fetch_the_image_of_a_double_item_they_annotated(
    tmp_path, make_project, start_server, hallucinated
):
    project = make_project(tmp_path, double=1.0, users={"a1": "annotator", "a2": "annotator"})
    server = start_server(project.db)
    a1, a2 = project.tokens["a1"], project.tokens["a2"]
    assert server.request("GET", "/image/1", token=a1)[0] == 200
    status, saved = server.json(
        "POST",
        "/api/items/1",
        token=a1,
        body={"action": "annotate", "base_version": None, "annotation": hallucinated},
    )
    assert status == 200 and saved["stage"] == "annotate"  # still waits for a second person
    status, error = server.json("GET", "/api/items/1", token=a1)
    assert status == 403 and "annotated item 1 already" in error["error"]
    status, _, body = server.request("GET", "/image/1", token=a1)
    assert status == 403 and b"annotated item 1 already" in body and b"PNG" not in body
    status, _, image = server.request("GET", "/image/1", token=a2)  # the second annotator may
    assert status == 200 and image.startswith(b"\x89PNG")


def test_bodies_nested_too_deep_or_with_lone_surrogates_are_400_and_save_nothing(
    served, hallucinated
):
    project, server = served
    ana = project.tokens["ana"]
    annotation = json.dumps({"action": "annotate", "annotation": {**hallucinated,
                                                                  "explanation": "@"}})  # fmt: skip
    headers = {"Content-Type": "application/json"}
    deep = annotation.replace('"@"', "[" * 1000 + "]" * 1000).encode()
    status, error = server.json("POST", "/api/items/1", token=ana, raw=deep, headers=headers)
    assert status == 400 and "nested too deeply" in error["error"]
    lone = annotation.replace('"@"', '"The car \\udfff is blue."').encode()
    status, error = server.json("POST", "/api/items/1", token=ana, raw=lone, headers=headers)
    assert status == 400 and "lone surrogate" in error["error"]
    assert error["field"] == "annotation.explanation"
    status, item = server.json("GET", "/api/items/1", token=ana)
    assert status == 200 and item["annotation"] is None and item["history"] == []
