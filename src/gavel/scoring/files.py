"""A scored run's files, written as one change: per-sample scores, the judge's ledger line,
then results.json naming the SHA-256 of each."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import msgspec

from gavel.io.files import StagedFiles, append_line
from gavel.io.output_lock import writes_output
from gavel.io.run_files import (
    LEDGER_ENTRY,
    file_sha256,
    judge_replies_path,
    ledger_line,
    ledger_path,
    scores_path,
    sha256_of,
)
from gavel.io.spool import BLOCK, SpooledRecords
from gavel.manifest import redact_userinfo
from gavel.records import GavelScore, Result, Score


@writes_output("out")
def write_run(
    out: Path, result: Result, scores: Sequence[Score], ledger_entry: dict | None = None
) -> Path:
    """Write a run's files as one change: per-sample scores, the judge's ledger line, then
    results.json naming the SHA-256 of each (io.files.StagedFiles, io.run_files).

    The scores are written as they are encoded (or copied from the spool they were kept in),
    never joined in memory. A failed write (full disk, size limit, read-only folder) leaves
    every file as it was. Another process writing ``out`` is refused
    (:class:`~gavel.io.output_lock.OutputBusy`; a scoring holds the lock already).
    """
    encoder = msgspec.json.Encoder()
    per_sample = scores_path(out)
    result.warnings = redact_userinfo(result.warnings)
    replies = judge_replies_path(out)
    line = None if ledger_entry is None else ledger_line(ledger_entry)
    with StagedFiles([per_sample, out]) as staged:
        files = {per_sample.name: staged.add_chunks(per_sample, score_blocks(scores, encoder))}
        if ledger_entry is not None and replies.is_file():
            files[replies.name] = file_sha256(replies)
        if line is not None:
            files[LEDGER_ENTRY] = sha256_of(line)
        result.files = files
        staged.add(out, msgspec.json.format(encoder.encode(result), indent=2) + b"\n")
        staged.commit(None if line is None else (lambda: append_line(ledger_path(out), line)))
    return per_sample


def score_blocks(scores: Sequence[Score], encoder: msgspec.json.Encoder) -> Iterator[bytes]:
    """The scores' JSON lines in blocks of about a megabyte: a spool's lines as they are (they
    were encoded from records that name no password), others encoded here."""
    if isinstance(scores, SpooledRecords):
        yield from scores.blocks()
        return
    pending: list[bytes] = []
    size = 0
    for score in scores:
        line = encoder.encode(without_userinfo(score)) + b"\n"
        pending.append(line)
        size += len(line)
        if size >= BLOCK:
            yield b"".join(pending)
            pending, size = [], 0
    if pending:
        yield b"".join(pending)


def without_userinfo(score: Score) -> Score:
    """A judge's error detail names its endpoint: never with the URL's password."""
    if not isinstance(score, GavelScore) or not score.judge_detail:  # GAVEL's alone are judged
        return score
    return msgspec.structs.replace(score, judge_detail=redact_userinfo(score.judge_detail))
