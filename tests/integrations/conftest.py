"""Small data sets of all three benchmarks with saved answers, shared by the integration tests.

The answers are the built-in scene model's, with every third one spoiled (a flipped verdict,
an answer that says nothing, a wrong yes/no), so that the metrics the tests compare are not
all 100 and every outcome is exercised.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from gavel.api.tasks import MessageBuilder, TaskOptions, load_requests
from gavel.cli.main import main

#: gavel synth's size for each benchmark (VideoHallucer: pairs, so twice as many questions).
SIZES = {"gavel": 9, "detailverify": 6, "videohallucer": 3}


@dataclass(frozen=True)
class Saved:
    """One benchmark's data, its saved answers (a predictions file) and the answer to each
    message (:func:`message_key`: VideoHallucer asks some questions of two videos)."""

    benchmark: str
    data: Path
    predictions: Path
    by_message: dict[str, str]

    def answer(self, prompt: str, images: list[str], default: str | None = None) -> str:
        """The saved answer to this message; ``default`` for a message not saved (else a
        KeyError)."""
        key = message_key(prompt, images)
        return self.by_message[key] if default is None else self.by_message.get(key, default)

    @property
    def by_prompt(self) -> dict[str, str]:
        """An answer for each prompt (the first, where two messages share one)."""
        answers: dict[str, str] = {}
        for key, answer in self.by_message.items():
            answers.setdefault(key.rsplit("\n", 1)[0], answer)
        return answers


def message_key(prompt: str, images: list[str]) -> str:
    """A chat message told apart by its prompt and its first image (a data URL)."""
    first = images[0] if images else ""
    return prompt + "\n" + hashlib.sha256(first.encode()).hexdigest()


def run_gavel(*args: object) -> None:
    try:
        main([str(a) for a in args])
    except SystemExit as done:
        assert not done.code, f"gavel {' '.join(map(str, args))} exited with {done.code}"


def _spoil(benchmark: str, response: str, index: int) -> str:
    if index % 3:
        return response
    if benchmark == "gavel":
        flipped = json.loads(response)
        flipped["hallucination"] = not flipped["hallucination"]
        return json.dumps(flipped) if index % 2 else "I am not sure what the image shows."
    if benchmark == "detailverify":
        return "The description looks fine to me."
    if index % 2 == 0:
        return "I cannot say from these frames."
    return "No." if response.startswith("Yes") else "Yes, definitely."


@pytest.fixture(scope="session")
def saved(tmp_path_factory) -> dict[str, Saved]:
    root = tmp_path_factory.mktemp("integration-data")
    sets = {}
    for benchmark, n in SIZES.items():
        folder = root / benchmark
        run_gavel("synth", "--benchmark", benchmark, "--n", n, "--seed", 3, "--out", folder)
        data = {
            "gavel": folder / "gavel.jsonl",
            "detailverify": folder / "real_test.jsonl",
            "videohallucer": folder,
        }[benchmark]
        scene = root / f"{benchmark}.scene.jsonl"
        run_gavel("generate", "--benchmark", benchmark, "--data", data, "--model", "scene",
                  "--out", scene, "--no-progress")  # fmt: skip
        lines = [json.loads(line) for line in scene.read_text().splitlines()]
        for index, line in enumerate(lines):
            line["response"] = _spoil(benchmark, line["response"], index)
            line.pop("latency_s", None)
        predictions = root / f"{benchmark}.answers.jsonl"
        predictions.write_text("".join(json.dumps(line) + "\n" for line in lines))
        answers = {line["id"]: line["response"] for line in lines}
        builder = MessageBuilder()
        by_message = {}
        for request in load_requests(benchmark, data, TaskOptions()):
            parts, _ = builder.content(request)
            urls = [part["image_url"]["url"] for part in parts if part["type"] == "image_url"]
            by_message[message_key(request.prompt, urls)] = answers[request.sample_id]
        assert len(by_message) == len(lines), "messages must tell the samples apart"
        sets[benchmark] = Saved(benchmark, data, predictions, by_message)
    return sets


def flatten(tree: dict, prefix: str = "") -> dict[str, float]:
    """The numbers of a results.json section under dotted names (written apart from gavel's
    own flattening, so the comparison does not check that code against itself)."""
    flat: dict[str, float] = {}
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten(value, name + "."))
        elif isinstance(value, int | float) and value == value:  # bools count as 0 or 1
            flat[name] = float(value)
    return flat


def gavel_score(
    benchmark: str, data: Path, predictions: Path, out: Path, *flags: object
) -> dict[str, float]:
    """``gavel score`` on a predictions file (or log), with more ``flags`` (``--limit 3``): its
    metrics and counts, flattened, and how many of how many samples a selection scored."""
    run_gavel("score", "--benchmark", benchmark, "--data", data, "--predictions", predictions,
              "--out", out, "--bootstrap", 0, *flags)  # fmt: skip
    result = json.loads(out.read_text())
    scored = {**flatten(result["metrics"]), **flatten(result["counts"], "counts.")}
    selection = result["manifest"]["settings"].get("selection")
    if selection:
        scored |= {"selection.chosen": selection["chosen"], "selection.of": selection["of"]}
    return scored


@pytest.fixture
def scored_by_gavel():
    """:func:`gavel_score`, for the test modules (importlib mode: they cannot import this)."""
    return gavel_score


@pytest.fixture
def gavel_parquet(saved, gavel_main, offline_hub, tmp_path) -> tuple[Path, str]:
    """The saved GAVEL data as a Parquet folder (``gavel data convert``) and as the Hub
    dataset ``hf:gavel-eval/synth`` in a Hugging Face cache made here (tests/sources' fake
    cache, offline), with a fresh gavel data cache."""
    repo = tmp_path / "repo"
    run_gavel("data", "convert", saved["gavel"].data, repo)
    offline_hub.add("gavel-eval/synth", repo, "b" * 40)
    return repo, "hf:gavel-eval/synth"


@pytest.fixture
def videohallucer_hub(saved, offline_hub, tmp_path) -> tuple[Path, str]:
    """The saved VideoHallucer data as Parquet rows of pairs, videos embedded, and as the Hub
    dataset ``hf:gavel-eval/videohallucer-synth`` in a Hugging Face cache made here."""
    repo = tmp_path / "vh-repo"
    _sources().videohallucer_parquet(
        saved["videohallucer"].data, repo / "data" / "test-00000-of-00001.parquet"
    )
    offline_hub.add("gavel-eval/videohallucer-synth", repo, "c" * 40)
    return repo, "hf:gavel-eval/videohallucer-synth"


def _sources():
    """tests/sources' conftest (its Hugging Face cache builder and Parquet writers)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "gavel_tests_sources_conftest", Path(__file__).parents[1] / "sources" / "conftest.py"
    )
    sources = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(sources)  # type: ignore[union-attr]
    return sources


@pytest.fixture
def offline_hub(tmp_path, monkeypatch):
    """An empty Hugging Face cache made here (tests/sources' ``HubCache``), offline, and a
    fresh gavel data cache."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("GAVEL_CACHE_DIR", str(tmp_path / "gavel-cache"))
    return _sources().HubCache(tmp_path / "hf-cache")
