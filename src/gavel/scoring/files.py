"""A scored run's files, written as one change: per-sample scores, the judge's ledger line,
then results.json naming the SHA-256 of each."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import msgspec

from gavel.io.files import append_line, write_together
from gavel.io.run_files import (
    LEDGER_ENTRY,
    file_sha256,
    judge_replies_path,
    ledger_line,
    ledger_path,
    scores_path,
    sha256_of,
)
from gavel.manifest import redact_userinfo
from gavel.records import GavelScore, Result, Score


def write_run(
    out: Path, result: Result, scores: Sequence[Score], ledger_entry: dict | None = None
) -> Path:
    """Write a run's files as one change: per-sample scores, the judge's ledger line, then
    results.json naming the SHA-256 of each (io.files.write_together, io.run_files).

    A failed write (full disk, size limit, read-only folder) leaves every file as it was.
    """
    encoder = msgspec.json.Encoder()
    per_sample = scores_path(out)
    scores = [_without_userinfo(s) for s in scores]
    result.warnings = redact_userinfo(result.warnings)
    lines = b"".join(encoder.encode(s) + b"\n" for s in scores)
    files = {per_sample.name: sha256_of(lines)}
    replies = judge_replies_path(out)
    if ledger_entry is not None and replies.is_file():
        files[replies.name] = file_sha256(replies)
    line = None
    if ledger_entry is not None:
        line = ledger_line(ledger_entry)
        files[LEDGER_ENTRY] = sha256_of(line)
    result.files = files
    summary = msgspec.json.format(encoder.encode(result), indent=2) + b"\n"
    before = None if line is None else (lambda: append_line(ledger_path(out), line))
    write_together([(per_sample, lines), (out, summary)], before_commit=before)
    return per_sample


def _without_userinfo(score: Score) -> Score:
    """A judge's error detail names its endpoint: never with the URL's password."""
    if not isinstance(score, GavelScore) or not score.judge_detail:  # GAVEL's alone are judged
        return score
    return msgspec.structs.replace(score, judge_detail=redact_userinfo(score.judge_detail))
