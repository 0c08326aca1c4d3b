"""A large predictions file cut into pieces that forked workers read and score gives what
reading it in order gives: the same metrics, counts, warnings, scores and hash, and, for a
damaged file, the same first error (message, line and field)."""

from __future__ import annotations

import bisect
import hashlib
import json
import multiprocessing
import random
import signal
import threading

import numpy as np
import pytest

from gavel.benchmarks.gavel import prediction_pieces, scoring
from gavel.benchmarks.gavel.gold_pieces import load_gold_columns
from gavel.benchmarks.gavel.scoring import GavelSettings, evaluate_files
from gavel.benchmarks.gavel.streaming import Slots
from gavel.errors import ConfigError, DataError
from gavel.io import line_ranges, reading
from gavel.records import CATEGORY_COLUMNS, NO_HALLUCINATION
from gavel.selection import ALL, Selection

pytestmark = pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="pieces are read by fork"
)

N = 300
CATEGORIES = [c for c in CATEGORY_COLUMNS if c != NO_HALLUCINATION]
RAW = GavelSettings(box_format="rel1000", resamples=50)
#: Seconds a test may take (each takes well under one): past them it fails, naming where it
#: waits, rather than holding the whole run forever.
HANG_S = 30


class Hung(Exception):
    pass


@pytest.fixture(autouse=True)
def watchdog():
    """A scoring that hangs fails its test. An error raised while workers still score pieces
    stops the pool; stopped with ``Pool.terminate`` it could deadlock (a worker killed while it
    holds the pool's queue lock: python/cpython#96995), so it is closed and joined instead, and
    a return of that would hang here; a lock's wait is interrupted by a signal whose handler
    raises."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def hung(signum, frame):
        raise Hung(f"still running after {HANG_S} s: a hang (see the traceback)")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.setitimer(signal.ITIMER_REAL, HANG_S)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(autouse=True)
def in_pieces(monkeypatch):
    """A file of a few KB is cut into several pieces and read by three workers; yields the
    bounds of each scoring in pieces (a test that meant pieces and got a reading in order
    would compare it with itself)."""
    monkeypatch.setattr(prediction_pieces, "MIN_PIECE_BYTES", 512)
    monkeypatch.setattr(prediction_pieces, "PIECE_BYTES", 4096)
    monkeypatch.setenv("GAVEL_SCORE_WORKERS", "3")
    calls: list[list[int]] = []
    score_in_pieces = prediction_pieces.score_in_pieces

    def counted(gold, chosen, path, bounds, *rest):
        calls.append(list(bounds))
        return score_in_pieces(gold, chosen, path, bounds, *rest)

    monkeypatch.setattr(scoring, "score_in_pieces", counted)
    return calls


def sample(i: int) -> dict:
    clean = i % 3 == 0
    boxes = [[i % 50, 5, 20 + i % 9, 30], [60, 40, 25, 15 + i % 5]][: 1 + i % 2]
    return {
        "id": f"s{i}",
        "image": f"images/{i % 7}.png",
        "caption": f"Caption number {i}.",
        "hallucinated": not clean,
        "category": None if clean else CATEGORIES[i % len(CATEGORIES)],
        "boxes": [] if clean else boxes,
        "width": 200 + i,
        "height": 100 + i % 13,
    }


def prediction(i: int, **overrides) -> dict:
    """A raw reply (a fenced JSON verdict with boxes in 0-1000 coordinates), a model error,
    an unreadable verdict or a reply cut off by the token limit."""
    rng = random.Random(i)
    line: dict = {"id": f"s{i}", "model": "m-a" if i % 2 else "m-b"}
    if i % 11 == 0:
        line["error"] = "HTTP 500"
    else:
        boxes = []
        for _ in range(i % 3):
            x, y = rng.randint(0, 900), rng.randint(0, 900)
            boxes.append([x, y, x + rng.randint(1, 1000 - x), y + rng.randint(1, 1000 - y)])
        verdict = "maybe" if i % 13 == 0 else i % 4 != 0
        answer = {"hallucination": verdict, "explanation": f"reason {i}", "bbox_2d": boxes}
        line["response"] = "```json\n" + json.dumps(answer) + "\n```"
        if i % 19 == 0:
            line["finish_reason"] = "length"
    return line | overrides


def write(path, lines: list, newline: str = "\n", final: bool = True):
    text = newline.join(x if isinstance(x, str) else json.dumps(x) for x in lines)
    path.write_bytes((text + (newline if final else "")).encode())
    return path


@pytest.fixture
def data(tmp_path):
    return write(tmp_path / "data.jsonl", [sample(i) for i in range(N)])


def outcome(data, predictions, settings, selection=ALL):
    """What a scoring gives, as plain values: the result's numbers, warnings, scores (their
    JSON lines) and the predictions' hash; or the error (its type, text, line and field)."""
    try:
        result, scores = evaluate_files(data, predictions, settings, selection=selection)
    except (DataError, ConfigError) as error:
        return (
            type(error).__name__,
            str(error),
            getattr(error, "line", None),
            getattr(error, "field", None),
        )
    return {
        "metrics": json.dumps(result.metrics, sort_keys=True),
        "per_category": json.dumps(result.per_category, sort_keys=True),
        "counts": result.counts,
        "ci": json.dumps(result.ci, sort_keys=True),
        "warnings": result.warnings,
        "selection": result.manifest.settings.get("selection"),
        "scores": b"".join(scores.blocks()).decode().splitlines(),
        "sha256": result.manifest.predictions_sha256,
    }


def both_ways(monkeypatch, calls, data, predictions, settings=RAW, selection=ALL):
    """The outcome in pieces (which must have been taken) and read in order."""
    before = len(calls)
    pieces = outcome(data, predictions, settings, selection)
    assert len(calls) == before + 1 and len(calls[-1]) >= 4, "not scored in pieces"
    with monkeypatch.context() as patch:
        patch.setattr(scoring, "prediction_bounds", lambda path, workers: None)
        in_order = outcome(data, predictions, settings, selection)
    assert len(calls) == before + 1
    return pieces, in_order


def piece_of(path, bounds: list[int], number: int) -> int:
    """The piece that line ``number`` (from 1) of ``path`` starts in."""
    content = path.read_bytes()
    starts = [0] + [i + 1 for i, byte in enumerate(content) if byte == ord("\n")]
    return bisect.bisect_right(bounds, starts[number - 1]) - 1


# -- a clean run ----------------------------------------------------------------------------


def clean_lines() -> tuple[list, list[str]]:
    """Predictions for most samples (some missing), for ids not in the data, shuffled, with
    blank lines between; and the unknown ids in file order."""
    lines: list = [prediction(i) for i in range(N) if i % 17 != 5]
    lines += [{"id": f"ghost{k}", "response": "Yes."} for k in range(8)]
    random.Random(3).shuffle(lines)
    for at, blank in ((40, ""), (41, "   "), (170, ""), (250, "\t")):
        lines.insert(at, blank)
    ghosts = [x["id"] for x in lines if isinstance(x, dict) and x["id"].startswith("ghost")]
    return lines, ghosts


@pytest.mark.parametrize(
    ("newline", "final"), [("\n", True), ("\r\n", False)], ids=["lf", "crlf-no-final-newline"]
)
def test_a_clean_run_in_pieces_is_the_run_read_in_order(
    tmp_path, monkeypatch, in_pieces, data, newline, final
):
    lines, ghosts = clean_lines()
    path = write(tmp_path / "pred.jsonl", lines, newline, final)
    pieces, in_order = both_ways(monkeypatch, in_pieces, data, path)
    assert isinstance(pieces, dict), pieces
    assert pieces == in_order
    assert pieces["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    missing = sum(1 for i in range(N) if i % 17 == 5)
    assert pieces["counts"]["unknown_ids"] == 8 and pieces["counts"]["missing"] == missing
    shown = ", ".join(repr(g) for g in ghosts[:5])
    assert f"8 prediction(s) for ids not in the data: {shown}" in pieces["warnings"]
    assert [json.loads(s)["id"] for s in pieces["scores"]] == [f"s{i}" for i in range(N)]
    # and one process, no workers at all, agrees too
    monkeypatch.setenv("GAVEL_SCORE_WORKERS", "1")
    assert outcome(data, path, RAW) == pieces
    assert len(in_pieces) == 1


def test_a_file_that_grows_while_it_is_scored_is_scored_and_hashed_as_it_was_cut(
    tmp_path, monkeypatch, in_pieces, data
):
    # A run still writing its predictions: what was there when the file was cut is scored,
    # and the hash names exactly those bytes.
    lines, _ = clean_lines()
    path = write(tmp_path / "pred.jsonl", lines)
    before = path.read_bytes()
    expected = outcome(data, path, RAW)
    cut = scoring.prediction_bounds

    def cut_then_grow(predictions, workers):
        bounds = cut(predictions, workers)
        with path.open("ab") as handle:
            handle.write(b'{"id": "late", "response": "no"}\n' * 50)
        return bounds

    monkeypatch.setattr(scoring, "prediction_bounds", cut_then_grow)
    grown = outcome(data, path, RAW)
    assert grown == expected and len(in_pieces) == 2
    assert grown["sha256"] == hashlib.sha256(before).hexdigest()


SELECTIONS = {
    "every third id": Selection(sample_ids=tuple(f"s{i}" for i in range(0, N, 3))),
    "a random 100": Selection(limit=100, shuffle=True, seed=4),
}


@pytest.mark.parametrize("name", list(SELECTIONS))
def test_a_selection_in_pieces_is_the_selection_read_in_order(
    tmp_path, monkeypatch, in_pieces, data, name
):
    lines, _ = clean_lines()
    path = write(tmp_path / "pred.jsonl", lines)
    pieces, in_order = both_ways(monkeypatch, in_pieces, data, path, selection=SELECTIONS[name])
    assert isinstance(pieces, dict), pieces
    assert pieces == in_order
    assert len(pieces["scores"]) == pieces["selection"]["chosen"] == 100
    assert pieces["counts"]["unknown_ids"] == 8  # the others are set aside, not unknown


# -- damaged files: the first problem in file order ----------------------------------------

BAD_SIZE = {"sent_size": [0, 10]}

#: Lines (index into the file, from 0) replaced; the line (from 1) and field the error must
#: name; and where lines lie, as (line, "earlier"/"same", line): in an earlier piece than
#: the other line, or in the same piece.
DAMAGED: dict[str, tuple[dict, int, str | None, list]] = {
    "not JSON": ({260: "{not json"}, 261, None, []),
    "an empty id": ({250: {"id": "", "response": "x"}}, 251, "id", []),
    "a non-finite number": (
        {255: '{"id": "s255", "prompt_tokens": NaN}'},
        256,
        "prompt_tokens",
        [],
    ),
    "a wrong type": ({245: prediction(245, response=3)}, 246, "response", []),
    "an unknown box format": ({270: prediction(270, box_format="nope")}, 271, "box_format", []),
    "a repeat across pieces": ({270: prediction(10)}, 271, "id", [(11, "earlier", 271)]),
    "a repeat within a piece": ({281: prediction(280)}, 282, "id", [(281, "same", 282)]),
    "a repeat within a piece, then across": (
        {262: prediction(261), 264: prediction(3)},
        263,
        "id",
        [(262, "same", 263), (4, "earlier", 265)],
    ),
    "a repeat across, then within a piece": (
        {262: prediction(3), 264: prediction(261)},
        263,
        "id",
        [(4, "earlier", 263), (262, "same", 265)],
    ),
    "an unknown id repeated across pieces": (
        {40: {"id": "ghost"}, 260: {"id": "ghost", "response": "No."}},
        261,
        "id",
        [(41, "earlier", 261)],
    ),
    "an unknown id repeated within a piece": (
        {204: {"id": "ghost"}, 206: {"id": "ghost"}},
        207,
        "id",
        [(205, "same", 207)],
    ),
    "a known repeat before an unknown repeat": (
        {40: {"id": "ghost"}, 262: prediction(7), 265: {"id": "ghost"}},
        263,
        "id",
        [(263, "same", 266)],
    ),
    "an unknown repeat before a known repeat": (
        {40: {"id": "ghost"}, 262: {"id": "ghost"}, 265: prediction(7)},
        263,
        "id",
        [(263, "same", 266)],
    ),
    "a repeat on a line with a bad sent_size": (
        {265: prediction(12) | BAD_SIZE},
        266,
        "id",
        [(13, "earlier", 266)],
    ),
    "an unknown repeat on a line with a bad sent_size": (
        {30: {"id": "ghost"}, 265: {"id": "ghost"} | BAD_SIZE},
        266,
        "id",
        [(31, "earlier", 266)],
    ),
    "a bad sent_size before a repeat in its piece": (
        {262: prediction(262) | BAD_SIZE, 266: prediction(5)},
        263,
        "sent_size",
        [(263, "same", 267)],
    ),
    "a bad sent_size before a repeat in a later piece": (
        {150: prediction(150) | BAD_SIZE, 280: prediction(5)},
        151,
        "sent_size",
        [(151, "earlier", 281)],
    ),
    "a repeat before a problem in its piece": (
        {262: prediction(5), 266: "{not json"},
        263,
        "id",
        [(263, "same", 267)],
    ),
    "a problem before a repeat in its piece": (
        {262: "{not json", 266: prediction(5)},
        263,
        None,
        [(263, "same", 267)],
    ),
    "two problems in different pieces": (
        {120: prediction(120, response=3), 250: "{not json"},
        121,
        "response",
        [(121, "earlier", 251)],
    ),
    "a repeat in an early piece, a problem in a late one": (
        {60: prediction(2), 270: "{not json"},
        61,
        "id",
        [(61, "earlier", 271)],
    ),
    "a problem in the first piece": ({3: "[1, 2]"}, 4, None, [(4, "earlier", 200)]),
    "byte order marks read (the file's, a piece's first line), a problem later": (
        {
            0: "\ufeff" + json.dumps(prediction(0)),
            251: "\ufeff" + json.dumps(prediction(251)),
            270: "{not json",
        },
        271,
        None,
        [(1, "earlier", 271), (252, "same", 271)],
    ),
}


def damaged_lines(changes: dict) -> list:
    lines: list = [prediction(i) for i in range(N)]
    lines[100:102] = ["", "  "]  # blank lines count as lines
    for at, line in changes.items():
        lines[at] = line
    return lines


def assert_placed(path, bounds, placement) -> None:
    for a, relation, b in placement:
        first, second = piece_of(path, bounds, a), piece_of(path, bounds, b)
        if relation == "earlier":
            assert first < second, (a, b, bounds)
        else:
            assert first == second, (a, b, bounds)


@pytest.mark.parametrize("case", list(DAMAGED))
def test_a_damaged_file_fails_on_the_line_a_reading_in_order_names(
    tmp_path, monkeypatch, in_pieces, data, case
):
    changes, line, field, placement = DAMAGED[case]
    path = write(tmp_path / "pred.jsonl", damaged_lines(changes))
    pieces, in_order = both_ways(monkeypatch, in_pieces, data, path)
    assert in_order[0] == "DataError" and in_order[2:] == (line, field), in_order
    assert pieces == in_order
    assert piece_of(path, in_pieces[-1], line) >= 1 or line < 5
    assert_placed(path, in_pieces[-1], placement)


def test_an_error_while_workers_still_score_never_hangs(tmp_path, in_pieces, data):
    # The first piece is damaged: the error is raised while later pieces are being scored,
    # and the workers are stopped every time (the watchdog fails a hang).
    path = write(tmp_path / "pred.jsonl", damaged_lines({3: "{not json"}))
    for _ in range(25):
        with pytest.raises(DataError) as raised:
            evaluate_files(data, path, RAW)
        assert raised.value.line == 4
    assert len(in_pieces) == 25


def test_the_last_line_without_a_line_end(tmp_path, monkeypatch, in_pieces, data):
    lines = damaged_lines({N - 1: prediction(4)})
    path = write(tmp_path / "pred.jsonl", lines, final=False)
    pieces, in_order = both_ways(monkeypatch, in_pieces, data, path)
    assert in_order[0] == "DataError" and in_order[2:] == (N, "id")
    assert "first on line 5" in in_order[1]
    assert pieces == in_order


def test_a_repeat_of_a_sample_not_chosen_is_still_refused(tmp_path, monkeypatch, in_pieces, data):
    path = write(tmp_path / "pred.jsonl", damaged_lines({270: prediction(10)}))
    chosen = Selection(sample_ids=tuple(f"s{i}" for i in range(0, N, 3)))  # not s10
    pieces, in_order = both_ways(monkeypatch, in_pieces, data, path, selection=chosen)
    assert in_order[0] == "DataError" and in_order[2:] == (271, "id")
    assert "first on line 11" in in_order[1]
    assert pieces == in_order


def test_a_line_over_the_limit_inside_a_piece(tmp_path, monkeypatch, in_pieces, data):
    """The limit the workers read by (the cuts themselves are found under the usual one)."""
    monkeypatch.setattr(reading, "LINE_BYTES", 400)
    long = prediction(250, explanation="x" * 600)
    path = write(tmp_path / "pred.jsonl", damaged_lines({250: long, 280: "{not json"}))
    pieces, in_order = both_ways(monkeypatch, in_pieces, data, path)
    assert in_order[0] == "DataError" and in_order[2:] == (251, None), in_order
    assert "line longer than 400 bytes" in in_order[1]
    assert pieces == in_order


@pytest.mark.parametrize("length", [600, 6000], ids=["a long line", "a line across a cut"])
def test_a_line_over_the_limit_everywhere(tmp_path, monkeypatch, in_pieces, data, length):
    """With the cuts found under the same limit: a long line near a cut leaves the file to
    be read in order (whose reader names the line); elsewhere, pieces name it alike."""
    monkeypatch.setattr(reading, "LINE_BYTES", 400)
    monkeypatch.setattr(line_ranges, "LINE_BYTES", 400)
    long = prediction(250, explanation="x" * length)
    path = write(tmp_path / "pred.jsonl", damaged_lines({250: long}))
    expected = ("DataError", f"{path}, line 251: line longer than 400 bytes: one line holds one "
                "record", 251, None)  # fmt: skip
    bounds = prediction_pieces.prediction_bounds(path, 3)
    if length > 4096:
        assert bounds is None  # the line is longer than a piece: a cut falls in it
    if bounds is None:
        assert outcome(data, path, RAW) == expected
        assert in_pieces == []
    else:
        assert both_ways(monkeypatch, in_pieces, data, path) == (expected, expected)


# -- a missing box format: refused once the whole file is read -----------------------------


def given(i: int) -> dict:
    """A prediction with its boxes parsed already (in original pixels)."""
    return {"id": f"s{i}", "response": "r", "hallucinated": i % 3 != 0, "explanation": "e",
            "boxes": [[1, 2, 30 + i % 7, 40]] if i % 2 else []}  # fmt: skip


REFUSALS = {
    "the first raw reply": ({150: prediction(150), 230: prediction(230)}, ALL, "'s150'"),
    "the first raw reply chosen": (
        {150: prediction(150), 230: prediction(230)},
        Selection(sample_ids=tuple(f"s{i}" for i in range(N) if i != 150)),
        "'s230'",
    ),
    "a damaged line after it": ({150: prediction(150), 280: "{not json"}, ALL, 281),
    "a repeat after it": ({150: prediction(150), 260: given(9)}, ALL, 261),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_a_missing_box_format_is_refused_after_the_whole_file(
    tmp_path, monkeypatch, in_pieces, data, case
):
    changes, selection, expected = REFUSALS[case]
    lines: list = [given(i) for i in range(N)]
    for at, line in changes.items():
        lines[at] = line
    path = write(tmp_path / "pred.jsonl", lines)
    settings = GavelSettings(resamples=0)
    pieces, in_order = both_ways(monkeypatch, in_pieces, data, path, settings, selection)
    assert pieces == in_order
    if isinstance(expected, str):
        assert in_order[0] == "ConfigError" and "no parsed boxes and no box_format" in in_order[1]
        assert f"prediction {expected} has" in in_order[1]
    else:
        assert in_order[0] == "DataError" and in_order[2] == expected
    assert piece_of(path, in_pieces[-1], 151) < piece_of(path, in_pieces[-1], 231)


def test_parsed_boxes_need_no_box_format(tmp_path, monkeypatch, in_pieces, data):
    path = write(tmp_path / "pred.jsonl", [given(i) for i in range(N)])
    pieces, in_order = both_ways(monkeypatch, in_pieces, data, path, GavelSettings(resamples=20))
    assert isinstance(pieces, dict) and pieces == in_order


# -- another framework's log is read in order ----------------------------------------------


def test_an_lmms_eval_sample_log_is_not_cut_and_scores_as_its_answers(
    tmp_path, monkeypatch, in_pieces, data
):
    # an item holds a response, null for a model error, as the export writes it
    items = [{"response": None} | prediction(i) for i in range(N) if i % 17 != 5]
    plain = write(tmp_path / "pred.jsonl", items)
    log = write(tmp_path / "20260101_samples_gavel.jsonl", [
        {"doc_id": n, "filtered_resps": [item.get("response")], "grounding_A_0_7": item}
        for n, item in enumerate(items)
    ])  # fmt: skip
    assert log.stat().st_size > 8 * prediction_pieces.PIECE_BYTES
    assert prediction_pieces.prediction_bounds(log, 3) is None
    from_log = outcome(data, log, RAW)
    assert in_pieces == []  # read in order
    assert isinstance(from_log, dict), from_log
    assert from_log["sha256"] == hashlib.sha256(log.read_bytes()).hexdigest()
    pieces, in_order = both_ways(monkeypatch, in_pieces, data, plain)
    assert pieces == in_order
    for key in ("metrics", "per_category", "counts", "ci", "warnings", "scores"):
        assert from_log[key] == pieces[key], key


def test_where_a_file_is_cut(tmp_path, data):
    lines, _ = clean_lines()
    path = write(tmp_path / "pred.jsonl", lines)
    content = path.read_bytes()
    bounds = prediction_pieces.prediction_bounds(path, 3)
    assert bounds is not None and bounds[0] == 0 and bounds[-1] == len(content)
    assert bounds == sorted(set(bounds)) and len(bounds) == 13  # four pieces a worker
    assert all(content[cut - 1 : cut] == b"\n" for cut in bounds[1:-1])
    assert prediction_pieces.prediction_bounds(path, 1) is None  # one process
    assert prediction_pieces.prediction_bounds(tmp_path / "nothing.jsonl", 3) is None
    small = write(tmp_path / "small.jsonl", [prediction(i) for i in range(2)])
    assert prediction_pieces.prediction_bounds(small, 3) is None


# -- the duplicate check of many ids at once -----------------------------------------------


@pytest.fixture
def slots(data):
    gold, _, _ = load_gold_columns(data)
    return Slots(gold, np.arange(len(gold), dtype=np.int64))


def at(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def test_seen_all_records_new_ids(slots):
    assert slots.seen_all(at(), at()) is None
    assert slots.seen_all(at(3, 1, 2), at(10, 11, 12)) is None
    assert slots.seen("s3", 99) == 10 and slots.seen("s1", 99) == 11 and slots.seen("s2", 99) == 12
    assert slots.seen("s4", 99) == 99  # not among them


def test_seen_all_finds_a_repeat_of_an_earlier_call_and_records_nothing(slots):
    assert slots.seen_all(at(3, 1), at(10, 11)) is None
    assert slots.seen_all(at(5, 1, 6), at(20, 21, 22)) == (1, 11)
    assert slots.seen("s5", 30) == 30 and slots.seen("s6", 31) == 31  # not recorded
    assert slots.seen("s1", 40) == 11


def test_seen_all_finds_a_repeat_within_a_call_and_records_nothing(slots):
    assert slots.seen_all(at(7, 8, 7, 9), at(40, 41, 42, 43)) == (2, 40)
    assert slots.seen_all(at(4, 4, 4), at(1, 2, 3)) == (1, 1)
    for i in (4, 7, 8, 9):
        assert slots.seen(f"s{i}", 50 + i) == 50 + i  # none recorded


def test_seen_all_names_the_first_repeat_in_line_order(slots):
    assert slots.seen_all(at(3), at(10)) is None
    assert slots.seen_all(at(6, 6, 3), at(60, 61, 62)) == (1, 60)  # within, before across
    assert slots.seen_all(at(3, 6, 6), at(60, 61, 62)) == (0, 10)  # across, before within
    assert slots.seen_all(at(9, 2, 9, 2), at(70, 71, 72, 73)) == (2, 70)
