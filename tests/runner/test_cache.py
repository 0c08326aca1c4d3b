"""The SQLite answer cache's columns: what an answer was (its finish reason, whether it came
from a repair re-ask) survives the cache, and files written before a column existed gain it
when they are opened."""

from __future__ import annotations

import sqlite3

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


def test_a_file_from_before_the_repair_mark_opens_and_gains_the_column(tmp_path):
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:  # the layout before the repair mark (finish_reason in)
        db.execute(
            "CREATE TABLE answers (key TEXT PRIMARY KEY, text TEXT NOT NULL, usage TEXT NOT "
            "NULL, sent_size TEXT, input_size TEXT, model TEXT, created REAL NOT NULL, "
            "finish_reason TEXT)"
        )
        db.execute("INSERT INTO answers VALUES ('k', 'old', '{}', NULL, NULL, 'm', 0, 'stop')")
    with AnswerCache(path) as cache:
        assert cache.get("k") == Answer("old", finish_reason="stop")
        cache.put("n", Answer("new", meta={"repaired": 1}), "m")
        assert cache.get("n").meta == {"repaired": 1}
    with sqlite3.connect(path) as db:
        columns = [row[1] for row in db.execute("PRAGMA table_info(answers)")]
    assert columns[-2:] == ["finish_reason", "repaired"]
    with AnswerCache(path) as cache:  # opened again: the column is there already
        assert cache.get("n").meta == {"repaired": 1}


def test_a_file_from_before_both_columns_gains_them(tmp_path):
    path = tmp_path / "older.sqlite"
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE answers (key TEXT PRIMARY KEY, text TEXT NOT NULL, usage TEXT NOT "
            "NULL, sent_size TEXT, input_size TEXT, model TEXT, created REAL NOT NULL)"
        )
        db.execute("INSERT INTO answers VALUES ('k', 'older', '{}', NULL, NULL, 'm', 0)")
    with AnswerCache(path) as cache:
        assert cache.get("k") == Answer("older")
        cache.put("n", Answer("new", finish_reason="length", meta={"repaired": 1}), "m")
        assert cache.get("n") == Answer("new", finish_reason="length", meta={"repaired": 1})
