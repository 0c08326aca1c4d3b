"""Helpers of the tests against real servers, importable by name: the tests run in importlib
mode, which puts no test folder on sys.path, and this file is imported before them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_NAME = "gavel_tests_served_cli"
if _NAME not in sys.modules:
    _spec = importlib.util.spec_from_file_location(_NAME, Path(__file__).with_name("served_cli.py"))
    _module = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
    sys.modules[_NAME] = _module
    _spec.loader.exec_module(_module)  # type: ignore[union-attr]
