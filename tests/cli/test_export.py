"""``gavel export lmms-eval``: the task folder, its functions run as lmms-eval would call them
(without lmms-eval, which tests/integrations installs), and what bad input gives."""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest

from gavel.examples import example_dir

PHOTOS = example_dir("photos")
GOLD = PHOTOS / "gavel.jsonl"
ANSWERS = PHOTOS / "predictions" / "gpt.jsonl"


def _utils(folder):
    spec = importlib.util.spec_from_file_location(f"utils_{folder.name}", folder / "utils.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_folder_holds_the_task_docs_and_functions(gavel_main, tmp_path):
    code, text = gavel_main("export", "lmms-eval", tmp_path / "tasks", "--data", GOLD)
    assert code == 0, text
    folder = tmp_path / "tasks" / "gavel"
    assert sorted(p.name for p in folder.iterdir()) == [
        ".gavel-export.json", "docs.jsonl", "gavel_gavel.yaml", "utils.py"
    ]  # fmt: skip
    yaml = pytest.importorskip("yaml")

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: ("function", node.value))
    config = yaml.load((folder / "gavel_gavel.yaml").read_text(), Loader=Loader)
    # lmms-eval reads a lone --tasks NAME as a folder when ./NAME/ exists: never the folder's
    assert config["task"] == "gavel_gavel" != folder.name
    assert config["lmms_eval_specific_kwargs"] == {
        "default": {"box_format": "pixel"},
        "qwen2_5_vl": {"box_format": "resized-pixel", "min_pixels": 200704, "max_pixels": 1605632},
        "qwen3_vl": {"box_format": "rel1000"},
        "internvl_hf": {"box_format": "rel1000"},
        "gemini": {"box_format": "yx1000"},
    }
    assert config["dataset_path"] == "json"
    assert config["process_results"] == ("function", "utils.process_results")
    names = [m["metric"] for m in config["metric_list"]]
    assert names == [
        "verification_accuracy", "verification_f1", "grounding_A_0_3", "grounding_A_0_5",
        "grounding_A_0_7",
    ]  # fmt: skip
    assert all(
        m["aggregation"] == ("function", f"utils.{m['metric']}") for m in config["metric_list"]
    )
    docs = [json.loads(line) for line in (folder / "docs.jsonl").read_text().splitlines()]
    gold = [json.loads(line) for line in GOLD.read_text().splitlines()]
    assert [d["id"] for d in docs] == [g["id"] for g in gold]
    for doc, sample in zip(docs, gold, strict=True):
        assert sample["caption"] in doc["prompt"]
        image = (PHOTOS / sample["image"]).resolve()
        assert [place["absolute"] for place in doc["media"]] == [str(image)]
        assert [(folder / place["relative"]).resolve() for place in doc["media"]] == [image]


def test_prompts_are_the_ones_gavel_generate_sends(gavel_main, server, fake, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-loopback")
    code, text = gavel_main("generate", "--data", GOLD, "--model", "openai:m", "--base-url",
                            server.url, "--out", tmp_path / "p.jsonl", "--no-cache",
                            "--no-progress")  # fmt: skip
    assert code == 0, text
    code, text = gavel_main("export", "lmms-eval", tmp_path / "tasks", "--data", GOLD)
    assert code == 0, text
    docs = (tmp_path / "tasks" / "gavel" / "docs.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["prompt"] for line in docs) == sorted(server.prompts)


def test_aggregations_are_gavel_score(gavel_main, tmp_path):
    """The functions lmms-eval calls, called the same way on saved answers."""
    code, text = gavel_main("export", "lmms-eval", tmp_path / "tasks", "--data", GOLD,
                            "--box-format", "pixel")  # fmt: skip
    assert code == 0, text
    utils = _utils(tmp_path / "tasks" / "gavel")
    docs = [json.loads(line) for line in (tmp_path / "tasks/gavel/docs.jsonl").open()]
    # lmms-eval gives the model the image as it is: boxes are pixels of the original image.
    said = {
        line["id"]: {"id": line["id"], "response": line["response"], "box_format": "pixel"}
        for line in map(json.loads, ANSWERS.open())
    }
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(line) + "\n" for line in said.values()))
    items: dict[str, list] = {}
    for doc in docs:
        (image,) = utils.doc_to_visual(doc)
        assert image.mode == "RGB"
        assert utils.doc_to_text(doc) == doc["prompt"]
        for metric, item in utils.process_results(doc, [said[doc["id"]]["response"]]).items():
            items.setdefault(metric, []).append(item)
    got = {metric: getattr(utils, metric)(found) for metric, found in items.items()}

    code, text = gavel_main("score", "--data", GOLD, "--predictions", answers, "--bootstrap", 0,
                            "--out", tmp_path / "r.json")  # fmt: skip
    assert code == 0, text
    metrics = json.loads((tmp_path / "r.json").read_text())["metrics"]
    assert got == pytest.approx(
        {
            "verification_accuracy": metrics["verification"]["accuracy"],
            "verification_f1": metrics["verification"]["f1"],
            "grounding_A_0_3": metrics["grounding"]["A@0.3"],
            "grounding_A_0_5": metrics["grounding"]["A@0.5"],
            "grounding_A_0_7": metrics["grounding"]["A@0.7"],
        }
    )
    assert 0 < got["verification_accuracy"] < 100


def test_bad_input_is_one_clear_message(gavel_main, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(GOLD.read_text().splitlines()[0] + "\n{not json\n")
    code, text = gavel_main("export", "lmms-eval", tmp_path / "t", "--data", bad)
    assert code == 2 and "bad.jsonl, line 2" in text and "Traceback" not in text
    assert not (tmp_path / "t" / "gavel").exists() or not any((tmp_path / "t" / "gavel").iterdir())
    code, text = gavel_main("export", "lmms-eval", tmp_path / "t", "--data", GOLD,
                            "--max-frames", 4)  # fmt: skip
    assert code == 2 and "--max-frames caps the --fps sampling" in text


def test_a_folder_holding_files_gavel_did_not_write_is_refused_unless_forced(gavel_main, tmp_path):
    tasks = tmp_path / "tasks"
    code, text = gavel_main("export", "lmms-eval", tasks, "--data", GOLD)
    assert code == 0, text
    code, text = gavel_main("export", "lmms-eval", tasks, "--data", GOLD)
    assert code == 0, text  # its own files, unchanged: written again
    utils = tasks / "gavel" / "utils.py"
    utils.write_text("# the user's own functions\n")
    (tasks / "gavel" / "notes.txt").write_text("mine")
    code, text = gavel_main("export", "lmms-eval", tasks, "--data", GOLD)
    assert code == 2 and "Traceback" not in text
    assert "notes.txt" in text and "utils.py" in text and "--force" in text
    assert utils.read_text() == "# the user's own functions\n"
    code, text = gavel_main("export", "lmms-eval", tasks, "--data", GOLD, "--force")
    assert code == 0, text
    assert (
        "GavelTask" in utils.read_text() and (tasks / "gavel" / "notes.txt").read_text() == "mine"
    )
    code, text = gavel_main("export", "lmms-eval", tasks, "--data", GOLD)
    assert code == 2 and "notes.txt" in text and "utils.py" not in text


def test_an_existing_task_folder_of_the_user_is_never_overwritten(gavel_main, tmp_path):
    folder = tmp_path / "tasks" / "gavel"
    folder.mkdir(parents=True)
    (folder / "gavel_gavel.yaml").write_text("task: mine\n")
    code, text = gavel_main("export", "lmms-eval", tmp_path / "tasks", "--data", GOLD)
    assert code == 2 and "gavel_gavel.yaml" in text and "did not write" in text
    assert sorted(p.name for p in folder.iterdir()) == ["gavel_gavel.yaml"]
    assert (folder / "gavel_gavel.yaml").read_text() == "task: mine\n"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "linked").mkdir()
    (tmp_path / "linked" / "gavel").symlink_to(elsewhere)
    code, text = gavel_main("export", "lmms-eval", tmp_path / "linked", "--data", GOLD)
    assert code == 2 and "a symbolic link" in text and not any(elsewhere.iterdir())


def test_help_imports_no_heavy_library(tmp_path):
    import subprocess

    script = (
        "import sys; from gavel.cli.main import main\n"
        "try: main(['export', 'lmms-eval', '--help'])\n"
        "except SystemExit: pass\n"
        "print(sorted({m.split('.')[0] for m in sys.modules}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout.strip().splitlines()[-1].replace("'", '"')))
    assert not loaded & {"openai", "torch", "av", "scipy", "matplotlib", "inspect_ai", "PIL"}


def _yaml_config(path):
    yaml = pytest.importorskip("yaml")

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: ("function", node.value))
    return yaml.load(path.read_text(), Loader=Loader)


def test_each_model_is_asked_and_scored_in_its_box_convention(gavel_main, tmp_path):
    """lmms-eval hands ``doc_to_text`` the model's entry of ``lmms_eval_specific_kwargs``
    (for a model without one, the whole mapping with ``default``'s keys merged in): the
    prompt asks for that convention, and the answers are read in it. For lmms-eval's
    ``qwen2_5_vl`` the boxes are pixels of the image resized within lmms-eval's window, so
    boxes placed there score in full, and read in the processor's window they would not."""
    from gavel.api.tasks import TaskOptions, load_requests
    from gavel.parsing.conventions import qwen_smart_resize

    code, text = gavel_main("export", "lmms-eval", tmp_path / "tasks", "--data", GOLD)
    assert code == 0, text
    folder = tmp_path / "tasks" / "gavel"
    per_model = _yaml_config(folder / "gavel_gavel.yaml")["lmms_eval_specific_kwargs"]
    docs = [json.loads(line) for line in (folder / "docs.jsonl").open()]
    gold = {line["id"]: line for line in map(json.loads, GOLD.open())}

    def prompts(box_format):
        requests = load_requests("gavel", GOLD, TaskOptions(box_format=box_format))
        return {r.sample_id: r.prompt for r in requests}

    unlisted = {**per_model, **per_model["default"]}  # what lmms-eval gives --model openai
    for kwargs, box_format in [(unlisted, "pixel"), (per_model["qwen3_vl"], "rel1000"),
                               (per_model["qwen2_5_vl"], "resized-pixel")]:  # fmt: skip
        utils = _utils(folder)  # as lmms-eval loads it
        expected = prompts(box_format)
        assert [utils.doc_to_text(doc, kwargs) for doc in docs] == [
            expected[doc["id"]] for doc in docs
        ]
        assert {
            item["box_format"]
            for doc in docs
            for item in utils.process_results(doc, ["{}"]).values()
        } == {box_format}
    assert prompts("rel1000") != prompts("pixel")

    # Qwen2.5-VL under lmms-eval: answers with the gold boxes in its resized image's pixels.
    utils = _utils(folder)
    window = per_model["qwen2_5_vl"]
    items: dict[str, list] = {}
    resized = {}
    for doc in docs:
        utils.doc_to_text(doc, window)
        sample = gold[doc["id"]]
        width, height = sample["width"], sample["height"]
        in_w, in_h = qwen_smart_resize(width, height, min_pixels=200704, max_pixels=1605632)
        resized[doc["id"]] = (in_w, in_h) != qwen_smart_resize(width, height)
        boxes = [
            [x * in_w / width, y * in_h / height, (x + w) * in_w / width, (y + h) * in_h / height]
            for x, y, w, h in sample["boxes"]
        ]
        answer = json.dumps({"hallucination": sample["hallucinated"], "boxes": boxes})
        for metric, item in utils.process_results(doc, [answer]).items():
            assert item["input_size"] == [in_w, in_h]
            items.setdefault(metric, []).append(item)
    assert any(resized.values())  # the 451 x 300 photos: the two windows resize them apart
    assert utils.grounding_A_0_7(items["grounding_A_0_7"]) == pytest.approx(100.0)
    assert utils.verification_accuracy(items["verification_accuracy"]) == pytest.approx(100.0)
    default_window = [{k: v for k, v in item.items() if k != "input_size"}
                      for item in items["grounding_A_0_7"]]  # fmt: skip
    assert utils.grounding_A_0_7(default_window) < 100.0
    # gavel score on lmms-eval's sample log reads each answer in the window it was asked in.
    log = tmp_path / "20260101_samples_gavel_gavel.jsonl"
    log.write_text("".join(
        json.dumps({"doc_id": n, "filtered_resps": [item["response"]], "grounding_A_0_7": item})
        + "\n" for n, item in enumerate(items["grounding_A_0_7"])
    ))  # fmt: skip
    code, text = gavel_main("score", "--data", GOLD, "--predictions", log, "--bootstrap", 0,
                            "--out", tmp_path / "r.json")  # fmt: skip
    assert code == 0, text
    grounding = json.loads((tmp_path / "r.json").read_text())["metrics"]["grounding"]
    assert grounding["A@0.7"] == pytest.approx(100.0)


def test_a_file_of_an_earlier_export_is_removed_when_no_longer_written(gavel_main, tmp_path):
    """An export of an older gavel wrote the task as ``gavel.yaml``; exporting again removes
    it (unchanged, it is the export's own), so lmms-eval does not find two tasks; a file the
    user changed stays, even with ``--force``."""
    import hashlib

    code, text = gavel_main("export", "lmms-eval", tmp_path / "tasks", "--data", GOLD)
    assert code == 0, text
    folder = tmp_path / "tasks" / "gavel"
    old = (folder / "gavel_gavel.yaml").read_text().replace("task: gavel_gavel", "task: gavel")
    (folder / "gavel_gavel.yaml").rename(folder / "gavel.yaml")
    (folder / "gavel.yaml").write_text(old)
    record = json.loads((folder / ".gavel-export.json").read_text())
    del record["gavel_gavel.yaml"]
    record["gavel.yaml"] = hashlib.sha256(old.encode()).hexdigest()
    (folder / ".gavel-export.json").write_text(json.dumps(record))
    (folder / "notes.txt").write_text("mine")
    record["notes.txt"] = "0" * 64  # recorded, but not this content: the user's
    (folder / ".gavel-export.json").write_text(json.dumps(record))
    code, text = gavel_main("export", "lmms-eval", tmp_path / "tasks", "--data", GOLD, "--force")
    assert code == 0, text
    assert sorted(p.name for p in folder.iterdir()) == [
        ".gavel-export.json", "docs.jsonl", "gavel_gavel.yaml", "notes.txt", "utils.py"
    ]  # fmt: skip


def test_hub_dataset_is_refused_for_data_that_names_no_hub_dataset(gavel_main, tmp_path):
    """``--hub-dataset`` names a Hub dataset: refused, in one message and with nothing written,
    for local files, for a Parquet folder without the repository it is pushed to, and for a
    repository name that is not one."""
    code, text = gavel_main("data", "convert", GOLD, tmp_path / "repo")
    assert code == 0, text
    out = tmp_path / "t"
    for given, said in [
        (("--data", GOLD, "--hub-dataset"), "is not Hub data (hf:OWNER/NAME) nor a Parquet"),
        (("--data", tmp_path / "repo", "--hub-dataset"), "name the Hub repository it is pushed"),
        (("--data", tmp_path / "repo", "--hub-dataset", "no-owner"), "expected OWNER/NAME"),
    ]:
        code, text = gavel_main("export", "lmms-eval", out, *given)
        assert code == 2 and said in text and "Traceback" not in text, text
        assert not (out / "gavel").exists()
    code, text = gavel_main("export", "lmms-eval", out, "--data", tmp_path / "repo",
                            "--hub-dataset", "gavel-eval/photos@v1")  # fmt: skip
    assert code == 0, text
    yaml_text = (out / "gavel" / "gavel_gavel.yaml").read_text()
    assert "dataset_path: gavel-eval/photos\n" in yaml_text
    assert "dataset_kwargs:\n  revision: v1\ntest_split: test\n" in yaml_text
    assert not (out / "gavel" / "docs.jsonl").exists()
    assert "hf:gavel-eval/photos@v1:test" in (out / "gavel" / "utils.py").read_text()
