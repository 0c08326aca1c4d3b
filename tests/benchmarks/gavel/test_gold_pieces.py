"""A large data file read in pieces by forked processes gives what reading it in order gives:
the same columns, ids, hash and report, and, for a damaged file, the same first error."""

from __future__ import annotations

import json
import multiprocessing

import pytest

from gavel.benchmarks.gavel import gold_pieces
from gavel.benchmarks.gavel.gold import load_gold
from gavel.benchmarks.gavel.gold_pieces import load_gold_columns
from gavel.errors import DataError

pytestmark = pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="pieces are read by fork"
)

COLUMNS = ("_truth", "_column", "_width", "_height", "_box_start", "_boxes")


@pytest.fixture(autouse=True)
def in_pieces(monkeypatch):
    """Every file is read in three pieces; yields the piece bounds of each reading in pieces
    (a test that meant pieces and got a reading in order would compare it with itself)."""
    monkeypatch.setattr(gold_pieces, "PIECES_FROM", 0)
    monkeypatch.setenv("GAVEL_SCORE_WORKERS", "3")
    readings: list[list[int]] = []
    in_pieces = gold_pieces._in_pieces

    def counted(path, image_root, bounds):
        readings.append(bounds)
        return in_pieces(path, image_root, bounds)

    monkeypatch.setattr(gold_pieces, "_in_pieces", counted)
    return readings


def sample(i: int, **overrides) -> dict:
    clean = i % 3 == 0
    line = {
        "id": f"s{i}",
        "image": f"images/{i % 7}.png",
        "caption": f"Caption number {i}.",
        "hallucinated": not clean,
        "category": None if clean else ["Color", "Qty", "Obj"][i % 3],
        "boxes": [] if clean else [[i % 50, 5, 20 + i % 9, 30]] * (1 + i % 2),
        "width": 200 + i,
        "height": 100 + i % 13,
    }
    return line | overrides


def write(tmp_path, lines: list) -> object:
    path = tmp_path / "data.jsonl"
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


def outcome(load, path):
    try:
        return load(path)
    except DataError as error:
        return str(error)


def test_pieces_give_the_columns_ids_hash_and_report_of_a_reading_in_order(tmp_path, in_pieces):
    lines: list = [sample(i) for i in range(300)]
    lines[40:40] = ["", "   "]  # blank lines count as lines
    lines.append(sample(300, boxes=[[480, 5, 60, 30]], hallucinated=True, category="Obj"))
    path = write(tmp_path, lines)
    whole, loader = load_gold(path)
    pieces, sha256, report = load_gold_columns(path)
    assert [len(bounds) for bounds in in_pieces] == [4]
    assert sha256 == loader.sha256 and report == loader.report and report.clipped_boxes == 1
    assert list(pieces.ids) == list(whole.ids)
    for name in COLUMNS:
        assert getattr(pieces, name) == getattr(whole, name), name
    assert [pieces.position(f"s{i}") for i in range(301)] == list(range(301))
    assert pieces.golds([0, 150, 300]) == whole.golds([0, 150, 300])
    # The ids a caller has already (its predictions') stand for the decoded ones.
    assert pieces.golds([0, 150, 300], ["s0", None, "s300"]) == whole.golds([0, 150, 300])
    assert [g.id for g in pieces.golds([0, 150], ["given", None])] == ["given", "s150"]


DAMAGED = {
    "an error in the last piece": {250: sample(250, caption="")},
    "errors in two pieces: the earlier": {250: sample(250, width=-1), 120: {"id": "x"}},
    "an id repeated across pieces": {260: sample(10)},
    "an error in the first piece before a repeat across pieces": {
        30: sample(30, category="Nope"),
        200: sample(20),
        150: sample(150, boxes=[[1, 2, 3]]),
    },
    "a repeat across pieces before an error in a later piece": {
        150: sample(10),
        250: sample(250, caption=""),
    },
    "a repeat after an error in an earlier piece": {40: sample(40, caption=""), 220: sample(5)},
    "a repeat on a line with another problem": {240: sample(12, caption="")},
    "a repeat within a piece": {280: sample(270)},
    "a repeat within a piece and across, the across first": {270: sample(1), 280: sample(1)},
    "not JSON": {199: "{not json"},
    "no samples": "empty",
}


@pytest.mark.parametrize("case", list(DAMAGED))
def test_a_damaged_file_fails_on_the_line_a_reading_in_order_names(tmp_path, case, in_pieces):
    changes = DAMAGED[case]
    lines: list = [sample(i) for i in range(300)]
    if changes == "empty":
        lines = ["", " "] * 200
    else:
        for at, line in changes.items():
            lines[at] = line
    path = write(tmp_path, lines)
    expected = outcome(lambda p: load_gold(p), path)
    assert isinstance(expected, str), "the case must be an error"
    assert outcome(load_gold_columns, path) == expected
    assert len(in_pieces) == 1 and len(in_pieces[0]) == 4


@pytest.mark.parametrize("setting", ["one process", "a small file"])
def test_one_process_or_a_small_file_reads_in_order(tmp_path, monkeypatch, in_pieces, setting):
    path = write(tmp_path, [sample(i) for i in range(10)])
    if setting == "one process":
        monkeypatch.setenv("GAVEL_SCORE_WORKERS", "1")
    else:
        monkeypatch.setattr(gold_pieces, "PIECES_FROM", path.stat().st_size + 1)
    gold, _, _ = load_gold_columns(path)
    assert len(gold) == 10 and in_pieces == []
