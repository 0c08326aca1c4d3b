"""Which samples a run asks: ``limit``, ``sample_id`` (ids or ``@FILE``), ``shuffle``."""

from __future__ import annotations

from gavel.errors import ConfigError, UsageError
from gavel.selection import Selection, sample_ids_from


def make_selection(limit: int | None, sample_ids: tuple[str, ...], shuffle: bool,
                   seed: int) -> Selection:  # fmt: skip
    """The selection the settings describe; a bad one is a usage error."""
    ids = sample_ids_from(sample_ids)  # an unreadable @FILE is a DataError naming it
    try:
        return Selection(limit, ids, shuffle, seed)
    except ConfigError as error:
        raise UsageError(str(error)) from None
