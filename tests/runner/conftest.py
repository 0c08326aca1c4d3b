"""Fixtures for the runner tests: real OpenAI-compatible servers on 127.0.0.1, a secret key."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest


def load_fake_server() -> ModuleType:
    """``openai_server.py`` beside this file (the tests run in importlib mode: no sys.path)."""
    name = "gavel_tests_openai_server"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, Path(__file__).with_name("openai_server.py")
        )
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules[name] = module
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    return sys.modules[name]


@pytest.fixture
def fake() -> ModuleType:
    """The server module: ``fake.Fault``, ``fake.faults_by_marker``, ``fake.FakeOpenAIServer``."""
    return load_fake_server()


@pytest.fixture
def server(fake):
    with fake.FakeOpenAIServer() as running:
        yield running


@pytest.fixture
def second_server(fake):
    with fake.FakeOpenAIServer() as running:
        yield running


@pytest.fixture
def api_key(monkeypatch) -> str:
    """A secret in ``GAVEL_TEST_KEY``; tests check it never leaves the Authorization header."""
    key = "sk-test-5f0c9a7e1b2d4c3a8e6f"
    monkeypatch.setenv("GAVEL_TEST_KEY", key)
    return key
