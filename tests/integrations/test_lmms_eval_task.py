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
#: The exported task of each benchmark (in the folder named like the benchmark).
TASK = {benchmark: f"gavel_{benchmark}" for benchmark in BENCHMARKS}
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
#: on saved answers: argv[1] = JSON [[folder, {task: predictions file}], ...], each folder by
#: its own task manager; prints the metrics by folder and task as JSON. Folders of one run
#: share task names and the module name ``utils``: each task object is checked to be the one
#: its own folder's ``utils.py`` made, so no module loaded earlier answers for another folder.
AGGREGATE = """
import json, sys
from pathlib import Path
from lmms_eval.tasks import TaskManager, get_task_dict
found = {}
for folder, answers_of in json.loads(sys.argv[1]):
    manager = TaskManager(include_path=folder, include_defaults=False)
    found[folder] = {}
    for name, answers in answers_of.items():
        task = get_task_dict([name], manager)[name]
        own = Path(folder, name.removeprefix("gavel_")).resolve()
        config = task.config
        for function in (config.doc_to_visual, config.doc_to_text, config.process_results):
            assert Path(function.__self__.folder).resolve() == own, (name, function, own)
        said = {line["id"]: line["response"] for line in map(json.loads, open(answers))}
        items = {}
        for doc in task.test_docs():
            assert task.doc_to_visual(doc), doc["id"]
            for metric, item in task.process_results(doc, [said[doc["id"]]]).items():
                items.setdefault(metric, []).append(item)
        found[folder][name] = {m: task.aggregation()[m](given) for m, given in items.items()}
print(json.dumps(found))
"""


def _aggregate(lmms_path: Path, tmp_path: Path, runs: dict[Path, dict[str, Path]],
               cwd: Path | None = None, **extra: str) -> dict[Path, dict[str, dict]]:  # fmt: skip
    """:data:`AGGREGATE` in one fresh lmms-eval process on ``runs`` (folder -> task ->
    predictions file), with :func:`_env` and ``extra``: the metrics by folder and task."""
    given = [[str(folder), {t: str(a) for t, a in tasks.items()}] for folder, tasks in runs.items()]
    done = subprocess.run(
        [sys.executable, "-c", AGGREGATE, json.dumps(given)],
        capture_output=True, text=True, timeout=600, env=_env(lmms_path, tmp_path, **extra),
        cwd=cwd,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    return {folder: found[str(folder)] for folder in runs}


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
    pairs = {TASK[name]: saved[name].predictions for name in BENCHMARKS}
    found = _aggregate(lmms_path, tmp_path, {exported: pairs})[exported]
    for benchmark in BENCHMARKS:
        answers = saved[benchmark]
        expected = scored_by_gavel(
            benchmark, answers.data, answers.predictions, tmp_path / f"{benchmark}.json"
        )
        got = found[TASK[benchmark]]
        assert set(got) == set(HEADLINE[benchmark])
        for metric, name in HEADLINE[benchmark].items():
            assert got[metric] == pytest.approx(expected[name], abs=1e-9), (benchmark, metric)


def _lmms_eval_run(
    saved, lmms_path, exported, server, fake, tmp_path, *flags: str,
    tasks: str = ",".join(TASK.values()), cwd: Path | None = None,
) -> dict:  # fmt: skip
    """``lmms-eval --model openai`` on the exported ``tasks`` (all three) against the loopback
    server, which answers with the saved answers, run in ``cwd``; the run's results by task."""
    by_prompt = {p: a for answers in saved.values() for p, a in answers.by_prompt.items()}
    server.reply = lambda body, number: by_prompt[fake.prompt_text(body)]
    env = _env(lmms_path, tmp_path, OPENAI_API_KEY="sk-test-loopback", OPENAI_API_BASE=server.url)
    include = "." if cwd == exported else str(exported)
    done = subprocess.run(
        [sys.executable, "-m", "lmms_eval", "--model", "openai", "--model_args",
         "model=test-model,num_concurrent=1", "--include_path", include,
         "--tasks", tasks, "--output_path", str(tmp_path / "out"),
         *flags, "--verbosity", "WARNING"],
        capture_output=True, text=True, timeout=600, env=env, cwd=cwd,
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
        (samples_file,) = (tmp_path / "out").rglob(f"*_samples_{TASK[benchmark]}.jsonl")
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
            got = results[TASK[benchmark]][f"{metric},none"]
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
            got = results[TASK[benchmark]][f"{metric},none"]
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
    outs = {name: tmp_path / name for name in ("parquet", "hub")}
    for name, data in {"parquet": repo, "hub": hub}.items():
        code, text = gavel_main("export", "lmms-eval", outs[name], "--data", data)
        assert code == 0, text
        assert prompts(outs[name]) == prompts(tmp_path / "jsonl")
    # Both exports in one lmms-eval process, each task from its own folder (see AGGREGATE).
    found = _aggregate(
        lmms_path, tmp_path, {out: {"gavel_gavel": answers.predictions} for out in outs.values()}
    )
    for name, out in outs.items():
        got = found[out]["gavel_gavel"]
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
        assert str(tmp_path / "tree") not in (tasks / "gavel" / "gavel_gavel.yaml").read_text()
    # Both in one lmms-eval process, each task from its own folder (see AGGREGATE).
    found = _aggregate(lmms_path, tmp_path, {moved / "tasks": {"gavel_gavel": answers.predictions},
                                             alone: {"gavel_gavel": answers.predictions}},
                       cwd=tmp_path)  # fmt: skip
    for tasks in (moved / "tasks", alone):
        got = found[tasks]["gavel_gavel"]
        for metric, name in HEADLINE["gavel"].items():
            assert got[metric] == pytest.approx(expected[name], abs=1e-9), (tasks, metric)


def test_a_lone_task_name_runs_from_inside_the_export_folder(
    saved, lmms_path, exported, scored_by_gavel, server, fake, tmp_path
):
    """lmms-eval reads a lone ``--tasks NAME`` as a folder of YAML files when ``./NAME/``
    exists; the export's folders are named like the benchmarks and its tasks
    ``gavel_BENCHMARK``, so ``--include_path . --tasks gavel_gavel`` run from inside the export
    folder (which holds ``gavel/``) runs the task."""
    assert (exported / "gavel").is_dir() and not (exported / TASK["gavel"]).exists()
    results = _lmms_eval_run(saved, lmms_path, exported, server, fake, tmp_path, "--limit", "2",
                             tasks=TASK["gavel"], cwd=exported)  # fmt: skip
    answers = saved["gavel"]
    expected = scored_by_gavel("gavel", answers.data, answers.predictions, tmp_path / "e.json",
                               "--limit", 2)  # fmt: skip
    for metric, name in HEADLINE["gavel"].items():
        assert results[TASK["gavel"]][f"{metric},none"] == pytest.approx(expected[name], abs=1e-9)
    assert server.hits == 2


#: Loads the exported GAVEL task for each --model name given, as lmms-eval does (its task
#: manager told the model), and prints what lmms-eval's task object makes of each document:
#: the prompt and the item process_results keeps.
PER_MODEL = """
import json, sys
from lmms_eval.tasks import TaskManager, get_task_dict
from gavel.integrations import lmms_eval_task
folder, name, *models = sys.argv[1:]
found = {}
for model in models:
    lmms_eval_task._SHARED.clear()
    manager = TaskManager(include_path=folder, include_defaults=False, model_name=model)
    task = get_task_dict([name], manager)[name]
    found[model] = {
        doc["id"]: [task.doc_to_text(doc), task.process_results(doc, ["{}"])["grounding_A_0_5"]]
        for doc in task.test_docs()
    }
    # In a fresh process (the prompt from lmms-eval's request cache), the model's images alone.
    lmms_eval_task._SHARED.clear()
    task = get_task_dict([name], TaskManager(include_path=folder, include_defaults=False,
                                             model_name=model))[name]
    for doc in task.test_docs():
        assert task.doc_to_visual(doc)
        kept = task.process_results(doc, ["{}"])["grounding_A_0_5"]
        assert kept == found[model][doc["id"]][1], (model, doc["id"])
print(json.dumps(found))
"""


def _defaults(source: Path, cls: str) -> dict[str, object]:
    """The default values of a class's ``__init__`` parameters, read from its source (the
    module imports torch, which these tests do not install)."""
    import ast

    tree = ast.parse(source.read_text())
    (init,) = [
        node
        for top in tree.body
        if isinstance(top, ast.ClassDef) and top.name == cls
        for node in top.body
        if isinstance(node, ast.FunctionDef) and node.name == "__init__"
    ]
    args = init.args.args[-len(init.args.defaults) :]
    return {
        arg.arg: eval(compile(ast.Expression(value), str(source), "eval"), {})
        for arg, value in zip(args, init.args.defaults, strict=True)
    }


def test_lmms_eval_hands_each_model_its_box_convention(saved, lmms_path, exported, tmp_path):
    """lmms-eval resolves the YAML's ``lmms_eval_specific_kwargs`` for its ``--model``: each
    model is asked gavel's prompt in its preset's convention and its answers are kept with
    it; for ``qwen2_5_vl`` with the size of the image resized within the window lmms-eval's
    model uses (its ``min_pixels``/``max_pixels`` defaults, read from lmms-eval's source)."""
    import ast

    from PIL import Image

    from gavel.api.tasks import TaskOptions, load_requests
    from gavel.integrations.lmms_eval_task import MODEL_PRESETS, MODEL_WINDOWS
    from gavel.parsing.conventions import qwen_smart_resize

    models = lmms_path / "lmms_eval" / "models"
    qwen = _defaults(models / "simple" / "qwen2_5_vl.py", "Qwen2_5_VL")
    assert MODEL_WINDOWS["qwen2_5_vl"] == (qwen["min_pixels"], qwen["max_pixels"])
    registered = set()
    for node in ast.parse((models / "__init__.py").read_text()).body:
        name = getattr(node.targets[0], "id", "") if isinstance(node, ast.Assign) else ""
        if name.startswith("AVAILABLE_") and isinstance(node.value, ast.Dict):
            registered |= set(ast.literal_eval(node.value))
    assert set(MODEL_PRESETS) <= registered  # each is a --model name lmms-eval knows

    done = subprocess.run(
        [sys.executable, "-c", PER_MODEL, str(exported), TASK["gavel"], "openai", "qwen2_5_vl",
         "qwen3_vl"],
        capture_output=True, text=True, timeout=600, env=_env(lmms_path, tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    data = saved["gavel"].data
    for model, box_format in {"openai": "pixel", "qwen2_5_vl": "resized-pixel",
                              "qwen3_vl": "rel1000"}.items():  # fmt: skip
        requests = load_requests("gavel", data, TaskOptions(box_format=box_format))
        assert {r.sample_id: r.prompt for r in requests} == {
            sample_id: prompt for sample_id, (prompt, _) in found[model].items()
        }, model
        for request in requests:
            item = found[model][request.sample_id][1]
            assert item["box_format"] == box_format
            if model == "qwen2_5_vl":
                with Image.open(request.images[0]) as image:
                    window = dict(min_pixels=qwen["min_pixels"], max_pixels=qwen["max_pixels"])
                    assert item["input_size"] == list(qwen_smart_resize(*image.size, **window))
            else:
                assert "input_size" not in item


def test_a_hub_export_runs_with_the_dataset_in_another_cache(
    saved, lmms_path, scored_by_gavel, gavel_main, gavel_parquet, tmp_path
):
    """An export of ``hf:`` data names the dataset at the commit it read and each image by its
    place in the dataset, no path of this machine: moved, with the dataset in another Hugging
    Face cache and an empty gavel data cache (as on another machine), it loads with lmms-eval
    and scores as ``gavel score``."""
    answers = saved["gavel"]
    _, hub = gavel_parquet
    expected = scored_by_gavel("gavel", answers.data, answers.predictions, tmp_path / "e.json")
    code, text = gavel_main("export", "lmms-eval", tmp_path / "first", "--data", hub)
    assert code == 0, text
    for path in (tmp_path / "first" / "gavel").iterdir():
        assert str(tmp_path) not in path.read_text(), path.name
    assert f"{hub}@{'b' * 40}" in (tmp_path / "first" / "gavel" / "utils.py").read_text()
    moved = tmp_path / "elsewhere" / "tasks"
    moved.parent.mkdir()
    (tmp_path / "first").rename(moved)
    (tmp_path / "hf-cache").rename(tmp_path / "other-hf-cache")
    shutil.rmtree(tmp_path / "gavel-cache")
    found = _aggregate(lmms_path, tmp_path, {moved: {"gavel_gavel": answers.predictions}},
                       cwd=tmp_path, HF_HUB_CACHE=str(tmp_path / "other-hf-cache"),
                       GAVEL_CACHE_DIR=str(tmp_path / "other-gavel-cache"))  # fmt: skip
    got = found[moved]["gavel_gavel"]
    for metric, name in HEADLINE["gavel"].items():
        assert got[metric] == pytest.approx(expected[name], abs=1e-9), metric
    assert (tmp_path / "other-gavel-cache").is_dir()  # read through gavel's data sources again


def _prepared_by_datasets(repo: Path, name: str, cache: Path) -> None:
    """``datasets``' own prepared copy of the Hub dataset ``name`` made from ``repo`` (its
    files), where lmms-eval's first run of a task naming it leaves it: offline,
    ``load_dataset("OWNER/NAME")`` reads only this copy (``<cache>/OWNER___NAME/CONFIG/...``),
    never the Hugging Face cache's snapshots. Built here by ``datasets`` from the same files
    (a folder named like the dataset) and placed under the Hub name."""
    import datasets

    owner, short = name.split("/")
    named = cache.parent / "named" / short
    named.parent.mkdir(parents=True, exist_ok=True)
    named.symlink_to(repo, target_is_directory=True)
    datasets.load_dataset_builder(str(named), cache_dir=str(cache)).download_and_prepare()
    (cache / short).rename(cache / f"{owner}___{short}")


def _aggregates_as_gavel_score(answers, out: Path, lmms_path: Path, scored_by_gavel,
                               tmp_path: Path) -> None:  # fmt: skip
    """lmms-eval's task object of ``answers``' benchmark exported into ``out``, run on the
    saved answers (:data:`AGGREGATE`): each metric equals ``gavel score``'s."""
    task = TASK[answers.benchmark]
    got = _aggregate(lmms_path, tmp_path, {out: {task: answers.predictions}})[out][task]
    expected = scored_by_gavel(answers.benchmark, answers.data, answers.predictions,
                               tmp_path / "e.json")  # fmt: skip
    for metric, name in HEADLINE[answers.benchmark].items():
        assert got[metric] == pytest.approx(expected[name], abs=1e-9), metric


@pytest.fixture
def hub_named(saved, gavel_main, gavel_parquet, tmp_path) -> Path:
    """The GAVEL task exported from ``hf:gavel-eval/synth`` with ``--hub-dataset``, and the
    dataset prepared in ``datasets``' cache of the lmms-eval runs (:func:`_env`)."""
    repo, hub = gavel_parquet
    _prepared_by_datasets(repo, hub.removeprefix("hf:"), tmp_path / "hf-datasets")
    code, text = gavel_main("export", "lmms-eval", tmp_path / "hub-tasks", "--data", hub,
                            "--hub-dataset")  # fmt: skip
    assert code == 0, text
    return tmp_path / "hub-tasks"


def test_a_hub_named_export_loads_its_rows_as_lmms_eval_tasks_do(
    saved, lmms_path, hub_named, scored_by_gavel, server, fake, gavel_main, gavel_parquet,
    tmp_path,
):  # fmt: skip
    """``--hub-dataset`` names the dataset as lmms-eval's own tasks do (``dataset_path:
    OWNER/NAME``, the commit read as ``dataset_kwargs.revision``, the split): a whole
    lmms-eval run offline loads its rows with ``datasets``, sends the rows' images and gavel's
    prompts, and its metrics equal ``gavel score`` on the answers it logged; no path of this
    machine is written. A Parquet folder exported as the repository it is pushed to names it
    the same way."""
    task = hub_named / "gavel"
    yaml_text = (task / "gavel_gavel.yaml").read_text()
    assert "dataset_path: gavel-eval/synth\ndataset_name: default\n" in yaml_text
    assert f"dataset_kwargs:\n  revision: {'b' * 40}\ntest_split: test\n" in yaml_text
    assert "process_docs: !function utils.process_docs" in yaml_text
    assert sorted(p.name for p in task.iterdir()) == [
        ".gavel-export.json",
        "gavel_gavel.yaml",
        "utils.py",
    ]
    for path in task.iterdir():
        assert str(tmp_path) not in path.read_text(), path.name
    results = _lmms_eval_run(saved, lmms_path, hub_named, server, fake, tmp_path,
                             "--log_samples", tasks=TASK["gavel"])  # fmt: skip
    answers = saved["gavel"]
    (samples_file,) = (tmp_path / "out").rglob(f"*_samples_{TASK['gavel']}.jsonl")
    logged = [json.loads(line) for line in samples_file.read_text().splitlines()]
    assert len(logged) == len(answers.by_message) == server.hits
    expected = scored_by_gavel("gavel", answers.data, samples_file, tmp_path / "e.json")
    for metric, name in HEADLINE["gavel"].items():
        got = results[TASK["gavel"]][f"{metric},none"]
        assert got == pytest.approx(expected[name], abs=1e-9), metric
    # The pushed Parquet folder, named as its repository: the same dataset lines.
    repo, _ = gavel_parquet
    code, text = gavel_main("export", "lmms-eval", tmp_path / "pushed", "--data", repo,
                            "--hub-dataset", "gavel-eval/synth")  # fmt: skip
    assert code == 0, text
    pushed = (tmp_path / "pushed" / "gavel" / "gavel_gavel.yaml").read_text()
    assert "dataset_path: gavel-eval/synth\ndataset_name: default\ntest_split: test\n" in pushed


def test_a_hub_named_task_reads_the_rows_images_and_refuses_another_commit(
    saved, hub_named, gavel_parquet, tmp_path
):
    """The task's functions on the rows ``datasets`` gives: each image (decoded, or a struct
    of bytes) is the pixels of gavel's own copy; rows that are not the recorded commit's (a
    stale prepared copy) are refused, naming the dataset."""
    import datasets
    import numpy as np
    from PIL import Image

    from gavel.errors import GavelError

    rows = datasets.load_dataset(str(tmp_path / "named" / "synth"), split="test")
    task = _exported_task(hub_named / "gavel")
    docs = task.process_docs(rows)
    assert len(docs) == len(saved["gavel"].by_message)
    raw = rows.cast_column("image", datasets.Image(decode=False))
    assert isinstance(raw[0]["image"], dict) and raw[0]["image"]["bytes"]
    for doc, undecoded in zip(docs, task.process_docs(raw), strict=True):
        with Image.open(task._requests[doc["id"]].images[0]) as image:
            own = np.asarray(image.convert("RGB"))
        for got in (task.doc_to_visual(doc), task.doc_to_visual(undecoded)):
            assert len(got) == 1 and np.array_equal(np.asarray(got[0]), own), doc["id"]
        assert task.doc_to_text(doc) == task._requests[doc["id"]].prompt
    with pytest.raises(GavelError, match=r"gavel-eval/synth.*another commit"):
        task.process_docs(rows.select(range(len(rows) - 1)))


def test_videohallucer_hub_rows_are_pairs_asked_as_two_questions(
    saved, lmms_path, exported, scored_by_gavel, gavel_main, videohallucer_hub, tmp_path
):
    """A VideoHallucer Hub dataset of pair rows (videos embedded, as gavel's Parquet layout
    reads them) exported with ``--hub-dataset``: lmms-eval's task object makes two documents
    of each row, with gavel's question ids, gives the model the frames ``gavel generate``
    sends (those of the documents export), and scores as ``gavel score``."""
    import numpy as np

    answers = saved["videohallucer"]
    repo, hub = videohallucer_hub
    _prepared_by_datasets(repo, hub.removeprefix("hf:"), tmp_path / "hf-datasets")
    out = tmp_path / "vh-hub"
    code, text = gavel_main("export", "lmms-eval", out, "--benchmark", "videohallucer",
                            "--data", hub, "--hub-dataset")  # fmt: skip
    assert code == 0, text
    _aggregates_as_gavel_score(answers, out, lmms_path, scored_by_gavel, tmp_path)
    import datasets

    rows = datasets.load_dataset(str(tmp_path / "named" / "videohallucer-synth"), split="test")
    docs = _exported_task(out / "videohallucer").process_docs(rows)
    assert len(docs) == 2 * len(rows) == len(answers.by_message)
    by_id = {json.loads(line)["id"]: json.loads(line) for line in
             (exported / "videohallucer" / "docs.jsonl").read_text().splitlines()}  # fmt: skip
    assert sorted(doc["id"] for doc in docs) == sorted(by_id)
    hub_task = _exported_task(out / "videohallucer")
    local_task = _exported_task(exported / "videohallucer")
    for doc in docs.select(range(3)):
        frames = [np.asarray(f) for f in hub_task.doc_to_visual(doc)]
        own = [np.asarray(f) for f in local_task.doc_to_visual(by_id[doc["id"]])]
        assert len(frames) == len(own) >= 8
        assert all(np.array_equal(a, b) for a, b in zip(frames, own, strict=True)), doc["id"]


def test_detailverify_hub_rows_with_images_as_repository_files(
    saved, lmms_path, scored_by_gavel, gavel_main, offline_hub, tmp_path
):
    """DetailVerifyBench as published: JSON Lines rows whose images are files of the repository
    (no bytes in the row). Exported with ``--hub-dataset``, lmms-eval's task object ids each
    row by its file name, gives gavel's copy of its image, and scores as ``gavel score``."""
    answers = saved["detailverify"]
    repo = tmp_path / "dvb-repo"
    shutil.copytree(answers.data.parent / "images", repo / "images")
    (repo / "data").mkdir()
    shutil.copy(answers.data, repo / "data" / "real_test.jsonl")
    (repo / "README.md").write_text(
        "---\nconfigs:\n- config_name: real_test\n  data_files:\n  - split: test\n"
        "    path: data/real_test.jsonl\n---\n"
    )
    hub = "hf:gavel-eval/dvb-synth"
    offline_hub.add(hub.removeprefix("hf:"), repo, "d" * 40)
    _prepared_by_datasets(repo, hub.removeprefix("hf:"), tmp_path / "hf-datasets")
    out = tmp_path / "dvb-hub"
    code, text = gavel_main("export", "lmms-eval", out, "--benchmark", "detailverify",
                            "--data", hub, "--hub-dataset")  # fmt: skip
    assert code == 0, text
    yaml_text = (out / "detailverify" / "gavel_detailverify.yaml").read_text()
    assert "dataset_name: real_test\n" in yaml_text and "test_split: test\n" in yaml_text
    _aggregates_as_gavel_score(answers, out, lmms_path, scored_by_gavel, tmp_path)
