"""``gavel annotate`` as a user types it: init, users, serve, stats, export."""

from __future__ import annotations

import json
import sys

from gavel.annotate import db, store
from gavel.annotate.server import is_loopback, is_wildcard
from gavel.annotate.users import user_by_token


def test_init_users_serve_stats_and_export(tmp_path, gavel, start_server, hallucinated):
    images = tmp_path / "photos"
    images.mkdir()
    from PIL import Image

    Image.new("RGB", (400, 300), "gray").save(images / "street.png")
    pairs = tmp_path / "scored.jsonl"
    pairs.write_text(
        "".join(
            json.dumps(
                {"id": f"s#{i}", "image": "street.png", "caption": f"Sentence number {i} here."}
            )
            + "\n"
            for i in range(4)
        )
    )
    project = tmp_path / "project" / "p.sqlite"
    done = gavel(
        "annotate",
        "init",
        "--db",
        project,
        "--import",
        pairs,
        "--images",
        images,
        "--double",
        "0.5",
    )
    assert done.returncode == 0, done.stderr
    assert "4 items added" in done.stderr

    added = gavel(
        "annotate", "user", "add", "--db", project, "--name", "ana", "--role", "annotator"
    )
    token = added.stdout.strip()
    assert added.returncode == 0 and token.startswith("gvl_") and "\n" not in token
    twice = gavel("annotate", "user", "add", "--db", project, "--name", "ana", "--role", "checker")
    assert twice.returncode == 2 and "exists already" in twice.stderr
    with db.opened(project) as conn:
        assert (
            conn.execute("SELECT count(*) FROM users WHERE token_sha256 = ?", (token,)).fetchone()[
                0
            ]
            == 0
        )
        user = user_by_token(conn, token)
        store.save(conn, 1, user, "annotate", hallucinated, None)
        assert store.item_row(conn, 1)["image"] == "street.png"

    command = [
        sys.executable,
        "-m",
        "gavel",
        "annotate",
        "serve",
        "--db",
        str(project),
        "--port",
        "0",
    ]
    server = start_server(project, command=command)
    status, view = server.json("GET", "/api/next", token=token)
    assert status == 200 and view["item"] is not None

    stats = gavel("annotate", "stats", "--db", project)
    assert (
        json.loads(stats.stdout)["stages"]["annotate"]
        + json.loads(stats.stdout)["stages"]["review"]
        == 4
    )

    out = tmp_path / "export" / "gavel.jsonl"
    exported = gavel("annotate", "export", "--db", project, "--out", out, "--split-by-image")
    assert exported.returncode == 0, exported.stderr
    assert "0 samples" in exported.stderr and "4 items not reviewed yet" in exported.stderr
    assert f"warning: no reviewed samples: {out} not written" in exported.stderr
    assert not out.parent.exists() or list(out.parent.iterdir()) == []  # no empty files


def test_a_failed_first_init_can_be_redone_with_the_right_folder(tmp_path, gavel):
    from PIL import Image

    images, wrong = tmp_path / "photos", tmp_path / "elsewhere"
    images.mkdir()
    wrong.mkdir()
    Image.new("RGB", (40, 30), "gray").save(images / "cat.png")
    pairs = tmp_path / "scored.jsonl"
    pairs.write_text(json.dumps({"id": "c#0", "image": "cat.png", "caption": "A cat sits."}) + "\n")
    project = tmp_path / "p.sqlite"
    failed = gavel("annotate", "init", "--db", project, "--import", pairs, "--images", wrong)
    assert failed.returncode != 0 and "not an image file inside" in failed.stderr
    done = gavel("annotate", "init", "--db", project, "--import", pairs, "--images", images)
    assert done.returncode == 0, done.stderr
    assert "1 items added" in done.stderr


def test_serve_refuses_what_it_cannot_open(tmp_path, gavel):
    missing = gavel("annotate", "serve", "--db", tmp_path / "nope.sqlite", "--port", "0")
    assert missing.returncode == 2 and "gavel annotate init" in missing.stderr


def test_serve_refuses_a_bad_public_origin_and_a_bare_wildcard_host(project, gavel):
    for origin in ("annotate.example", "https://annotate.example/gavel", "ftp://x", "https://"):
        bad = gavel("annotate", "serve", "--db", project.db, "--public-origin", origin)
        assert bad.returncode == 2 and "--public-origin" in bad.stderr, (origin, bad.stderr)
    # a wildcard bind accepts only the Host names it is told: without any it would refuse all
    wildcard = gavel("annotate", "serve", "--db", project.db, "--host", "0.0.0.0", "--port", "0")
    assert wildcard.returncode == 2 and "--allowed-host" in wildcard.stderr


def test_loopback_names():
    assert all(is_loopback(h) for h in ("127.0.0.1", "localhost", "::1", "127.1.2.3"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "192.168.1.4", "example.org", "::"))
    assert all(is_wildcard(h) for h in ("0.0.0.0", "::", ""))
    assert not any(is_wildcard(h) for h in ("127.0.0.1", "192.168.1.4", "example.org"))


def test_serve_takes_its_limits_from_the_command_line(project, gavel, start_server):
    above = gavel(
        "annotate", "serve", "--db", project.db, "--max-connections", "10",
        "--max-connections-per-address", "11",
    )  # fmt: skip
    assert above.returncode == 2 and "--max-connections-per-address" in above.stderr
    command = [
        sys.executable, "-m", "gavel", "annotate", "serve", "--db", str(project.db),
        "--port", "0", "--free-wrong-tokens", "2", "--wrong-token-wait", "30",
    ]  # fmt: skip
    server = start_server(project.db, command=command)
    statuses = [server.request("GET", "/api/next", token="gvl_wrong")[0] for _ in range(4)]
    assert statuses == [401, 401, 429, 429]
    status, headers, _ = server.request("GET", "/api/next", token="gvl_wrong")
    assert status == 429 and 25 < int(headers["retry-after"]) <= 30
    assert server.request("GET", "/api/next", token=project.tokens["ana"])[0] == 200
