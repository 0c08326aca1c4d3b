"""``gavel export lmms-eval``: the exported tasks loaded by lmms-eval itself.

lmms-eval is installed by the test (from the package index, ``--no-deps``, into a folder of
pytest's cache) with only the few libraries it imports that this environment lacks, so nothing
installed here changes. Two checks per benchmark, each against ``gavel score``:

- the task's own ``process_results`` and aggregations, called by lmms-eval's task object on the
  saved answers;
- a whole ``lmms-eval`` run offline: its ``openai`` model asks a real loopback server, which
  answers with the saved answers; lmms-eval's metrics are compared with ``gavel score`` on the
  answers its sample log holds.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

LMMS_EVAL = "lmms-eval==0.7.3"
#: (module, requirement) for what lmms-eval imports to load a task, score it and print its
#: table; a requirement is installed only when its module is missing here.
NEEDED = [
    ("loguru", "loguru"), ("pytz", "pytz"), ("pandas", "pandas"), ("datasets", "datasets"),
    ("multiprocess", "multiprocess"), ("dill", "dill"), ("xxhash", "xxhash"),
    ("pyarrow", "pyarrow"), ("tenacity", "tenacity"), ("evaluate", "evaluate"),
    ("sacrebleu", "sacrebleu"), ("portalocker", "portalocker"), ("tabulate", "tabulate"),
    ("colorama", "colorama"), ("lxml", "lxml"), ("pytablewriter", "pytablewriter"),
    ("dataproperty", "dataproperty"), ("mbstrdecoder", "mbstrdecoder"),
    ("pathvalidate", "pathvalidate"), ("tabledata", "tabledata"), ("tcolorpy", "tcolorpy"),
    ("typepy", "typepy"), ("chardet", "chardet"), ("dotenv", "python-dotenv"),
    ("accelerate", "accelerate"), ("openai", "openai"), ("yaml", "pyyaml"),
    # lmms-eval patches filelock internals that filelock 4 no longer has.
    ("filelock._api", "filelock<4"),
]  # fmt: skip
BENCHMARKS = ("gavel", "detailverify", "videohallucer")
HEADLINE = {
    "gavel": {"verification_accuracy": "verification.accuracy", "verification_f1":
              "verification.f1", "grounding_A_0_3": "grounding.A@0.3", "grounding_A_0_5":
              "grounding.A@0.5", "grounding_A_0_7": "grounding.A@0.7"},
    "detailverify": {"token_precision": "token.precision", "token_recall": "token.recall",
                     "token_f1": "token.f1", "sentence_f1": "sentence.f1",
                     "response_f1": "response.f1"},
    "videohallucer": {"overall": "overall", "overall_basic": "overall_basic",
                      "overall_hallucination": "overall_hallucination"},
}  # fmt: skip
SRC = Path(__file__).resolve().parents[2] / "src"


def _missing_modules(modules: list[str]) -> set[str]:
    """The modules a fresh interpreter (as the lmms-eval subprocesses are) cannot find. Asked
    there, not here: a library imported earlier in this process may have put its own bundled
    copies on ``sys.path`` (Ray adds ``ray/thirdparty_files``, with colorama)."""
    probe = (
        "import importlib.util, sys\n"
        "for name in sys.argv[1:]:\n"
        "    try:\n"
        "        found = importlib.util.find_spec(name) is not None\n"
        "    except ModuleNotFoundError:\n"
        "        found = False\n"
        "    if not found:\n"
        "        print(name)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-c", probe, *modules], capture_output=True, text=True, env=env,
        timeout=120, check=True,
    )  # fmt: skip
    return set(done.stdout.split())


@pytest.fixture(scope="session")
def lmms_path(request, tmp_path_factory) -> Path:
    """A folder holding lmms-eval and what it needs beyond this environment (kept in pytest's
    cache between runs when the cache is on)."""
    cache = getattr(request.config, "cache", None)  # absent with -p no:cacheprovider
    if cache is not None:
        folder = Path(cache.mkdir("lmms-eval-0.7.3"))
    else:
        folder = tmp_path_factory.mktemp("lmms-eval-0.7.3")
    installed = folder / "site"
    if not (installed / "lmms_eval").is_dir():
        staging = Path(tempfile.mkdtemp(prefix="install-", dir=folder))
        missing = _missing_modules([module for module, _ in NEEDED])
        wanted = [LMMS_EVAL] + [req for module, req in NEEDED if module in missing]
        done = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target",
             str(staging), *wanted],
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        if done.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            pytest.skip(f"lmms-eval could not be installed: {done.stderr.strip()[-500:]}")
        shutil.rmtree(installed, ignore_errors=True)
        staging.rename(installed)  # only a complete install is ever found there
    return installed


def _env(lmms_path: Path, tmp_path: Path, **extra: str) -> dict[str, str]:
    return dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(lmms_path), str(SRC)]),
        HF_DATASETS_OFFLINE="1",
        HF_HUB_OFFLINE="1",
        HF_HOME=str(tmp_path / "hf"),
        HF_DATASETS_CACHE=str(tmp_path / "hf-datasets"),
        **extra,
    )


#: Loads the exported tasks with lmms-eval and runs their processing and aggregation functions
#: on saved answers: argv = folder, then task=predictions file pairs; prints the metrics as JSON.
AGGREGATE = """
import json, sys
from lmms_eval.tasks import TaskManager, get_task_dict
folder, *pairs = sys.argv[1:]
manager = TaskManager(include_path=folder, include_defaults=False)
found = {}
for name, answers in (pair.split("=", 1) for pair in pairs):
    task = get_task_dict([name], manager)[name]
    said = {line["id"]: line["response"] for line in map(json.loads, open(answers))}
    items = {}
    for doc in task.test_docs():
        assert task.doc_to_visual(doc), doc["id"]
        for metric, item in task.process_results(doc, [said[doc["id"]]]).items():
            items.setdefault(metric, []).append(item)
    found[name] = {m: task.aggregation()[m](given) for m, given in items.items()}
print(json.dumps(found))
"""


@pytest.fixture
def exported(saved, gavel_main, tmp_path) -> Path:
    """The three benchmarks exported into one folder, as a user would for one lmms-eval run."""
    out = tmp_path / "tasks"
    for answers in saved.values():
        code, text = gavel_main("export", "lmms-eval", out, "--benchmark", answers.benchmark,
                                "--data", answers.data)  # fmt: skip
        assert code == 0, text
    return out


def test_task_functions_score_as_gavel_score(saved, lmms_path, exported, scored_by_gavel, tmp_path):
    pairs = [f"{name}={saved[name].predictions}" for name in BENCHMARKS]
    done = subprocess.run(
        [sys.executable, "-c", AGGREGATE, str(exported), *pairs],
        capture_output=True, text=True, timeout=600, env=_env(lmms_path, tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    for benchmark in BENCHMARKS:
        answers = saved[benchmark]
        expected = scored_by_gavel(
            benchmark, answers.data, answers.predictions, tmp_path / f"{benchmark}.json"
        )
        got = found[benchmark]
        assert set(got) == set(HEADLINE[benchmark])
        for metric, name in HEADLINE[benchmark].items():
            assert got[metric] == pytest.approx(expected[name], abs=1e-9), (benchmark, metric)


def _lmms_eval_run(saved, lmms_path, exported, server, fake, tmp_path, *flags: str) -> dict:
    """``lmms-eval --model openai`` on the three exported tasks against the loopback server,
    which answers with the saved answers; the run's results by task."""
    by_prompt = {p: a for answers in saved.values() for p, a in answers.by_prompt.items()}
    server.reply = lambda body, number: by_prompt[fake.prompt_text(body)]
    env = _env(lmms_path, tmp_path, OPENAI_API_KEY="sk-test-loopback", OPENAI_API_BASE=server.url)
    done = subprocess.run(
        [sys.executable, "-m", "lmms_eval", "--model", "openai", "--model_args",
         "model=test-model,num_concurrent=1", "--include_path", str(exported),
         "--tasks", ",".join(BENCHMARKS), "--output_path", str(tmp_path / "out"),
         *flags, "--verbosity", "WARNING"],
        capture_output=True, text=True, timeout=600, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    (results_file,) = (tmp_path / "out").rglob("*_results.json")
    return json.loads(results_file.read_text())["results"]


def test_full_offline_lmms_eval_run(
    saved, lmms_path, exported, scored_by_gavel, server, fake, tmp_path
):
    # lmms-eval re-encodes the images, so the server answers by prompt alone (a question
    # VideoHallucer asks of two videos gets one answer): what is compared is lmms-eval's
    # numbers with gavel score on the answers lmms-eval logged.
    results = _lmms_eval_run(saved, lmms_path, exported, server, fake, tmp_path, "--log_samples")
    for benchmark in BENCHMARKS:
        answers = saved[benchmark]
        (samples_file,) = (tmp_path / "out").rglob(f"*_samples_{benchmark}.jsonl")
        logged = [json.loads(line) for line in samples_file.read_text().splitlines()]
        assert len(logged) == len(answers.by_message)
        first = next(iter(HEADLINE[benchmark]))  # each metric's item is (id, answer)
        predictions = tmp_path / f"{benchmark}.lmms.jsonl"
        predictions.write_text(
            "".join(json.dumps({**s[first], "box_format": "pixel"}) + "\n" for s in logged)
        )
        expected = scored_by_gavel(
            benchmark, answers.data, predictions, tmp_path / f"{benchmark}.json"
        )
        for metric, name in HEADLINE[benchmark].items():
            got = results[benchmark][f"{metric},none"]
            assert got == pytest.approx(expected[name], abs=1e-9), (benchmark, metric)
        # gavel score reads lmms-eval's sample log itself, with the export's box convention.
        assert {s[first]["box_format"] for s in logged} == {"pixel"}
        from_log = scored_by_gavel(
            benchmark, answers.data, samples_file, tmp_path / f"{benchmark}.log.json"
        )
        assert from_log == pytest.approx(expected, abs=1e-9)
    assert server.hits == sum(len(answers.by_message) for answers in saved.values())


def _exported_task(folder: Path):
    """The ``task`` object of an exported ``utils.py``, loaded as lmms-eval loads it."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"utils_{folder.name}", folder / "utils.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.task


def test_video_frames_are_the_pixels_gavel_generate_sends(
    saved, exported, server, gavel_main, tmp_path, monkeypatch
):
    """lmms-eval gets VideoHallucer's frames as gavel's JPEG encoding of them decodes, so its
    lossless re-encoding sends the pixels ``gavel generate`` sends, frame by frame."""
    import base64
    import io

    import numpy as np
    from PIL import Image

    answers = saved["videohallucer"]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-loopback")
    code, text = gavel_main("generate", "--benchmark", "videohallucer", "--data", answers.data,
                            "--model", "openai:gpt-4o", "--base-url", server.url, "--out",
                            tmp_path / "g.jsonl", "--no-progress", "--no-cache")  # fmt: skip
    assert code == 0, text
    sent = {}
    for _, body, _ in server.received:
        parts = body["messages"][0]["content"]
        prompt = next(part["text"] for part in parts if part["type"] == "text")
        urls = [part["image_url"]["url"] for part in parts if part["type"] == "image_url"]
        sent.setdefault(prompt, []).append(urls)
    task = _exported_task(exported / "videohallucer")
    docs = [json.loads(line) for line in (exported / "videohallucer" / "docs.jsonl").open()]
    compared = 0
    for doc in docs:
        frames = [np.asarray(frame) for frame in task.doc_to_visual(doc)]
        candidates = [
            [np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB"))
             for url in urls]
            for urls in sent[doc["prompt"]]
        ]  # fmt: skip
        assert any(
            len(c) == len(frames)
            and all(np.array_equal(a, b) for a, b in zip(c, frames, strict=True))
            for c in candidates
        ), doc["id"]
        compared += len(frames)
    assert compared >= 8 * len(docs)


def test_lmms_eval_limit_scores_the_samples_asked(
    saved, lmms_path, exported, scored_by_gavel, server, fake, tmp_path
):
    """``lmms-eval --limit 4`` asks the first 4 documents: each task scores those (as ``gavel
    score --limit 4``; VideoHallucer: 2 pairs), never the whole data with the rest missing."""
    results = _lmms_eval_run(saved, lmms_path, exported, server, fake, tmp_path, "--limit", "4")
    for benchmark in BENCHMARKS:
        answers = saved[benchmark]
        limit = 2 if benchmark == "videohallucer" else 4
        expected = scored_by_gavel(benchmark, answers.data, answers.predictions,
                                   tmp_path / f"{benchmark}.json", "--limit", limit)  # fmt: skip
        assert expected["selection.chosen"] == limit
        for metric, name in HEADLINE[benchmark].items():
            got = results[benchmark][f"{metric},none"]
            assert got == pytest.approx(expected[name], abs=1e-9), (benchmark, metric)
    assert server.hits == 3 * 4


def test_parquet_and_hub_data_export_as_the_jsonl(
    saved, lmms_path, scored_by_gavel, gavel_main, gavel_parquet, tmp_path
):
    """``--data`` takes a Parquet folder and ``hf:OWNER/NAME`` (a Hugging Face cache made here,
    offline): the exported tasks ask the prompts of the JSONL export and score as ``gavel
    score`` does."""
    answers = saved["gavel"]
    repo, hub = gavel_parquet
    expected = scored_by_gavel("gavel", answers.data, answers.predictions, tmp_path / "e.json")

    def prompts(folder: Path) -> list[tuple[str, str]]:
        lines = map(json.loads, (folder / "gavel" / "docs.jsonl").read_text().splitlines())
        return [(line["id"], line["prompt"]) for line in lines]

    code, text = gavel_main("export", "lmms-eval", tmp_path / "jsonl", "--data", answers.data)
    assert code == 0, text
    for name, data in {"parquet": repo, "hub": hub}.items():
        out = tmp_path / name
        code, text = gavel_main("export", "lmms-eval", out, "--data", data)
        assert code == 0, text
        assert prompts(out) == prompts(tmp_path / "jsonl")
        done = subprocess.run(
            [sys.executable, "-c", AGGREGATE, str(out), f"gavel={answers.predictions}"],
            capture_output=True, text=True, timeout=600, env=_env(lmms_path, tmp_path),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        got = json.loads(done.stdout.strip().splitlines()[-1])["gavel"]
        for metric, metric_name in HEADLINE["gavel"].items():
            assert got[metric] == pytest.approx(expected[metric_name], abs=1e-9), (name, metric)


def test_an_export_moved_with_its_data_or_alone_still_runs(
    saved, lmms_path, scored_by_gavel, gavel_main, tmp_path
):
    """The task reads its documents from its own folder and records every path both relative
    to it and absolute: a tree of data and export moved elsewhere (the old paths gone), and an
    export moved alone, both load with lmms-eval and score as ``gavel score``."""
    answers = saved["gavel"]
    tree = tmp_path / "tree"
    shutil.copytree(answers.data.parent, tree / "data")
    code, text = gavel_main("export", "lmms-eval", tree / "tasks", "--data",
                            tree / "data" / answers.data.name)  # fmt: skip
    assert code == 0, text
    expected = scored_by_gavel("gavel", answers.data, answers.predictions, tmp_path / "e.json")
    moved = tmp_path / "elsewhere" / "tree"
    moved.parent.mkdir()
    tree.rename(moved)  # data and export together; nothing is left at the old paths
    alone = tmp_path / "alone"
    shutil.copytree(answers.data.parent, tmp_path / "kept")
    code, text = gavel_main("export", "lmms-eval", tmp_path / "first", "--data",
                            tmp_path / "kept" / answers.data.name)  # fmt: skip
    assert code == 0, text
    (tmp_path / "first").rename(alone)  # the export alone; its data stays where it was
    for tasks in (moved / "tasks", alone):
        assert str(tmp_path / "tree") not in (tasks / "gavel" / "gavel.yaml").read_text()
        done = subprocess.run(
            [sys.executable, "-c", AGGREGATE, str(tasks), f"gavel={answers.predictions}"],
            capture_output=True, text=True, timeout=600, env=_env(lmms_path, tmp_path),
            cwd=tmp_path,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        got = json.loads(done.stdout.strip().splitlines()[-1])["gavel"]
        for metric, name in HEADLINE["gavel"].items():
            assert got[metric] == pytest.approx(expected[name], abs=1e-9), (tasks, metric)
