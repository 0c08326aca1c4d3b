"""``--data hf:…`` end to end: dataset repositories in a real Hugging Face cache layout,
resolved by huggingface_hub's own ``snapshot_download`` offline, give the same requests,
answers and numbers as the local files they were made from."""

from __future__ import annotations

import hashlib
import json
import shutil
import socket
import threading
from pathlib import Path

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("huggingface_hub")

COMMIT_A = "a" * 40
COMMIT_B = "b" * 40


def _results(run: Path) -> dict:
    return json.loads((run / "results.json").read_text())


def _responses(path: Path) -> dict[str, str]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return {line["id"]: line["response"] for line in lines}


@pytest.fixture
def gavel_repo(tmp_path, gavel_main) -> tuple[Path, Path]:
    """Synthetic GAVEL data (JSONL + images) and the same as a Parquet dataset folder."""
    done = gavel_main("synth", "--benchmark", "gavel", "--n", "8", "--out", tmp_path / "syn")
    assert done.code == 0, done.text
    done = gavel_main("data", "convert", tmp_path / "syn" / "gavel.jsonl", tmp_path / "repo")
    assert done.code == 0, done.text
    return tmp_path / "syn" / "gavel.jsonl", tmp_path / "repo"


def test_gavel_from_the_hub_runs_as_the_local_files(tmp_path, gavel_main, hub_cache, gavel_repo):
    local, repo = gavel_repo
    hub_cache.add("gavel-eval/synth", repo, COMMIT_A)
    common = ("--model", "scene", "--bootstrap", "0", "--no-progress")
    done = gavel_main("run", "--data", "hf:gavel-eval/synth", *common, "--out", tmp_path / "hub")
    assert done.code == 0, done.text
    done = gavel_main("run", "--data", local, *common, "--out", tmp_path / "local")
    assert done.code == 0, done.text

    hub, own = _results(tmp_path / "hub"), _results(tmp_path / "local")
    assert hub["metrics"] == own["metrics"]
    assert hub["counts"] == own["counts"]
    assert _responses(tmp_path / "hub" / "predictions.jsonl") == _responses(
        tmp_path / "local" / "predictions.jsonl"
    )
    shard = repo / "data" / "test-00000-of-00001.parquet"
    shard_sha = hashlib.sha256(shard.read_bytes()).hexdigest()
    listing = f"{shard_sha}  data/test-00000-of-00001.parquet\n"
    for manifest in (
        hub["manifest"],
        json.loads((tmp_path / "hub" / "predictions.manifest.json").read_text()),
    ):
        source = manifest["data_source"]
        assert source["source"] == "hf"
        assert source["repo"] == "gavel-eval/synth"
        assert source["revision"] == "main"
        assert source["commit"] == COMMIT_A
        assert source["split"] == "test"
        assert source["files"] == {"data/test-00000-of-00001.parquet": shard_sha}
        assert source["data_sha256"] == hashlib.sha256(listing.encode()).hexdigest()
        # data_file is the local copy, and data_sha256 is that copy's own hash
        copy = Path(manifest["data_file"])
        assert manifest["data_sha256"] == hashlib.sha256(copy.read_bytes()).hexdigest()
    assert own["manifest"]["data_source"] is None


def test_uncached_dataset_offline_is_one_clear_message(gavel_main, hub_cache):
    done = gavel_main("data", "validate", "hf:nobody/nothing@v3")
    assert done.code == 2
    assert "Traceback" not in done.text
    assert "hf:nobody/nothing@v3: not in the Hugging Face cache" in done.err
    assert "HF_HUB_OFFLINE" in done.err
    assert "hf download nobody/nothing --repo-type dataset --revision v3" in done.err


def _repo_with_captions(folder: Path, syn: Path, suffix: str) -> Path:
    """The synthetic GAVEL file with every caption marked, as a Parquet dataset folder."""
    from gavel.sources.convert import jsonl_to_parquet

    lines = [json.loads(line) for line in syn.read_text().splitlines()]
    for line in lines:
        line["caption"] += suffix
    marked = syn.with_name(f"marked{suffix.strip()}.jsonl")
    marked.write_text("".join(json.dumps(line) + "\n" for line in lines))
    jsonl_to_parquet(marked, folder)
    return folder


def test_a_revision_pin_reads_that_commit(tmp_path, gavel_main, hub_cache, gavel_repo):
    from gavel.benchmarks.gavel.data import load_samples
    from gavel.sources import resolve_data

    local, _ = gavel_repo
    old = _repo_with_captions(tmp_path / "old", local, " (old)")
    new = _repo_with_captions(tmp_path / "new", local, " (new)")
    hub_cache.add("gavel-eval/synth", old, COMMIT_A, refs=("v1",))
    hub_cache.add("gavel-eval/synth", new, COMMIT_B, refs=("main",))

    def captions(spec: str) -> tuple[set[str], dict]:
        path, root, source = resolve_data("gavel", spec)
        samples, _ = load_samples(path, root)
        return {s.caption.rsplit(" ", 1)[1] for s in samples}, source

    marks, source = captions("hf:gavel-eval/synth")
    assert marks == {"(new)"}
    assert source["commit"] == COMMIT_B
    for pin in (f"hf:gavel-eval/synth@{COMMIT_A}", "hf:gavel-eval/synth@v1"):
        marks, source = captions(pin)
        assert marks == {"(old)"}
        assert source["commit"] == COMMIT_A
    marks, source = captions(f"hf:gavel-eval/synth@{COMMIT_B}:test")
    assert marks == {"(new)"}
    assert source["commit"] == COMMIT_B


class _SilentServer:
    """A loopback TCP server that accepts connections and never answers."""

    def __init__(self):
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]
        self.held: list[socket.socket] = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            self.held.append(connection)

    def close(self):
        self.socket.close()
        for connection in self.held:
            connection.close()


def test_a_hub_that_does_not_answer_is_an_error_not_a_hang(gavel_main, hub_cache, monkeypatch):
    server = _SilentServer()
    try:
        monkeypatch.delenv("HF_HUB_OFFLINE")
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.port}")
        monkeypatch.setenv("GAVEL_HUB_TIMEOUT", "1")
        done = gavel_main("data", "validate", "hf:gavel-eval/synth")
    finally:
        server.close()
    assert done.code == 2
    assert "Traceback" not in done.text
    assert (
        "hf:gavel-eval/synth: the Hub did not answer within 1 s (ReadTimeout), and it is "
        in done.err
    )
    assert "not in the Hugging Face cache" in done.err


def test_an_unreachable_hub_falls_back_to_the_cache(gavel_main, hub_cache, gavel_repo, monkeypatch):
    from huggingface_hub import constants

    before = constants.HF_HUB_OFFLINE
    _, repo = gavel_repo
    hub_cache.add("gavel-eval/synth", repo, COMMIT_A)
    server = _SilentServer()
    try:
        monkeypatch.delenv("HF_HUB_OFFLINE")
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.port}")
        monkeypatch.setenv("GAVEL_HUB_TIMEOUT", "1")
        done = gavel_main("data", "validate", "hf:gavel-eval/synth")
    finally:
        server.close()
    assert done.code == 0, done.text
    assert "OK, 8 samples" in done.out
    assert before == constants.HF_HUB_OFFLINE  # the library's own setting is left as it was


# --- DetailVerifyBench as published -----------------------------------------------------------

#: The configs of the published dataset card (zyxhhnkh/DetailVerifyBench), features cut short.
DVB_CARD = """---
license: cc-by-4.0
pretty_name: DetailVerifyBench
configs:
- config_name: real_test
  default: true
  data_files:
  - split: test
    path: data/real_test.jsonl
- config_name: synthetic_test
  data_files:
  - split: test
    path: data/synthetic_test.jsonl
dataset_info:
- config_name: real_test
  features:
  - name: image
    dtype: image
  - name: filename
    dtype: string
---

# DetailVerifyBench
"""


def _dvb_repo(tmp_path: Path, gavel_main) -> tuple[Path, Path]:
    done = gavel_main("synth", "--benchmark", "detailverify", "--n", "5", "--out", tmp_path / "dvb")
    assert done.code == 0, done.text
    local = tmp_path / "dvb" / "real_test.jsonl"
    repo = tmp_path / "dvb-repo"
    (repo / "data").mkdir(parents=True)
    shutil.copytree(tmp_path / "dvb" / "images", repo / "images")
    (repo / "README.md").write_text(DVB_CARD)
    shutil.copy(local, repo / "data" / "real_test.jsonl")  # image: "images/…" from the root
    synthetic = []
    for number, line in enumerate(local.read_text().splitlines()[:2]):
        real = json.loads(line)
        synthetic.append(
            {
                "image": real["image"],
                "id": number,
                "image_path": f"synthetic/{real['filename']}",
                "description_tag": real["description_tag"],
                "category": "Synthetic",
                "hallucination_labels": [],
            }
        )
    (repo / "data" / "synthetic_test.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in synthetic)
    )
    return local, repo


def test_detailverifybench_published_layout_loads_as_is(tmp_path, gavel_main, hub_cache):
    from gavel.benchmarks.detailverify.data import read_samples
    from gavel.sources import resolve_data

    local, repo = _dvb_repo(tmp_path, gavel_main)
    hub_cache.add("zyxhhnkh/DetailVerifyBench", repo, COMMIT_A)
    common = ("--benchmark", "detailverify", "--model", "scene", "--no-progress")
    hub_spec = "hf:zyxhhnkh/DetailVerifyBench"
    for data, name in ((hub_spec, "hub"), (local, "local")):
        done = gavel_main("generate", "--data", data, *common, "--out", tmp_path / f"{name}.jsonl")
        assert done.code == 0, done.text
    hub_answers = _responses(tmp_path / "hub.jsonl")
    assert hub_answers == _responses(tmp_path / "local.jsonl")
    assert len(hub_answers) == 5
    scores = {}
    for data, name in ((hub_spec, "hub"), (local, "local")):
        done = gavel_main(
            "score", "--benchmark", "detailverify", "--data", data, "--predictions",
            tmp_path / "local.jsonl", "--bootstrap", "0", "--out", tmp_path / f"{name}-results.json",
        )  # fmt: skip
        assert done.code == 0, done.text
        scores[name] = json.loads((tmp_path / f"{name}-results.json").read_text())
    assert scores["hub"]["metrics"] == scores["local"]["metrics"]
    assert scores["hub"]["manifest"]["data_source"]["config"] == "real_test"

    path, _, source = resolve_data("detailverify", f"{hub_spec}:synthetic_test")
    samples, _ = read_samples(path)
    assert [s.id for s in samples] == [
        json.loads(line)["filename"] for line in local.read_text().splitlines()[:2]
    ]
    assert {s.layout for s in samples} == {"synthetic_test"}
    assert source["config"] == "synthetic_test"


# --- VideoHallucer from Parquet with the Video feature ----------------------------------------


def test_videohallucer_from_parquet_with_embedded_videos(
    tmp_path, gavel_main, hub_cache, videohallucer_parquet
):
    done = gavel_main("synth", "--benchmark", "videohallucer", "--n", "6", "--out", tmp_path / "vh")
    assert done.code == 0, done.text
    repo = tmp_path / "vh-repo"
    videohallucer_parquet(tmp_path / "vh", repo / "data" / "test-00000-of-00001.parquet")
    hub_cache.add("gavel-eval/videohallucer-synth", repo, COMMIT_A)
    common = ("--benchmark", "videohallucer", "--model", "scene", "--no-progress")
    sources = {
        "hub": "hf:gavel-eval/videohallucer-synth",
        "parquet": repo / "data" / "test-00000-of-00001.parquet",
        "local": tmp_path / "vh",
    }
    for name, data in sources.items():
        done = gavel_main("generate", "--data", data, *common, "--out", tmp_path / f"{name}.jsonl")
        assert done.code == 0, done.text
    answers = {name: _responses(tmp_path / f"{name}.jsonl") for name in sources}
    assert answers["hub"] == answers["local"] == answers["parquet"]
    assert len(answers["hub"]) == 12
    results = {}
    for name, data in sources.items():
        out = tmp_path / f"{name}-results.json"
        done = gavel_main(
            "score", "--benchmark", "videohallucer", "--data", data, "--predictions",
            tmp_path / "local.jsonl", "--bootstrap", "0", "--out", out,
        )  # fmt: skip
        assert done.code == 0, done.text
        results[name] = json.loads(out.read_text())
    assert results["hub"]["metrics"] == results["local"]["metrics"] == results["parquet"]["metrics"]
    assert results["parquet"]["manifest"]["data_source"]["source"] == "parquet"


def test_convert_and_stats_read_the_hub_too(tmp_path, gavel_main, hub_cache, gavel_repo):
    local, repo = gavel_repo
    hub_cache.add("gavel-eval/synth", repo, COMMIT_A)
    done = gavel_main("data", "convert", "hf:gavel-eval/synth", tmp_path / "back" / "gavel.jsonl")
    assert done.code == 0, done.text
    original = [json.loads(line) for line in local.read_text().splitlines()]
    back = [
        json.loads(line) for line in (tmp_path / "back" / "gavel.jsonl").read_text().splitlines()
    ]
    assert back == original
    for line in original:
        assert (tmp_path / "back" / line["image"]).read_bytes() == (
            local.parent / line["image"]
        ).read_bytes()
    done = gavel_main("data", "stats", "hf:gavel-eval/synth", "--format", "json")
    assert done.code == 0, done.text
    assert json.loads(done.out)["samples"] == len(original)


def test_videohallucer_release_layout_on_the_hub_is_read_in_place(tmp_path, gavel_main, hub_cache):
    done = gavel_main("synth", "--benchmark", "videohallucer", "--n", "6", "--out", tmp_path / "vh")
    assert done.code == 0, done.text
    snapshot = hub_cache.add("owner/videohallucer", tmp_path / "vh", COMMIT_A)
    common = ("--benchmark", "videohallucer", "--model", "scene", "--no-progress")
    for name, data in (("hub", "hf:owner/videohallucer"), ("local", tmp_path / "vh")):
        done = gavel_main("generate", "--data", data, *common, "--out", tmp_path / f"{name}.jsonl")
        assert done.code == 0, done.text
    assert _responses(tmp_path / "hub.jsonl") == _responses(tmp_path / "local.jsonl")
    manifest = json.loads((tmp_path / "hub.manifest.json").read_text())
    assert manifest["data_file"] == str(snapshot)  # read in place from the Hugging Face cache
    assert manifest["data_source"]["commit"] == COMMIT_A
    assert "temporal/temporal.json" in manifest["data_source"]["files"]

    from gavel.sources import resolve_data

    path, _, source = resolve_data("videohallucer", "hf:owner/videohallucer:temporal")
    assert path == snapshot / "temporal"
    assert list(source["files"]) == ["temporal/temporal.json"]


def test_gavel_jsonl_and_image_folder_on_the_hub(tmp_path, gavel_main, hub_cache, gavel_repo):
    from gavel.benchmarks.gavel.data import load_samples
    from gavel.sources import resolve_data

    local, _ = gavel_repo
    hub_cache.add("owner/gavel-jsonl", local.parent, COMMIT_A)  # gavel.jsonl, scenes.jsonl, images/
    done = gavel_main("data", "validate", "hf:owner/gavel-jsonl")
    assert done.code == 2
    assert "several splits (gavel, scenes); name one as hf:OWNER/NAME:SPLIT" in done.err
    path, root, _ = resolve_data("gavel", "hf:owner/gavel-jsonl:gavel")
    copied, _ = load_samples(path, root)
    original, _ = load_samples(local)
    assert copied == original
    for sample in original:
        assert (root / sample.image).read_bytes() == (local.parent / sample.image).read_bytes()


def _pairs_by_datasets(release: Path, out: Path, *, nested: bool, named: bool) -> None:
    """The release's pairs as ``datasets`` writes a dataset with ``Video`` features to the Hub:
    built by ``datasets`` from the video files (or their bytes, ``named`` False), then each
    shard's files embedded (``embed_table_storage``, as ``push_to_hub`` does) and written as
    Parquet with the features in its metadata."""
    datasets = pytest.importorskip("datasets")
    from datasets.table import embed_table_storage

    from gavel.benchmarks.videohallucer.data import load_dataset

    string = datasets.Value("string")
    rows = []
    for pair in load_dataset(release).pairs:
        row: dict = {"category": pair.category, "type": pair.type}
        for side in ("basic", "hallucination"):
            question = pair.side(side)
            file = release / pair.category / "videos" / question.video
            video = str(file) if named else file.read_bytes()
            values = {"video": video, "question": question.question, "answer": question.answer}
            if nested:
                row[side] = values
            else:
                row |= {f"{side}_{name}": value for name, value in values.items()}
        rows.append(row)
    sides = {"video": datasets.Video(), "question": string, "answer": string}
    if nested:
        features = datasets.Features({"category": string, "type": string, "basic": sides,
                                      "hallucination": sides})  # fmt: skip
    else:
        features = datasets.Features(
            {"category": string, "type": string}
            | {f"{side}_{name}": feature for side in ("basic", "hallucination")
               for name, feature in sides.items()}
        )  # fmt: skip
    dataset = datasets.Dataset.from_list(rows, features=features)
    embedded = dataset.with_format("arrow").map(embed_table_storage, batched=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    embedded.to_parquet(str(out))


@pytest.mark.parametrize(("nested", "named"), [(False, True), (True, True), (True, False)])
def test_videohallucer_rows_with_the_datasets_video_feature_become_video_files(
    tmp_path, gavel_main, hub_cache, nested, named
):
    """A Hub dataset whose videos are ``datasets.Video`` cells (flat ``basic_video`` columns or
    nested ``basic.video``; with the file's name, or bytes alone) is materialized into video
    files byte for byte those of the release, which the scene model answers as it answers the
    release itself."""
    datasets = pytest.importorskip("datasets")
    done = gavel_main("synth", "--benchmark", "videohallucer", "--n", "6", "--out", tmp_path / "vh")
    assert done.code == 0, done.text
    repo = tmp_path / "repo"
    shard = repo / "data" / "test-00000-of-00001.parquet"
    _pairs_by_datasets(tmp_path / "vh", shard, nested=nested, named=named)
    read = datasets.load_dataset(str(repo), split="test", cache_dir=tmp_path / "hf-datasets")
    video = read.features["basic"]["video"] if nested else read.features["basic_video"]
    assert isinstance(video, datasets.Video)  # what the Hub's reader sees in the file
    hub_cache.add("owner/vh-video-feature", repo, COMMIT_A)
    from gavel.benchmarks.videohallucer.data import load_dataset
    from gavel.sources import resolve_data

    path, _, source = resolve_data("videohallucer", "hf:owner/vh-video-feature")
    release, copy = load_dataset(tmp_path / "vh"), load_dataset(path)
    assert source["rows"] == len(release.pairs) == len(copy.pairs)
    for original, written in zip(release.pairs, copy.pairs, strict=True):
        assert (original.category, original.type) == (written.category, written.type)
        for side in ("basic", "hallucination"):
            mine, theirs = original.side(side), written.side(side)
            assert (mine.question, mine.answer) == (theirs.question, theirs.answer)
            made = path / written.category / "videos" / theirs.video
            given = tmp_path / "vh" / original.category / "videos" / mine.video
            assert made.suffix == ".mp4" and made.read_bytes() == given.read_bytes()
            if named:
                assert theirs.video == mine.video
    common = ("--benchmark", "videohallucer", "--model", "scene", "--no-progress")
    for name, data in (("hub", "hf:owner/vh-video-feature"), ("local", tmp_path / "vh")):
        done = gavel_main("generate", "--data", data, *common, "--out", tmp_path / f"{name}.jsonl")
        assert done.code == 0, done.text
    assert _responses(tmp_path / "hub.jsonl") == _responses(tmp_path / "local.jsonl")


# --- a plugin benchmark's data from the Hub (docs/plugins.md's letters) ----------------------

LETTERS = [("1", "banana", "a", 3), ("2", "gavel", "g", 1), ("3", "mississippi", "s", 4)]


def _letters_repo(folder: Path, rows: list[dict]) -> Path:
    """A dataset repository of letters rows: one Parquet shard and a card naming its split."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    (folder / "data").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), folder / "data" / "test-00000-of-00001.parquet",
                   row_group_size=2)  # fmt: skip
    return folder


def test_a_plugin_benchmark_reads_a_hub_dataset_through_its_own_layout(
    tmp_path, gavel_main, hub_cache, plugin_site
):
    """The documented plugin says how its rows become its file (``Benchmark.layout``), so
    ``--data hf:OWNER/NAME`` works for it as for a built-in benchmark: the same answers and
    numbers as its local file, the dataset named in the manifest, the copy reused."""
    plugin_site.install_documented_example()
    rows = [{"id": i, "word": w, "letter": c, "count": n} for i, w, c, n in LETTERS]
    local = tmp_path / "letters.jsonl"
    local.write_text("".join(json.dumps(row) + "\n" for row in rows))
    hub_cache.add("owner/letters", _letters_repo(tmp_path / "repo", rows), COMMIT_A)
    common = ("--benchmark", "letters", "--model", "counter", "--no-progress")
    for name, data in (("hub", "hf:owner/letters"), ("local", local)):
        done = gavel_main("run", "--data", data, *common, "--out", tmp_path / name)
        assert done.code == 0, done.text
    assert _responses(tmp_path / "hub" / "predictions.jsonl") == {"1": "3", "2": "1", "3": "4"}
    assert _responses(tmp_path / "local" / "predictions.jsonl") == {"1": "3", "2": "1", "3": "4"}
    hub, own = _results(tmp_path / "hub"), _results(tmp_path / "local")
    assert hub["metrics"] == own["metrics"] == {"accuracy": 100.0}
    from gavel.sources import resolve_data

    path, _, source = resolve_data("letters", "hf:owner/letters")
    assert source["commit"] == COMMIT_A and source["rows"] == 3
    assert path.read_text() == local.read_text()  # the plugin's own file, line for line
    assert Path(source["materialized"]) in path.parents


def test_a_bad_row_of_a_plugin_dataset_names_the_dataset_file_and_row(
    tmp_path, gavel_main, hub_cache, plugin_site
):
    """The plugin's loader checks the copy before it is kept; its complaint about line 3 of
    the copy names row 3 of the dataset's Parquet file, and nothing is cached."""
    plugin_site.install_documented_example()
    rows = [{"id": i, "word": w, "letter": c, "count": str(n)} for i, w, c, n in LETTERS]
    rows[2]["count"] = "many"
    hub_cache.add("owner/letters", _letters_repo(tmp_path / "repo", rows), COMMIT_A)
    done = gavel_main("generate", "--benchmark", "letters", "--data", "hf:owner/letters",
                      "--model", "counter", "--out", tmp_path / "p.jsonl")  # fmt: skip
    assert done.code == 2, done.text
    assert (
        "data/test-00000-of-00001.parquet" in done.err and "row 3: not a letters item" in done.err
    )
    assert not any((tmp_path / "gavel-cache").rglob("letters.jsonl"))


def test_a_benchmark_without_a_layout_is_told_it_reads_no_hub_data(
    tmp_path, gavel_main, hub_cache, plugin_site
):
    """A benchmark that gives no layout reads local files only, and says so."""
    plugin_site.install(
        "gavel-plain", "0.1", {"gavel.benchmarks": {"plain": "gavel_letters_plain:BENCHMARK"}},
        {"gavel_letters_plain/__init__.py": "from dataclasses import replace\n"
         "from gavel_letters import BENCHMARK as LETTERS\n"
         "BENCHMARK = replace(LETTERS, name='plain', layout=None)\n"},
    )  # fmt: skip
    plugin_site.install_documented_example()
    hub_cache.add("owner/letters", _letters_repo(tmp_path / "repo", [{"id": "1"}]), COMMIT_A)
    done = gavel_main("generate", "--benchmark", "plain", "--data", "hf:owner/letters",
                      "--model", "counter", "--out", tmp_path / "p.jsonl")  # fmt: skip
    assert done.code == 2
    assert "benchmark 'plain' cannot read Hub or Parquet data" in done.err, done.text
