"""The SQLite answer cache's columns: what an answer was (its finish reason, whether it came
from a repair re-ask) survives the cache, and files written before a column existed gain it
when they are opened."""

from __future__ import annotations

import sqlite3

import pytest

from gavel.requests import Answer
from gavel.runner.cache import AnswerCache


def test_a_repaired_answer_keeps_its_mark_through_the_cache(tmp_path):
    with AnswerCache(tmp_path / "cache.sqlite") as cache:
        cache.put("fixed", Answer('{"score": 4}', meta={"repaired": 2}, finish_reason="stop"), "j")
        cache.put("plain", Answer('{"score": 3}'), "j")
    with AnswerCache(tmp_path / "cache.sqlite") as cache:  # read back by another opening
        assert cache.get("fixed") == Answer(
            '{"score": 4}', meta={"repaired": 2}, finish_reason="stop"
        )
        assert cache.get("plain") == Answer('{"score": 3}')


#: Layouts of older cache files: the columns after ``created``, a row, the answer it reads as.
OLDER = {
    "before finish_reason": ("", ("k", "old", "{}", None, None, "m", 0), Answer("old")),
    "before the repair mark": (
        ", finish_reason TEXT",
        ("k", "old", "{}", None, None, "m", 0, "stop"),
        Answer("old", finish_reason="stop"),
    ),
}


@pytest.mark.parametrize("layout", OLDER)
def test_an_older_file_opens_and_gains_the_columns(tmp_path, layout):
    added, row, expected = OLDER[layout]
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE answers (key TEXT PRIMARY KEY, text TEXT NOT NULL, usage TEXT NOT "
            f"NULL, sent_size TEXT, input_size TEXT, model TEXT, created REAL NOT NULL{added})"
        )
        db.execute(f"INSERT INTO answers VALUES ({', '.join('?' * len(row))})", row)
    new = Answer("new", finish_reason="length", meta={"repaired": 1})
    with AnswerCache(path) as cache:
        assert cache.get("k") == expected
        cache.put("n", new, "m")
        assert cache.get("n") == new
    with sqlite3.connect(path) as db:
        columns = [found[1] for found in db.execute("PRAGMA table_info(answers)")]
    assert columns[-2:] == ["finish_reason", "repaired"]
    with AnswerCache(path) as cache:  # opened again: the columns are there already
        assert cache.get("n") == new and cache.get("k") == expected
