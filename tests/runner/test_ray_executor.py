"""The Ray runner on a local 2-CPU Ray cluster: the same predictions as the in-process runner,
resumable, failures recorded, GPUs asked for and refused when there are too few. The cluster
is started once for the module and declares 2 GPUs it does not have (Ray schedules on declared
resources; torch sees no GPU, so an hf: replica given one runs on the CPU)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install ray)")

from gavel.benchmarks.gavel.data import load_samples  # noqa: E402
from gavel.benchmarks.gavel.prompt import build_requests  # noqa: E402
from gavel.errors import GavelError  # noqa: E402
from gavel.models.registry import load_model  # noqa: E402
from gavel.prompts import load_template  # noqa: E402
from gavel.runner.async_runner import run_sync  # noqa: E402
from gavel.runner.local import run_model  # noqa: E402
from gavel.runner.ray_executor import run_ray  # noqa: E402
from gavel.synth.gavel_set import generate_gavel  # noqa: E402

SAMPLES = 40
#: GPUs the test cluster declares (none is real).
DECLARED_GPUS = 2


@pytest.fixture(scope="module")
def cluster():
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, num_gpus=DECLARED_GPUS, include_dashboard=False,
                 log_to_driver=False)  # fmt: skip
    yield
    if started:
        ray.shutdown()


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gavel")
    generate_gavel(folder, SAMPLES, seed=7, difficulty="easy")
    return folder


def requests_of(folder):
    samples, _ = load_samples(folder / "gavel.jsonl")
    return build_requests(samples, folder, load_template("gavel_v1"), "pixel")


def answers(path):
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return [(line["id"], line.get("response"), line.get("error")) for line in lines]


@pytest.fixture(scope="module")
def local_answers(dataset, tmp_path_factory):
    out = tmp_path_factory.mktemp("local") / "pred.jsonl"
    run_model(load_model("scene"), requests_of(dataset), out, progress=False)
    return answers(out)


def test_same_predictions_as_the_local_runner_then_resume_sends_nothing(
    cluster, dataset, local_answers, tmp_path
):
    out = tmp_path / "pred.jsonl"
    first = run_ray("scene", {}, requests_of(dataset), out, workers=2, batch_size=8,
                    total=SAMPLES, progress=False)  # fmt: skip
    got = answers(out)
    assert len(got) == len({id_ for id_, _, _ in got}) == SAMPLES
    assert set(got) == set(local_answers)
    assert [id_ for id_, _, _ in got] == [id_ for id_, _, _ in local_answers]  # input order
    assert (first.answered, first.skipped, first.errors) == (SAMPLES, 0, 0)
    assert first.workers == 2 and first.batches == 5 and first.model == "scene"
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert {line["box_format"] for line in lines} == {"pixel"}

    before = out.read_bytes()
    again = run_ray("scene", {}, requests_of(dataset), out, workers=2, progress=False)
    assert (again.requested, again.skipped, again.answered) == (SAMPLES, SAMPLES, 0)
    assert again.workers == 0 and again.batches == 0  # no actor was even started
    assert out.read_bytes() == before


def test_resume_after_a_crash_sends_only_the_missing_ids(cluster, dataset, local_answers, tmp_path):
    full = tmp_path / "full.jsonl"
    run_model(load_model("scene"), requests_of(dataset), full, progress=False)
    out = tmp_path / "pred.jsonl"
    kept = full.read_bytes().splitlines(keepends=True)[:13]
    out.write_bytes(b"".join(kept) + b'{"id": "cut sh')  # a line cut short by a crash
    summary = run_ray("scene", {}, requests_of(dataset), out, workers=2, batch_size=4,
                      progress=False)  # fmt: skip
    assert (summary.skipped, summary.answered) == (13, SAMPLES - 13)
    got = answers(out)
    assert len(got) == SAMPLES
    assert set(got) == set(local_answers)


def test_a_failed_call_is_written_with_its_error(cluster, tmp_path):
    from gavel.requests import Request

    # The scene model raises on a request whose image does not exist.
    requests = [Request(sample_id=f"s{i}", task="gavel", prompt="p",
                        images=(tmp_path / "missing.png",), fields={"caption": "a red circle"})
                for i in range(3)]  # fmt: skip
    out = tmp_path / "pred.jsonl"
    summary = run_ray("scene", {}, requests, out, workers=2, batch_size=2, progress=False)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert summary.errors == summary.answered == 3
    assert [line["id"] for line in lines] == ["s0", "s1", "s2"]
    assert all(line["error"] and "response" not in line for line in lines)
    # The very lines this process's runner writes (its error and error_kind), but the time.
    here = tmp_path / "here.jsonl"
    run_sync(load_model("scene"), requests, here, progress=False)

    def timeless(path):  # lines in the order they were answered: compared by id
        lines = [{k: v for k, v in json.loads(line).items() if k != "latency_s"}
                 for line in path.read_text().splitlines()]  # fmt: skip
        return sorted(lines, key=lambda line: line["id"])

    assert timeless(out) == timeless(here)
    assert {line["error_kind"] for line in lines} == {"other"}


def test_a_model_the_workers_cannot_build_fails_before_anything_is_written(cluster, tmp_path):
    out = tmp_path / "pred.jsonl"
    with pytest.raises(GavelError, match="could not build the model"):
        run_ray("scene", {"max_tokens": 5}, [_request()], out, workers=1, progress=False)
    assert out.read_bytes() == b""


def _request():
    from gavel.requests import Request

    return Request(sample_id="x", task="gavel", prompt="p")


def test_without_a_cluster_it_starts_a_local_one_and_shuts_it_down(
    dataset, local_answers, tmp_path
):
    out = tmp_path / "pred.jsonl"
    script = (
        "import sys, ray\n"
        "from pathlib import Path\n"
        "from gavel.benchmarks.gavel.prompt import build_requests\n"
        "from gavel.benchmarks.gavel.data import load_samples\n"
        "from gavel.prompts import load_template\n"
        "from gavel.runner.ray_executor import run_ray\n"
        "folder, out = Path(sys.argv[1]), Path(sys.argv[2])\n"
        "samples, _ = load_samples(folder / 'gavel.jsonl')\n"
        "requests = build_requests(samples, folder, load_template('gavel_v1'), 'pixel')\n"
        "summary = run_ray('scene', {}, requests, out, progress=False)\n"
        "assert not ray.is_initialized(), 'the local cluster was left running'\n"
        "print(summary.workers, summary.answered)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    done = subprocess.run([sys.executable, "-c", script, str(dataset), str(out)], env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["2", str(SAMPLES)]  # 2 CPUs, one worker each
    assert set(answers(out)) == set(local_answers)


def test_generate_command_with_the_ray_executor(gavel, tmp_path):
    assert gavel("synth", "--n", "4", "--out", tmp_path / "set").returncode == 0
    done = gavel("generate", "--data", tmp_path / "set" / "gavel.jsonl", "--model", "scene",
                 "--executor", "ray", "--workers", "2", "--out", tmp_path / "p.jsonl", "--no-progress")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "on 2 Ray workers" in done.stderr
    assert len((tmp_path / "p.jsonl").read_text().splitlines()) == 4


def test_a_replica_of_a_batching_model_answers_in_its_batches_in_input_order(tmp_path):
    """No cluster needed: the actor class is a plain class that Ray wraps."""
    pytest.importorskip("torch", reason="the hf adapter needs torch (gavel-eval[hf])")
    from gavel.runner.ray_executor import ModelReplica
    from gavel.train.tiny import build_qwen25_vl, tiny_dataset

    model = build_qwen25_vl(tmp_path / "model")
    data = tiny_dataset(tmp_path / "data", 7)
    requests = list(requests_of_tiny(data))
    spec, options = f"hf:{model}", {"device": "cpu", "dtype": "float32", "max_new_tokens": 8}
    batched = ModelReplica(spec, {**options, "batch_size": 3}).answer_batch(requests).lines
    single = ModelReplica(spec, {**options, "batch_size": 1}).answer_batch(requests).lines
    assert [sample_id for sample_id, _, _ in batched] == [r.sample_id for r in requests]

    def said(lines):
        return [(json.loads(line)["response"], failed) for _, line, failed in lines]

    assert said(batched) == said(single)
    assert not any(failed for _, _, failed in batched)
    # A batch's requests share its wall time: three batches (3 + 3 + 1), three latencies.
    assert len({json.loads(line)["latency_s"] for _, line, _ in batched}) == 3


def requests_of_tiny(data):
    samples, _ = load_samples(data)
    return build_requests(samples, data.parent, load_template("gavel_v1"), "resized-pixel")


def test_workers_get_the_gpus_and_cpus_they_ask_for_and_answer_as_a_local_run(
    cluster, dataset, local_answers, tmp_path
):
    out = tmp_path / "pred.jsonl"
    summary = run_ray("scene", {}, requests_of(dataset), out, workers=4, batch_size=8,
                      gpus_per_worker=0.5, cpus_per_worker=0.5, progress=False)  # fmt: skip
    assert summary.workers == 4
    assert summary.resources == {"CPU": 0.5, "GPU": 0.5}
    # What each actor sees from inside: Ray assigned it half a GPU and half a CPU; four such
    # actors fill the 2 declared GPUs, two per GPU.
    assert [replica["resources"] for replica in summary.replicas] == [{"CPU": 0.5, "GPU": 0.5}] * 4
    gpus = sorted(replica["gpu_ids"][0] for replica in summary.replicas)
    assert gpus == ["0", "0", "1", "1"]
    assert all(len(replica["gpu_ids"]) == 1 for replica in summary.replicas)
    assert answers(out) == local_answers  # same lines, same (input) order


def test_more_gpus_than_the_cluster_has_fails_with_a_clear_message(cluster, tmp_path):
    out = tmp_path / "pred.jsonl"
    with pytest.raises(GavelError) as failure:
        run_ray("scene", {}, [_request()], out, workers=3, gpus_per_worker=1,
                placement_timeout=1, progress=False)  # fmt: skip
    message = str(failure.value)
    assert "cannot hold 3 worker(s) of 1 CPU and 1 GPU each" in message
    assert "2 CPU and 2 GPU in all and hold 2 such worker(s)" in message
    assert "waited 1 s" in message
    assert out.read_bytes() == b""
    # The reservation was given back: the whole cluster is free again.
    assert ray.available_resources().get("GPU") == DECLARED_GPUS


def test_a_cluster_that_cannot_grow_is_refused_without_waiting(cluster):
    from gavel.runner.ray_resources import WorkerResources, reserve

    with pytest.raises(GavelError, match="cannot hold 1 worker"):
        # A placement group would wait; a local cluster that cannot grow is refused first.
        reserve(ray, WorkerResources(cpus=1, gpus=4), 1, timeout=600, can_grow=False)


def test_generate_on_a_joined_cluster_records_the_resources_in_the_manifest(
    cluster, gavel, tmp_path
):
    address = ray.get_runtime_context().gcs_address
    assert gavel("synth", "--n", "6", "--out", tmp_path / "set").returncode == 0
    out = tmp_path / "p.jsonl"
    done = gavel("generate", "--data", tmp_path / "set" / "gavel.jsonl", "--model", "scene",
                 "--executor", "ray", "--ray-address", address, "--workers", "2",
                 "--gpus-per-worker", "1", "--cpus-per-worker", "1", "--out", out,
                 "--no-progress")  # fmt: skip
    assert done.returncode == 0, done.stderr
    manifest = json.loads((tmp_path / "p.manifest.json").read_text())
    ray_settings = manifest["settings"]["ray"]
    assert ray_settings["workers"] == 2 and ray_settings["address"] == address
    assert ray_settings["resources_per_worker"] == {"CPU": 1.0, "GPU": 1.0}
    assert sorted(r["gpu_ids"] for r in ray_settings["replicas"]) == [["0"], ["1"]]
    assert len(out.read_text().splitlines()) == 6

    too_many = gavel("generate", "--data", tmp_path / "set" / "gavel.jsonl", "--model", "scene",
                     "--executor", "ray", "--ray-address", address, "--gpus-per-worker", "3",
                     "--placement-timeout", "1", "--out", tmp_path / "q.jsonl", "--no-progress")  # fmt: skip
    assert too_many.returncode != 0
    assert "Traceback" not in too_many.stderr
    assert "cannot hold 1 worker(s) of 1 CPU and 3 GPU each" in too_many.stderr


def test_ray_flags_without_the_ray_executor_are_refused(gavel, tmp_path):
    done = gavel("generate", "--data", tmp_path / "x.jsonl", "--model", "scene",
                 "--gpus-per-worker", "1", "--out", tmp_path / "p.jsonl")  # fmt: skip
    assert done.returncode == 2
    assert "--gpus-per-worker: only with --executor ray" in done.stderr


def test_an_hf_replica_given_a_declared_gpu_runs_on_the_cpu_and_answers_as_a_local_run(
    cluster, tmp_path
):
    pytest.importorskip("torch", reason="the hf adapter needs torch (gavel-eval[hf])")
    import torch

    from gavel.runner.batched import run_batched
    from gavel.train.tiny import build_qwen25_vl, tiny_dataset

    assert not torch.cuda.is_available()  # the GPUs of this cluster are declared only
    model = build_qwen25_vl(tmp_path / "model")
    data = tiny_dataset(tmp_path / "data", 5)
    options = {"dtype": "float32", "max_new_tokens": 8, "batch_size": 2}
    out = tmp_path / "ray.jsonl"
    summary = run_ray(f"hf:{model}", options, requests_of_tiny(data), out, workers=1,
                      gpus_per_worker=1, batch_size=4, progress=False)  # fmt: skip
    (replica,) = summary.replicas
    assert replica["resources"] == {"CPU": 1.0, "GPU": 1.0} and len(replica["gpu_ids"]) == 1
    assert replica["device"] == "cpu"

    local = tmp_path / "local.jsonl"
    run_batched(load_model(f"hf:{model}", device="cpu", **options), requests_of_tiny(data),
                local, progress=False)  # fmt: skip
    assert sorted(answers(out)) == sorted(answers(local))
