"""kill -9 of the server in the middle of a save: the database reopens consistent, with every
acknowledged save and nothing of the interrupted one."""

from __future__ import annotations

import sqlite3
import threading
import time

from gavel.annotate import db, store
from gavel.annotate.store import FAULT_DELAY_ENV


def writer_holds_the_lock(path) -> bool:
    """True while another connection is inside a write transaction."""
    probe = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        probe.execute("BEGIN IMMEDIATE")
        probe.execute("ROLLBACK")
        return False
    except sqlite3.OperationalError as error:
        return "locked" in str(error)
    finally:
        probe.close()


def test_kill_mid_write_leaves_the_database_consistent(project, start_server, hallucinated, gavel):
    ana = project.tokens["ana"]
    server = start_server(project.db)
    status, kept = server.json(
        "POST",
        "/api/items/1",
        token=ana,
        body={"action": "annotate", "base_version": None, "annotation": hallucinated},
    )
    assert status == 200
    server.kill()  # an acknowledged save must survive kill -9

    slow = start_server(project.db, env={FAULT_DELAY_ENV: "30"})
    outcome: list[object] = []

    def save_item_2() -> None:
        try:
            outcome.append(
                slow.json(
                    "POST",
                    "/api/items/2",
                    token=ana,
                    body={
                        "action": "annotate",
                        "base_version": None,
                        "annotation": {"verdict": "correct"},
                    },
                )
            )
        except OSError as error:  # the connection dies with the server
            outcome.append(error)

    thread = threading.Thread(target=save_item_2)
    thread.start()
    deadline = time.monotonic() + 20
    while not writer_holds_the_lock(project.db):  # the version row is written, uncommitted
        assert time.monotonic() < deadline, "the save never started writing"
        time.sleep(0.02)
    slow.kill()
    thread.join(timeout=20)
    assert outcome and isinstance(outcome[0], OSError)  # the client was never told "saved"

    with db.opened(project.db) as conn:
        assert store.check_consistency(conn) == []
        versions = conn.execute("SELECT id, item_id FROM versions").fetchall()
        assert [tuple(v) for v in versions] == [(kept["version"], 1)]
        assert store.item_row(conn, 2)["stage"] == "annotate"
        assert store.item_row(conn, 2)["head"] is None
    checked = gavel("annotate", "check", "--db", project.db)
    assert checked.returncode == 0 and "consistent" in checked.stdout

    again = start_server(project.db)  # and work simply goes on
    status, saved = again.json(
        "POST",
        "/api/items/2",
        token=ana,
        body={"action": "annotate", "base_version": None, "annotation": {"verdict": "correct"}},
    )
    assert status == 200 and saved["stage"] == "review"
