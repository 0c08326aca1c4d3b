"""The batch tests' loopback server and the command line as a process that can be killed."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("openai", reason="batch mode needs the api extra (openai)")


def load_batch_server() -> ModuleType:
    """``batch_server.py`` (the tests run in importlib mode: no sys.path)."""
    name = "gavel_tests_batch_server"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, Path(__file__).parent / "batch_server.py"
        )
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules[name] = module
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    return sys.modules[name]


@pytest.fixture
def batch_fake() -> ModuleType:
    return load_batch_server()


@pytest.fixture
def batch_server(batch_fake):
    with batch_fake.FakeBatchServer() as running:
        yield running


class Started:
    """A ``gavel`` process running in the background."""

    def __init__(self, *args):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gavel", *map(str, args)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def kill_when(self, condition, timeout: float = 60.0) -> None:
        """SIGKILL the process as soon as ``condition()`` holds (it must still be running)."""
        deadline = time.monotonic() + timeout
        while not condition():
            if self.process.poll() is not None:
                raise AssertionError(f"ended before the kill: {self.process.communicate()}")
            if time.monotonic() > deadline:
                self.process.kill()
                raise AssertionError("the condition never held")
            time.sleep(0.02)
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.communicate(timeout=30)
        assert self.process.returncode == -signal.SIGKILL


@pytest.fixture
def start():
    started: list[Started] = []

    def run(*args) -> Started:
        started.append(Started(*args))
        return started[-1]

    yield run
    for each in started:
        if each.process.poll() is None:
            each.process.kill()
            each.process.communicate()
