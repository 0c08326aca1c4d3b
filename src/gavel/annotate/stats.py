"""The dashboard's numbers: items per stage, throughput per person, and agreement.

Agreement is measured wherever two people judged the same item:

- **two annotators**: items marked for two independent annotations (``init --double``);
- **annotator and reviewer**: the annotation against the reviewed one (how much review changes);
- **reviewer and checker**: the reviewed annotation against the spot check.

For each pair of annotations: whether the verdicts agree; among pairs where both found an
error, whether the categories agree and the IoU of the union of their boxes (the same union
IoU gavel scores models with).
"""

from __future__ import annotations

import itertools
import sqlite3
import statistics
from collections import defaultdict
from typing import Any

from gavel.annotate import payload
from gavel.annotate.db import now
from gavel.geometry import xywh_to_xyxy
from gavel.overlap import union_iou

STAGES = ("annotate", "review", "reviewed", "checked")
#: Pauses longer than this between two saves of one person are breaks, not work time.
BREAK_SECONDS = 15 * 60


def dashboard(conn: sqlite3.Connection) -> dict[str, Any]:
    counts = dict.fromkeys(STAGES, 0)
    for row in conn.execute("SELECT stage, count(*) FROM items GROUP BY stage"):
        counts[row[0]] = row[1]
    versions = conn.execute(
        "SELECT v.id, v.item_id, v.action, v.created, v.payload, v.author_id, u.name, u.role "
        "FROM versions v JOIN users u ON u.id = v.author_id ORDER BY v.id"
    ).fetchall()
    return {
        "items": sum(counts.values()),
        "stages": counts,
        "people": _people(conn, versions),
        "agreement": _agreement(versions),
    }


def _people(conn: sqlite3.Connection, versions: list[sqlite3.Row]) -> list[dict[str, Any]]:
    times: dict[int, list[float]] = defaultdict(list)
    for version in versions:
        times[version["author_id"]].append(version["created"])
    day_ago = now() - 86400
    people = []
    for user in conn.execute("SELECT id, name, role, active FROM users ORDER BY role, name"):
        stamps = sorted(times.get(user["id"], []))
        gaps = [b - a for a, b in itertools.pairwise(stamps) if b - a <= BREAK_SECONDS]
        median = statistics.median(gaps) if gaps else None
        people.append(
            {
                "name": user["name"],
                "role": user["role"],
                "active": bool(user["active"]),
                "saves": len(stamps),
                "last_24h": sum(t >= day_ago for t in stamps),
                "median_seconds": round(median, 1) if median else None,
                "per_hour": round(3600 / median, 1) if median else None,
            }
        )
    return people


def _agreement(versions: list[sqlite3.Row]) -> dict[str, Any]:
    by_item: dict[int, dict[str, payload.Annotation]] = defaultdict(dict)
    for version in versions:
        by_item[version["item_id"]][version["action"] + _check_suffix(version)] = payload.decode(
            version["payload"]
        )
    double, review, check = Tally(), Tally(), Tally()
    for found in by_item.values():
        first = found.get("annotate")
        if first is not None and "annotate-second" in found:
            double.add(first, found["annotate-second"])
        reviewed = found.get("accept") or found.get("correct")
        if first is not None and reviewed is not None:
            review.add(first, reviewed, changed="correct" in found)
        checked = found.get("pass:check") or found.get("correct:check")
        if reviewed is not None and checked is not None:
            check.add(reviewed, checked, changed="correct:check" in found)
    return {
        "two_annotators": double.result(),
        "annotator_reviewer": review.result(),
        "reviewer_checker": check.result(),
    }


def _check_suffix(version: sqlite3.Row) -> str:
    return ":check" if version["role"] == "checker" else ""


class Tally:
    """Agreement between pairs of annotations of the same items."""

    def __init__(self) -> None:
        self.items = 0
        self.verdicts_agree = 0
        self.both_hallucinated = 0
        self.categories_agree = 0
        self.ious: list[float] = []
        self.unchanged = 0

    def add(self, a: payload.Annotation, b: payload.Annotation, *, changed: bool = True) -> None:
        self.items += 1
        self.unchanged += not changed
        self.verdicts_agree += a.verdict == b.verdict
        if a.verdict == b.verdict == payload.HALLUCINATED:
            self.both_hallucinated += 1
            self.categories_agree += a.category == b.category
            if a.boxes and b.boxes:
                self.ious.append(
                    union_iou(
                        [xywh_to_xyxy(x) for x in a.boxes], [xywh_to_xyxy(x) for x in b.boxes]
                    )
                )

    def result(self) -> dict[str, Any]:
        def share(part: int, whole: int) -> float | None:
            return round(part / whole, 4) if whole else None

        return {
            "items": self.items,
            "unchanged": share(self.unchanged, self.items),
            "verdict_agreement": share(self.verdicts_agree, self.items),
            "both_hallucinated": self.both_hallucinated,
            "category_agreement": share(self.categories_agree, self.both_hallucinated),
            "mean_box_iou": round(statistics.fmean(self.ious), 4) if self.ious else None,
        }
