"""The rows of Parquet and JSON Lines data files, a few at a time.

Parquet files are read batch by batch (``ParquetFile.iter_batches``), never as a whole table,
so reading a dataset of embedded images holds one batch of them at a time whatever the
dataset's size. Every problem names the file and the row (1-based, counted over the file).
Each row is a :class:`~gavel.benchmarks.layout.row.Row`, what a benchmark's layout is fed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from gavel.benchmarks.layout.row import Row
from gavel.errors import DataError
from gavel.io.jsonl import HashingReader, parse_json
from gavel.sources.extras import need

#: Rows decoded to Python at a time: small, since a row may carry a whole image or video.
BATCH_ROWS = 16


def parquet_rows(path: Path) -> Iterator[Row]:
    pa = need("pyarrow")
    pq = need("pyarrow.parquet")
    number = 0
    try:
        # pre_buffer would read every row group ahead at once: the whole file in memory.
        reader = pq.ParquetFile(path, pre_buffer=False)
        for batch in reader.iter_batches(batch_size=BATCH_ROWS):
            for values in batch.to_pylist():
                number += 1
                yield Row(path, number, values)
    except (pa.ArrowException, OSError) as error:
        where = f" after row {number}" if number else ""
        raise DataError(path, None, None, f"not a readable Parquet file{where} ({error})") from None


def jsonl_rows(path: Path) -> Iterator[Row]:
    for number, line in HashingReader(path):
        value = parse_json(line, path, number)
        if not isinstance(value, dict):
            raise DataError(
                path, number, None, f"expected a JSON object, got {type(value).__name__}"
            )
        yield Row(path, number, value, is_line=True)


def rows(path: Path) -> Iterator[Row]:
    """The rows of one data file, by its suffix."""
    return parquet_rows(path) if path.suffix == ".parquet" else jsonl_rows(path)
