"""kill -9 of the server in the middle of a save: the database reopens consistent, with every
acknowledged save and nothing of the interrupted one."""

from __future__ import annotations

import contextlib
import http.client
import json
import random
import sqlite3
import threading
import time
from dataclasses import dataclass

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


@dataclass(frozen=True)
class Acknowledged:
    """A save the server answered 200: what the client was told is kept."""

    item: int
    version: int
    author: str
    explanation: str


class Hammer:
    """Clients saving as fast as the server answers, from threads, until the server is gone:
    annotators each taking the next item the server gives them, and two reviewers correcting
    every item that reaches review (so they race, one winning each time). Every 200 is
    recorded."""

    def __init__(self, server, tokens: dict[str, str], items: list[int], annotation: dict):
        self.server, self.tokens, self.items, self.annotation = server, tokens, items, annotation
        self.acknowledged: list[Acknowledged] = []
        self.refused: list[dict] = []
        self.guard = threading.Lock()

    def save(self, name: str, item: int, action: str, base: int | None) -> int:
        explanation = f"{name} ({action}) on item {item}, based on {base}."
        status, body = self.server.json(
            "POST", f"/api/items/{item}", token=self.tokens[name],
            body={"action": action, "base_version": base,
                  "annotation": {**self.annotation, "explanation": explanation}},
        )  # fmt: skip
        with self.guard:
            if status == 200:
                self.acknowledged.append(Acknowledged(item, body["version"], name, explanation))
            elif status == 409:
                self.refused.append(body)
        return status

    def annotator(self, name: str) -> None:
        """As the page does: ask for the next item (the server holds it for this annotator),
        annotate it, ask again, until none is left."""
        while True:
            _, given = self.server.json("GET", "/api/next", token=self.tokens[name])
            if given["item"] is None:
                return
            self.save(name, given["item"], "annotate", None)

    def reviewer(self, name: str) -> None:
        while True:
            for item in self.items:
                status, seen = self.server.json(
                    "GET", f"/api/items/{item}", token=self.tokens[name]
                )
                if status == 200 and seen["stage"] == "review":
                    self.save(name, item, "correct", seen["base_version"])

    def run(self, annotators: list[str], reviewers: list[str]) -> list[threading.Thread]:
        def until_gone(work, *args) -> None:
            with contextlib.suppress(OSError, http.client.HTTPException):  # the server was killed
                work(*args)

        threads = [threading.Thread(target=until_gone, args=(self.annotator, name))
                   for name in annotators]  # fmt: skip
        threads += [threading.Thread(target=until_gone, args=(self.reviewer, name))
                    for name in reviewers]  # fmt: skip
        for thread in threads:
            thread.start()
        return threads


def test_kill_during_a_storm_of_saves_keeps_every_acknowledged_one(
    make_project, more_items, start_server, hallucinated, tmp_path
):
    """Threads save over real HTTP as fast as the server answers; the server is killed with
    SIGKILL at a random moment, three times. After each restart every save that was answered
    200 is there, as sent, by its author; the database passes SQLite's integrity check and
    the version chains are sound; no item has two reviews (no lost update)."""
    names = {"ana": "annotator", "ana2": "annotator", "ana3": "annotator",
             "rev": "reviewer", "rev2": "reviewer"}  # fmt: skip
    project = make_project(tmp_path / "project", users=names)
    items = more_items(project, 600)
    seed = random.randrange(1 << 30)
    chance = random.Random(seed)
    acknowledged: list[Acknowledged] = []
    for _ in range(3):
        server = start_server(project.db)
        hammer = Hammer(server, project.tokens, items, hallucinated)
        threads = hammer.run(["ana", "ana2", "ana3"], ["rev", "rev2"])
        time.sleep(chance.uniform(0.3, 1.5))
        server.kill()
        for thread in threads:
            thread.join(timeout=60)
            assert not thread.is_alive()
        acknowledged += hammer.acknowledged
        for refused in hammer.refused:  # a race between the reviewers, lost
            assert "after you opened it" in refused["error"], refused
        with db.opened(project.db) as conn:
            assert [tuple(r) for r in conn.execute("PRAGMA integrity_check")] == [("ok",)]
            assert store.check_consistency(conn) == [], f"seed {seed}"
            kept = {row["id"]: row for row in conn.execute(
                "SELECT v.id, v.item_id, v.payload, u.name FROM versions v "
                "JOIN users u ON u.id = v.author_id")}  # fmt: skip
            for ack in acknowledged:
                row = kept.get(ack.version)
                assert row is not None, f"acknowledged save {ack} lost (seed {seed})"
                assert (row["item_id"], row["name"]) == (ack.item, ack.author)
                assert json.loads(row["payload"])["explanation"] == ack.explanation
            reviews = conn.execute("SELECT item_id, count(*) FROM versions WHERE stage = 'review' "
                                   "GROUP BY item_id HAVING count(*) > 1").fetchall()  # fmt: skip
            assert reviews == [], f"items reviewed twice: {reviews} (seed {seed})"
    reviewed = sum(ack.author.startswith("rev") for ack in acknowledged)
    assert reviewed > 0 and len(acknowledged) > reviewed, f"seed {seed}: {len(acknowledged)} saves"
    again = start_server(project.db)  # and work goes on
    status, _ = again.json("POST", f"/api/items/{items[-1]}", token=project.tokens["ana"],
                           body={"action": "annotate", "base_version": None,
                                 "annotation": hallucinated})  # fmt: skip
    assert status in (200, 403)  # 403: annotated already, before a kill
