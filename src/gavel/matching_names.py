"""The names of the matching policies (``--match``), without the policies themselves.

The policies need numpy; a command's ``--help`` only needs their names, so the command line
reads them here. ``tests/test_matching_names.py`` checks they are exactly the registered ones.
"""

from __future__ import annotations

#: In the order ``gavel.matching`` registers them (the first is the default).
POLICY_NAMES: tuple[str, ...] = ("union", "max", "hungarian")
