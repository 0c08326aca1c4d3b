"""Names of the files a scored run keeps beside its ``results.json``.

One place for the naming rule, so the scorer that writes them and every reader (reports,
comparisons, judge agreement) cannot drift apart.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

from gavel.errors import DataError
from gavel.io.reading import bounded_lines

LEDGER_NAME = "judge-ledger.jsonl"


def scores_path(results_path: Path) -> Path:
    """``run/results.json`` -> ``run/results.scores.jsonl`` (per-sample scores beside results)."""
    return results_path.with_name(results_path.stem + ".scores.jsonl")


def judge_replies_path(results_path: Path) -> Path:
    """``run/results.json`` -> ``run/results.judge.jsonl``: the LLM judge's raw replies."""
    return results_path.with_name(results_path.stem + ".judge.jsonl")


def ledger_path(results_path: Path) -> Path:
    """``run/results.json`` -> ``run/judge-ledger.jsonl``: one line per judge run in the folder."""
    return results_path.with_name(LEDGER_NAME)


#: The key under ``files`` in results.json for the ledger line of the run's judge.
LEDGER_ENTRY = LEDGER_NAME + "#entry"


def ledger_line(entry: dict) -> bytes:
    """One judge-ledger line: when, which judge, how much, and what it cost."""
    stamped = {"time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **entry}
    return json.dumps(stamped, default=str, ensure_ascii=True).encode()


def sha256_of(payload: bytes) -> str:
    return hashlib.sha256(payload).hexdigest()


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def check_run_files(results_path: Path, files: object) -> None:
    """Refuse a run whose files do not belong together.

    ``files`` is the ``files`` field of results.json: the SHA-256 of each file written with it
    (and of its line in the judge ledger). A file that is missing or changed means results.json
    and its per-sample files come from different runs (a write that failed half-way, a copy of
    one without the other), and numbers read from the pair would be stale. Runs written before
    the field existed name nothing and are not checked.
    """
    if not files:
        return
    if not isinstance(files, dict):
        raise DataError(results_path, None, "files", "expected an object of file -> sha256")
    for name, recorded in files.items():
        if not isinstance(name, str) or not isinstance(recorded, str):
            raise DataError(results_path, None, "files", "expected an object of file -> sha256")
        if name == LEDGER_ENTRY:
            _check_ledger_entry(results_path, recorded)
            continue
        if "/" in name or "\\" in name or name in ("", ".", ".."):
            raise DataError(results_path, None, "files", f"{name!r} is not a file beside it")
        path = results_path.with_name(name)
        if not path.is_file():
            raise DataError(
                path, None, None, f"missing, but {results_path.name} was written with it; "
                "score the run again (`gavel score --out`)",
            )  # fmt: skip
        if file_sha256(path) != recorded:
            raise DataError(
                path, None, None, f"does not match {results_path.name} (SHA-256 differs: the "
                "two files come from different runs, e.g. after a failed write); score the "
                "run again (`gavel score --out`)",
            )  # fmt: skip


def _check_ledger_entry(results_path: Path, recorded: str) -> None:
    ledger = ledger_path(results_path)
    if ledger.is_file():
        with ledger.open("rb") as handle:
            if any(sha256_of(line.rstrip(b"\n")) == recorded
                   for line in bounded_lines(handle, ledger)):  # fmt: skip
                return
    raise DataError(
        ledger, None, None, f"has no line for the judge run of {results_path.name}; score the "
        "run again (`gavel score --out`)",
    )  # fmt: skip
