"""How many workers a cluster holds, the refusal message, and the device of an hf: replica.
No Ray needed: nodes are given as ``ray.nodes()`` describes them."""

from __future__ import annotations

import pytest

from gavel.errors import ConfigError
from gavel.runner.ray_resources import (
    WorkerResources,
    node_capacity,
    replica_device,
    shortfall,
    workers_that_fit,
)


def node(cpus: float, gpus: float = 0, alive: bool = True) -> dict:
    resources = {"CPU": cpus, "memory": 1e9, **({"GPU": gpus} if gpus else {})}
    return {"Alive": alive, "Resources": resources}


def test_identical_workers_pack_node_by_node():
    # Worked out by hand: 8 CPU / 2 GPU holds min(8/2, 2/0.5) = 4; 16 CPU / 1 GPU holds
    # min(8, 2) = 2; the CPU-only node holds none; the dead node does not count.
    nodes = [node(8, 2), node(16, 1), node(32), node(64, 8, alive=False)]
    wanted = WorkerResources(cpus=2, gpus=0.5)
    assert [node_capacity(n["Resources"], wanted) for n in nodes[:3]] == [4, 2, 0]
    assert workers_that_fit(nodes, wanted) == 6


def test_cpu_only_workers_ignore_gpus_and_fractions_round_down():
    nodes = [node(3), node(2, 4)]
    assert workers_that_fit(nodes, WorkerResources(cpus=1, gpus=0)) == 5
    assert workers_that_fit(nodes, WorkerResources(cpus=0.7, gpus=0)) == 4 + 2
    # A third of a GPU: 3 per GPU, despite 1/3 not being exact in binary.
    assert workers_that_fit([node(16, 2)], WorkerResources(cpus=0, gpus=1 / 3)) == 6


def test_a_gpu_worker_does_not_fit_on_gpus_split_over_nodes():
    # 2 GPUs in all, but one per node: a 2-GPU worker fits nowhere.
    assert workers_that_fit([node(8, 1), node(8, 1)], WorkerResources(cpus=1, gpus=2)) == 0


def test_the_refusal_says_what_was_asked_and_what_there_is():
    message = shortfall([node(8, 1), node(4)], WorkerResources(cpus=1, gpus=1), 3)
    assert message.startswith("the Ray cluster cannot hold 3 worker(s) of 1 CPU and 1 GPU each")
    assert "2 node(s) have 12 CPU and 1 GPU in all and hold 1 such worker(s)" in message
    assert "--gpus-per-worker" in message and "--workers" in message


def test_a_worker_must_ask_for_something():
    with pytest.raises(ConfigError, match="some CPUs or GPUs"):
        WorkerResources.of({"num_cpus": 0, "num_gpus": 0})
    with pytest.raises(ConfigError, match="negative"):
        WorkerResources.of({"num_cpus": 1, "num_gpus": -1})
    resources = WorkerResources.of({"num_cpus": 0, "num_gpus": 0.5})
    assert resources.bundle() == {"GPU": 0.5}  # Ray rejects zero amounts in a bundle
    assert resources.as_dict() == {"CPU": 0.0, "GPU": 0.5}


def test_a_replica_without_gpus_runs_on_the_cpu_and_an_explicit_device_is_kept():
    assert replica_device(None, []) == "cpu"
    assert replica_device("auto", []) == "cpu"  # never a GPU Ray gave to another worker
    assert replica_device("cpu", [0]) == "cpu"
    assert replica_device("cuda", [1]) == "cuda"


def test_a_replica_with_gpus_uses_cuda_only_where_torch_sees_one(monkeypatch):
    torch = pytest.importorskip("torch", reason="the hf adapter needs torch")
    available = torch.cuda.is_available()
    assert replica_device(None, [1]) == ("cuda" if available else "cpu")
    # The mapping on a GPU node (this machine may have none): Ray narrows
    # CUDA_VISIBLE_DEVICES to the assigned GPU, so it is "cuda"; with that narrowing
    # switched off, the GPU is named by its id.
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.delenv("RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES", raising=False)
    assert replica_device("auto", [3]) == "cuda"
    monkeypatch.setenv("RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES", "1")
    assert replica_device("auto", [3]) == "cuda:3"
