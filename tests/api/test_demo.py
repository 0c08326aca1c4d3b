"""gavel.api.demo called directly: its folder is a path given as a Path or as text (the whole
demo itself runs in tests/cli/test_demo.py)."""

from __future__ import annotations

import pytest

from gavel.api.demo import demo
from gavel.errors import ConfigError


def test_a_folder_that_is_not_a_path_is_refused_naming_its_flag():
    with pytest.raises(ConfigError, match="'--out': 5 is not a path"):
        demo(5)
