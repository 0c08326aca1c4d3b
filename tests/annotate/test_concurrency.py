"""Two people saving the same item: the second save is refused, never silently lost."""

from __future__ import annotations

import threading

from gavel.annotate import db, store
from gavel.annotate.users import add_user


def add(project, name: str, role: str) -> str:
    with db.opened(project.db) as conn:
        return add_user(conn, name, role)


def annotate_item_1(server, project, annotation) -> int:
    status, saved = server.json(
        "POST",
        "/api/items/1",
        token=project.tokens["ana"],
        body={"action": "annotate", "base_version": None, "annotation": annotation},
    )
    assert status == 200
    return saved["version"]


def test_the_second_of_two_reviewers_is_refused_with_a_clear_message(served, hallucinated):
    project, server = served
    first = annotate_item_1(server, project, hallucinated)
    other = add(project, "rev2", "reviewer")
    _, seen_by_rev = server.json("GET", "/api/items/1", token=project.tokens["rev"])
    _, seen_by_rev2 = server.json("GET", "/api/items/1", token=other)
    assert seen_by_rev["base_version"] == seen_by_rev2["base_version"] == first

    corrected = {**hallucinated, "explanation": "The car is dark blue, not red."}
    status, saved = server.json(
        "POST",
        "/api/items/1",
        token=project.tokens["rev"],
        body={"action": "correct", "base_version": first, "annotation": corrected},
    )
    assert status == 200
    status, refused = server.json(
        "POST",
        "/api/items/1",
        token=other,
        body={"action": "correct", "base_version": first, "annotation": hallucinated},
    )
    assert status == 409
    assert refused["error"].startswith("rev (reviewer) corrected this item at ")
    assert f"(version {saved['version']}) after you opened it" in refused["error"]
    assert "Your change was not saved" in refused["error"]
    assert refused["latest"]["author"] == "rev"
    with db.opened(project.db) as conn:
        history = store.history(conn, 1)
        assert [v["author"] for v in history] == ["ana", "rev"]
        assert history[-1]["annotation"]["explanation"] == "The car is dark blue, not red."


def test_simultaneous_saves_one_wins_the_rest_are_refused(served, hallucinated):
    project, server = served
    first = annotate_item_1(server, project, hallucinated)
    tokens = [add(project, f"r{i}", "reviewer") for i in range(6)]
    barrier = threading.Barrier(len(tokens))
    statuses: list[int] = []

    def review(token: str, index: int) -> None:
        annotation = {**hallucinated, "explanation": f"Correction number {index}."}
        barrier.wait()
        status, _ = server.json(
            "POST",
            "/api/items/1",
            token=token,
            body={"action": "correct", "base_version": first, "annotation": annotation},
        )
        statuses.append(status)

    threads = [threading.Thread(target=review, args=(t, i)) for i, t in enumerate(tokens)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(statuses) == [200] + [409] * (len(tokens) - 1)
    with db.opened(project.db) as conn:
        assert len(store.history(conn, 1)) == 2
        assert store.check_consistency(conn) == []


def test_two_annotators_racing_for_one_item(served, hallucinated):
    project, server = served
    other = add(project, "ana2", "annotator")
    barrier = threading.Barrier(2)
    results: list[tuple[int, dict]] = []

    def save(token: str) -> None:
        barrier.wait()
        results.append(
            server.json(
                "POST",
                "/api/items/1",
                token=token,
                body={"action": "annotate", "base_version": None, "annotation": hallucinated},
            )
        )

    threads = [threading.Thread(target=save, args=(t,)) for t in (project.tokens["ana"], other)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    # the loser is told the item needs no more annotations, never who annotated it
    assert sorted(status for status, _ in results) == [200, 403]
    refused = next(body for status, body in results if status == 403)
    assert "has all the annotations it needs" in refused["error"]
    assert set(refused) == {"error"} and "(annotator)" not in refused["error"]


def test_two_reviewers_saving_each_of_many_items_at_the_same_moment(
    served, hallucinated, more_items
):
    """Over HTTP to the real server, two reviewers open each item, then save it at the same
    moment: one save per item stands, the other gets 409 naming it, and no save is lost."""
    project, server = served
    other = add(project, "rev2", "reviewer")
    items = more_items(project, 24)
    for item in items:
        status, _ = server.json("POST", f"/api/items/{item}", token=project.tokens["ana"],
                                body={"action": "annotate", "base_version": None,
                                      "annotation": hallucinated})  # fmt: skip
        assert status == 200
    reviewers = {"rev": project.tokens["rev"], "rev2": other}
    barrier = threading.Barrier(len(reviewers))
    outcomes: dict[tuple[int, str], tuple[int, dict]] = {}

    def review(name: str) -> None:
        for item in items:
            _, seen = server.json("GET", f"/api/items/{item}", token=reviewers[name])
            annotation = {**hallucinated, "explanation": f"{name} corrected item {item}."}
            barrier.wait(timeout=30)  # both have opened it; now both save
            outcomes[item, name] = server.json(
                "POST", f"/api/items/{item}", token=reviewers[name],
                body={"action": "correct", "base_version": seen["base_version"],
                      "annotation": annotation},
            )  # fmt: skip

    threads = [threading.Thread(target=review, args=(name,)) for name in reviewers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    with db.opened(project.db) as conn:
        assert store.check_consistency(conn) == []
        for item in items:
            statuses = sorted(outcomes[item, name][0] for name in reviewers)
            assert statuses == [200, 409], (item, statuses)
            winner = next(n for n in reviewers if outcomes[item, n][0] == 200)
            loser = next(n for n in reviewers if n != winner)
            saved, refused = outcomes[item, winner][1], outcomes[item, loser][1]
            assert refused["latest"]["version"] == saved["version"]
            assert refused["latest"]["author"] == winner
            assert "Your change was not saved" in refused["error"]
            history = store.history(conn, item)
            assert [v["author"] for v in history] == ["ana", winner]
            assert history[-1]["annotation"]["explanation"] == f"{winner} corrected item {item}."
