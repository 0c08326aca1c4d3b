"""The error lines of an earlier run, while a rerun asks their samples again.

A rerun takes the error lines out of the predictions file first
(:func:`gavel.runner.async_runner.take_errors`: the file rewritten atomically), so a sample
asked again ends with exactly one line, its new one. A run that ends before it asked them all
(stopped, failed, interrupted, its batch's results not downloadable) must not lose the lines
it did not replace: :func:`put_back` appends the old line of every sample that still has none.
The online runner does this with the lines it wrote in hand; the runners that write through
several calls (the Batch API's rounds and merges, the Ray driver) read the file back once
instead, which is what makes it right however the lines got there.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from gavel.io.files import AppendFile
from gavel.runner.local import completed_ids


def put_back(path: Path, taken: Mapping[str, bytes]) -> int:
    """Append the lines of ``taken`` (sample id -> its error line, as taken out) whose samples
    have no line in ``path`` now; synced before returning. Returns how many were put back."""
    if not taken:
        return 0
    present = completed_ids(path)
    missing = [line for sample_id, line in taken.items() if sample_id not in present]
    if missing:
        with AppendFile(path) as handle:
            for line in missing:
                handle.write(line if line.endswith(b"\n") else line + b"\n")
            handle.sync()
    return len(missing)
