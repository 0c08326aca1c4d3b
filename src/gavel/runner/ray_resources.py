"""What each Ray worker asks for, whether the cluster can hold the workers, and which device a
replica's model uses.

The workers are reserved together through one placement group before any is created: a run
then either holds every replica's CPUs and GPUs or stops with a message that says what it
asked for and what the cluster has. Without that, an actor asking for a GPU the cluster lacks
stays pending for ever and the run hangs without a word.

Ray is passed in (never imported here), so the CLI can import this module without Ray.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gavel.errors import ConfigError, GavelError

#: Seconds a joined cluster is given to find the resources (an autoscaler adding a node).
PLACEMENT_TIMEOUT_S = 60.0
#: Ray keeps resource amounts to 4 decimals; comparisons allow for that rounding.
_SLACK = 1e-4


@dataclass(frozen=True)
class WorkerResources:
    """The CPUs and GPUs one worker (one model replica) asks for; fractions are allowed."""

    cpus: float
    gpus: float

    @classmethod
    def of(cls, actor_options: Mapping[str, Any]) -> WorkerResources:
        """From Ray actor options (``num_cpus``, ``num_gpus``)."""
        cpus = float(actor_options.get("num_cpus") or 0)
        gpus = float(actor_options.get("num_gpus") or 0)
        if cpus < 0 or gpus < 0:
            raise ConfigError("CPUs and GPUs per worker cannot be negative")
        if cpus == 0 and gpus == 0:
            raise ConfigError("a Ray worker must ask for some CPUs or GPUs (both are 0)")
        return cls(cpus, gpus)

    def bundle(self) -> dict[str, float]:
        """The placement-group bundle: only the resources asked for (Ray rejects zeros)."""
        return {name: amount for name, amount in self.as_dict().items() if amount > 0}

    def as_dict(self) -> dict[str, float]:
        return {"CPU": self.cpus, "GPU": self.gpus}

    def describe(self) -> str:
        return f"{self.cpus:g} CPU and {self.gpus:g} GPU"


def node_capacity(resources: Mapping[str, float], wanted: WorkerResources) -> int:
    """How many such workers fit on one node with these total resources."""
    return min(
        math.floor(resources.get(name, 0.0) / amount + _SLACK)
        for name, amount in wanted.bundle().items()
    )


def workers_that_fit(nodes: Iterable[Mapping[str, Any]], wanted: WorkerResources) -> int:
    """How many such workers the cluster's live nodes (``ray.nodes()``) hold in all. Identical
    workers pack node by node, so the sum of what each node holds is exact."""
    return sum(node_capacity(node.get("Resources", {}), wanted)
               for node in nodes if node.get("Alive", True))  # fmt: skip


def cluster_totals(nodes: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """CPUs and GPUs of the live nodes, summed."""
    totals = {"CPU": 0.0, "GPU": 0.0}
    for node in nodes:
        if node.get("Alive", True):
            for name in totals:
                totals[name] += float(node.get("Resources", {}).get(name, 0.0))
    return totals


def shortfall(nodes: Sequence[Mapping[str, Any]], wanted: WorkerResources, workers: int) -> str:
    """Why the workers cannot be placed, and what to change."""
    live = [node for node in nodes if node.get("Alive", True)]
    totals = cluster_totals(live)
    return (
        f"the Ray cluster cannot hold {workers} worker(s) of {wanted.describe()} each: its "
        f"{len(live)} node(s) have {totals['CPU']:g} CPU and {totals['GPU']:g} GPU in all and "
        f"hold {workers_that_fit(live, wanted)} such worker(s). Ask for fewer workers "
        "(--workers) or less per worker (--gpus-per-worker, --cpus-per-worker), or join a "
        "bigger cluster (--ray-address)"
    )


def reserve(ray: Any, wanted: WorkerResources, workers: int, timeout: float, *,
            can_grow: bool) -> tuple[Any, list[Any]]:  # fmt: skip
    """Reserve ``workers`` bundles in one placement group; returns it and one scheduling
    strategy per worker. Fails at once when the nodes cannot hold them and the cluster cannot
    grow (a local one), else after ``timeout`` seconds without the resources."""
    from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

    nodes = ray.nodes()
    if workers_that_fit(nodes, wanted) < workers and not can_grow:
        raise GavelError(shortfall(nodes, wanted, workers))
    group = ray.util.placement_group([wanted.bundle()] * workers, strategy="PACK")
    if not group.wait(timeout_seconds=timeout):
        ray.util.remove_placement_group(group)
        raise GavelError(
            f"{shortfall(ray.nodes(), wanted, workers)} (waited {timeout:g} s for the "
            "resources; other jobs may hold them)"
        )
    strategies = [
        PlacementGroupSchedulingStrategy(group, placement_group_bundle_index=index)
        for index in range(workers)
    ]
    return group, strategies


def replica_device(device: str | None, gpu_ids: Sequence[Any]) -> str:
    """The device an ``hf:`` replica uses: the GPU Ray assigned it, else the CPU.

    ``auto`` (or nothing) on a worker without GPUs means the CPU, never a GPU of the node that
    Ray gave to another worker. With GPUs assigned, Ray narrows ``CUDA_VISIBLE_DEVICES`` to
    them, so ``cuda`` is the first assigned one (unless that narrowing is switched off, then
    it is named by its id). A worker given GPUs on a node where torch sees none (a cluster
    that declares GPUs it does not have) runs on the CPU.
    """
    if device not in (None, "auto"):
        return device
    if not gpu_ids:
        return "cpu"
    import torch

    if not torch.cuda.is_available():
        return "cpu"
    if os.environ.get("RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES"):
        return f"cuda:{gpu_ids[0]}"
    return "cuda"
