"""The Ray runner: the local runner's map, sharded over model replicas on a Ray cluster.

``workers`` Ray actors each build their own model replica from the spec and the model options
(:func:`gavel.models.registry.load_model`), so no model is pickled and a replica lives where
its resources are. The driver (this process) streams the requests in batches to the actors,
with a bounded number of batches in flight, so memory stays flat however many requests there
are, and writes the answers to the predictions file with the same contract as the in-process
runner (:mod:`gavel.runner.local`, whose ``repair_tail`` and ``completed_ids`` are reused):

- one JSON line per request, written by the driver only and flushed before it is counted
  (fsynced at the end), so a crash loses only the batches in flight and at most one line cut
  short, which the next run removes;
- ids already in the file are never sent again, and no id is written twice. With
  ``retry_errors`` the error lines of an earlier run are taken out first and their samples
  asked again, after the others and with their refusals known (never a reason to stop), as the
  async runner does; the old line of every one not asked again (the run stopped, failed or was
  interrupted first) is put back at the end (:mod:`gavel.runner.earlier_errors`). Without it
  error lines count as done, as in :func:`gavel.runner.local.run_model`;
- a call that raises is written as the async runner writes it (``error``, ``error_kind``;
  scoring counts it as ``model_error``).

Lines are written in input order: a batch is written once it and every batch before it are
back. At most ``2 * workers`` batches are unwritten at a time, so one slow batch can hold the
others back for a while but never makes memory grow. A resumed file has the earlier run's lines
first, then the new ones in input order, which is why a file is only guaranteed to hold the same
lines as a local run, not in the same order; ``latency_s`` differs run to run, as always.

Requests must be picklable (:class:`gavel.requests.Request` is) and the files they name
(images, videos) must be readable at the same paths on every node that runs an actor.

Each actor asks for ``cpus_per_worker`` CPUs and ``gpus_per_worker`` GPUs (fractions allowed:
0.5 puts two replicas on one GPU). The actors are placed through one placement group, so the
run either gets every replica's resources or fails with a message saying what was asked and
what the cluster has; it never waits forever for resources that are not there
(:mod:`gavel.runner.ray_resources`). An ``hf:`` replica runs on the GPU Ray assigned it, and
on the CPU when it was given none; the driver never loads the weights (:func:`driver_model`).

A served model (``openai:``) is asked as the in-process async runner asks it: each replica runs
the model's ``preflight`` (``GET /models``) once before the first batch, then asks request after
request through :mod:`gavel.runner.async_runner`'s retries, backoff, outage wait and error
classification, so the error lines carry the server's words and ``error_kind``. The driver
counts alike refusals (:class:`gavel.transport.failures.Refusal`) over the lines in the order it
writes them, until the first answer: when the first
:data:`gavel.transport.failures.SAME_REFUSALS` lines (one when the server's list lacked the
model) are all refused alike the run stops with :class:`RunStopped` and the same message as
the in-process runner, the lines written kept and the batches in flight not written. A replica
also stops asking within a batch once its own first requests reach that count.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from gavel.errors import ConfigError, GavelError
from gavel.io.files import AppendFile, close_synced
from gavel.io.output_lock import writes_output
from gavel.manifest import redact_userinfo
from gavel.requests import BatchModel, Model, Request, ServedModel
from gavel.runner.earlier_errors import put_back
from gavel.runner.local import RunSummary, _progress, completed_ids
from gavel.runner.ray_resources import (
    PLACEMENT_TIMEOUT_S,
    WorkerResources,
    replica_device,
    reserve,
    workers_that_fit,
)
from gavel.transport.failures import Refusal

log = logging.getLogger(__name__)

#: Batches written per actor that may be unwritten (sent, running or back but waiting for an
#: earlier batch) at a time.
BATCHES_PER_WORKER = 2
#: CPUs of the local cluster started when no address is given (at least ``workers``).
LOCAL_CPUS = 2


@dataclass
class RaySummary(RunSummary):
    """What a run did. ``answered`` counts lines written this run (errors included), which is
    also the number of requests sent to the actors; ``workers`` is 0 when nothing needed
    sending (then no actor was started). ``address`` is the cluster joined (None: a local
    cluster started for the run, or the Ray already initialised in the process)."""

    model: str = ""
    workers: int = 0
    batches: int = 0
    address: str | None = None
    #: What each actor asked for (``{"CPU": 1.0, "GPU": 0.5}``); empty when none was started.
    resources: dict[str, float] | None = None
    #: Per actor, where it ran: ``node_id``, ``gpu_ids``, the ``resources`` Ray assigned it, and
    #: the ``device`` and ``batch_size`` its model used (None for models without them).
    replicas: list[dict[str, Any]] | None = None

    def ray_settings(self) -> dict[str, Any]:
        """The run's Ray side, for the manifest."""
        return {
            "workers": self.workers,
            "resources_per_worker": self.resources,
            "address": self.address,
            "replicas": self.replicas,
        }

    def describe(self) -> str:
        rate = self.answered / self.seconds if self.seconds else 0.0
        where = f" at {self.address}" if self.address else ""
        return (
            f"{self.requested} requests: {self.answered} answered, {self.skipped} already "
            f"there, {self.errors} errors, {self.batches} batches on {self.workers} Ray "
            f"workers{where}, {self.seconds:.1f} s ({rate:.1f} requests/s)"
        )


class RunStopped(GavelError):
    """The run cannot go on (requests refused alike, a server gone or not there); the message
    says why and what to check. ``summary`` says what was done; all of it is on disk."""

    def __init__(self, message: str, summary: RaySummary):
        super().__init__(message)
        self.summary = summary


@dataclass
class Answered:
    """What a replica sends back for one batch."""

    #: ``(id, JSON line without its newline, failed)`` per request asked, in the order given.
    lines: list[tuple[str, bytes, bool]]
    #: Per line, the deterministic refusal it was (None: an answer or another failure).
    refusals: list[Refusal | None]
    #: Why the replica stopped before the end of the batch (the run must stop), else None.
    stop: str | None = None


def driver_model(
    spec: str, model_options: Mapping[str, Any], gpus_per_worker: float | None = None
) -> Model:
    """The model as the driver needs it (names, box convention, frames, batch size, for the
    prompts and the manifest). An ``hf:`` model is described from its options and config,
    never loaded (:mod:`gavel.models.hf_plan`): only the replicas load its weights."""
    if spec.startswith("hf:"):
        from gavel.models.hf_plan import plan_from_spec

        device = "cuda" if gpus_per_worker else "cpu"
        return plan_from_spec(spec[3:], replica_device=device, **model_options)
    from gavel.models.registry import load_model

    return load_model(spec, **model_options)


class ModelReplica:
    """One Ray actor's model: built once from the spec, then asked batch after batch."""

    def __init__(self, spec: str, model_options: Mapping[str, Any]):
        import ray

        from gavel.models.registry import load_model

        options = dict(model_options)
        if spec.startswith("hf:"):
            options["device"] = replica_device(options.get("device"), ray.get_gpu_ids())
        self.model = load_model(spec, **options)

    def name(self) -> str:
        return self.model.name

    def preflight(self) -> str | None:
        """Run the model's check before the first request (a served model asks which models
        its server serves); the message of the :class:`GavelError` it raised, else None."""
        check = getattr(self.model, "preflight", None)
        if check is None:
            return None

        async def once() -> None:
            try:
                await check()
            finally:
                await cast(ServedModel, self.model).aclose()  # a preflight: a served model

        try:
            asyncio.run(once())
        except GavelError as error:
            return str(error)
        return None

    def placement(self) -> dict[str, Any]:
        """Where this replica runs and what it was given, as Ray sees it from inside."""
        import ray

        context = ray.get_runtime_context()
        return {
            "node_id": context.get_node_id(),
            "gpu_ids": [str(gpu) for gpu in ray.get_gpu_ids()],
            "resources": context.get_assigned_resources(),
            "device": getattr(self.model, "device", None),
            "batch_size": getattr(self.model, "batch_size", None),
        }

    def answer_batch(
        self, requests: list[Request], retried: frozenset[str] = frozenset()
    ) -> Answered:
        """One line per request, in the order given. A model that batches (``hf:``) answers
        in its own batches, as the batched runner asks; any other one request after another
        as the async runner asks (:func:`_answer_one_by_one`), so a call that raises gives the
        line it gives there (``error``, ``error_kind``). ``retried``: the ids whose error lines
        an earlier run wrote (their refusals are known, and stop nothing)."""
        import msgspec

        from gavel.runner.batched import answer_requests

        served = callable(getattr(self.model, "answer_async", None))
        if served or not callable(getattr(self.model, "answer_batch", None)):
            return asyncio.run(_answer_one_by_one(self.model, requests, retried))
        encoder = msgspec.json.Encoder()
        predictions = answer_requests(cast(BatchModel, self.model), requests)
        lines = [
            (request.sample_id, encoder.encode(prediction), prediction.error is not None)
            for request, prediction in zip(requests, predictions, strict=True)
        ]
        return Answered(lines, [None] * len(lines))


async def _answer_one_by_one(model: Model, requests: list[Request],
                             retried: frozenset[str]) -> Answered:  # fmt: skip
    """Ask one request after another with the async runner's attempts: for a served model
    its retries, backoff, the wait for a server gone away and the server's words in the
    error, stopping at the first reason the runner has to stop the run; a model of this
    process is called once per request (a local failure is not one another try mends). A
    fresh count per batch, so a replica never stops on refusals the driver, which sees every
    replica's lines, does not count. (A function, not a method: a class with a coroutine
    method is an async actor to Ray.)"""
    import msgspec

    from gavel.runner import async_runner

    served = callable(getattr(model, "answer_async", None))
    policy = async_runner.RetryPolicy() if served else async_runner.RetryPolicy(retries=0)
    encoder = msgspec.json.Encoder()
    runner = async_runner._Runner(model, None, policy, None, None,
                                  async_runner.AsyncRunSummary(model=model.name))  # fmt: skip
    runner.retried = set(retried)
    answered = Answered([], [])
    try:
        for request in requests:
            runner.last_refusal = None
            prediction = await runner.ask(request)
            failed = prediction.error is not None
            answered.lines.append((request.sample_id, encoder.encode(prediction), failed))
            answered.refusals.append(runner.last_refusal if failed else None)
            if runner.stop_message:
                answered.stop = runner.stop_message
                break
    except async_runner._BudgetExceeded as stop:  # unreachable, or gone for too long
        answered.stop = str(stop)
    finally:
        if served:
            await cast(ServedModel, model).aclose()
    return answered


def _import_ray():
    try:
        import ray
    except ImportError:
        raise ConfigError("the Ray executor needs Ray: pip install ray") from None
    return ray


@writes_output("out")  # one writer of the predictions file
def run_ray(
    spec: str,
    model_options: Mapping[str, Any] | None,
    requests: Iterable[Request],
    out: str | Path,
    *,
    workers: int | None = None,
    ray_address: str | None = None,
    total: int | None = None,
    progress: bool = True,
    batch_size: int = 32,
    actor_options: Mapping[str, Any] | None = None,
    cpus_per_worker: float | None = None,
    gpus_per_worker: float | None = None,
    placement_timeout: float = PLACEMENT_TIMEOUT_S,
    retry_errors: bool = False,
) -> RaySummary:
    """Answer every request not already in ``out`` with ``workers`` Ray actors; returns what
    was done.

    Each actor builds ``load_model(spec, **model_options)`` itself. A Ray already initialised
    in this process is used as it is and left running; otherwise this run connects with
    ``ray.init(address=ray_address)`` (``"auto"``, ``"ray://head:10001"``, ...), or without an
    address (and no ``RAY_ADDRESS`` in the environment) starts a small local cluster
    (``num_cpus`` = max(2, CPUs of all workers), no dashboard), and disconnects (shutting a
    local cluster down) at the end. ``workers`` defaults to the cluster's CPUs divided by the
    CPUs one actor takes. ``actor_options`` go to each actor's ``.options()`` (default
    ``{"num_cpus": 1}``; e.g. ``{"num_gpus": 1}`` for a GPU model); ``cpus_per_worker`` and
    ``gpus_per_worker`` set ``num_cpus`` and ``num_gpus`` there. ``workers`` then defaults to
    as many actors as the cluster's nodes hold. When the cluster cannot hold the actors, the
    run fails with :class:`GavelError` at once on a local cluster, and after
    ``placement_timeout`` seconds (for an autoscaler to add nodes) on a joined one. Nothing is
    started, not even Ray, when every request is already answered. ``retry_errors`` removes
    the error lines of an earlier run first, so their ids are asked again (as the in-process
    async runner does); by default they count as done. Raises :class:`RunStopped` when the
    replicas' requests are refused alike or the server cannot be reached.
    """
    if batch_size < 1:
        raise ConfigError("batch_size must be at least 1")
    if workers is not None and workers < 1:
        raise ConfigError("workers must be at least 1")
    actor_options = dict(actor_options or {})
    if cpus_per_worker is not None:
        actor_options["num_cpus"] = cpus_per_worker
    if gpus_per_worker is not None:
        actor_options["num_gpus"] = gpus_per_worker
    wanted = WorkerResources.of({"num_cpus": 1, **actor_options})
    _check_device(spec, model_options or {}, wanted)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    taken: dict[str, bytes] = {}
    if retry_errors:  # asked again after the rest; put back for samples not asked again
        from gavel.runner.async_runner import _earlier_errors_last, take_errors

        taken = take_errors(out)
        requests = _earlier_errors_last(requests, taken)
    done = completed_ids(out)
    summary = RaySummary()
    refusals = _RefusalCount(retried=frozenset(taken))
    stopped: str | None = None
    started = time.perf_counter()
    pool: _Pool | None = None
    bar = _progress(total, progress)
    try:
        handle = AppendFile(out)  # its write and sync errors name the file
    except BaseException:
        put_back(out, taken)
        raise
    try:
        with bar:
            task = bar.add_task(spec, total=total)
            batches = _batches(requests, done, summary, batch_size, lambda: bar.advance(task))
            unwritten: deque[Any] = deque()
            for batch in batches:
                if pool is None:
                    pool = _Pool(spec, model_options or {}, workers, ray_address, actor_options,
                                 placement_timeout)  # fmt: skip
                    summary.model, summary.workers = pool.model_name, len(pool.actors)
                    summary.address = pool.address
                    summary.resources, summary.replicas = wanted.as_dict(), pool.placements
                    bar.update(task, description=summary.model)
                    window = BATCHES_PER_WORKER * len(pool.actors)
                unwritten.append(pool.submit(batch, refusals.retried))
                summary.batches += 1
                while len(unwritten) >= window and stopped is None:
                    stopped = _write(pool, unwritten.popleft(), handle, done, summary, bar,
                                     task, refusals)  # fmt: skip
                if stopped is not None:
                    break  # the batches in flight are not written: a rerun asks them
            while unwritten and stopped is None:
                stopped = _write(pool, unwritten.popleft(), handle, done, summary, bar, task,
                                 refusals)  # fmt: skip
    finally:
        unsynced = close_synced(handle)  # a full disk must not skip the rest of the cleanup
        try:
            put_back(out, taken)  # the earlier error lines of samples that got no new line
        finally:
            if pool is not None:
                pool.close()
            summary.seconds = time.perf_counter() - started
    if unsynced is not None:
        raise unsynced
    if stopped is not None:
        kept = ""
        if summary.answered or summary.skipped:
            again = ("failed samples are asked again, answered ones are not" if retry_errors
                     else "answered samples are not asked again")  # fmt: skip
            kept = f" Everything written is kept in {out}; rerun the same command to continue ({again})."
        raise RunStopped(f"stopped: {stopped}{kept} {summary.describe()}", summary)
    return summary


def _check_device(spec: str, model_options: Mapping[str, Any], wanted: WorkerResources) -> None:
    """On Ray the GPU a replica uses is the one Ray assigns it: a GPU index cannot be chosen,
    and ``cuda`` needs GPUs asked for."""
    device = model_options.get("device")
    if not spec.startswith("hf:") or device in (None, "auto", "cpu"):
        return
    if str(device).startswith("cuda:"):
        raise ConfigError(
            f"device {device!r}: on Ray each worker uses the GPU Ray assigns it; ask for GPUs "
            "with gpus_per_worker (--gpus-per-worker) instead of naming one"
        )
    if device == "cuda" and not wanted.gpus:
        raise ConfigError("device 'cuda' on Ray needs GPUs per worker (--gpus-per-worker)")


def _batches(
    requests: Iterable[Request],
    done: set[str],
    summary: RaySummary,
    size: int,
    skipped,
) -> Iterator[list[Request]]:
    """Lists of up to ``size`` requests not answered yet (and not repeated in the input)."""
    batch: list[Request] = []
    queued: set[str] = set()
    for request in requests:
        summary.requested += 1
        if request.sample_id in done or request.sample_id in queued:
            summary.skipped += 1
            skipped()
            continue
        queued.add(request.sample_id)
        batch.append(request)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _write(pool, submitted, handle: AppendFile, done: set[str], summary: RaySummary, bar,
           task, refusals: _RefusalCount) -> str | None:  # fmt: skip
    """Wait for one batch (the oldest unwritten one) and append its lines, each flushed
    before it is counted; returns why the run must stop now (else None). A batch is written
    whole (its answers were paid for) even when one of its lines completes a stop."""
    answered: Answered = pool.result(submitted)
    stop = None
    for (sample_id, line, failed), refusal in zip(answered.lines, answered.refusals, strict=True):
        handle.write(line + b"\n")
        handle.flush()
        done.add(sample_id)
        summary.answered += 1
        summary.errors += failed
        bar.advance(task)
        stop = stop or refusals.see(refusal, failed, sample_id)
    return stop or answered.stop


class _RefusalCount:
    """The first lines refused alike, none answered, as the async runner counts them: the
    failures of samples an earlier run failed (``retried``) are known and not counted."""

    def __init__(self, retried: frozenset[str] = frozenset()) -> None:
        self.key: tuple[int | None, str | None] | None = None
        self.count = 0
        #: A line answered, or refused otherwise: no refusal stops the run any more.
        self.over = False
        self.retried = retried

    def see(self, refusal: Refusal | None, failed: bool = True,
            sample_id: str | None = None) -> str | None:  # fmt: skip
        """Count one line (``refusal``: None for an answer or another failure); the stop
        message once the first lines, all this refusal, reach its limit."""
        if self.over or (failed and sample_id in self.retried):
            return None
        if not failed or (refusal is not None and self.key not in (None, refusal.key)):
            self.over = True
            return None
        if refusal is None:
            return None
        self.count += 1
        self.key = refusal.key
        return refusal.stop_message(self.count) if self.count >= refusal.limit else None


class _Pool:
    """The Ray side: the cluster (joined or started), the actors, and which one gets a batch."""

    def __init__(
        self,
        spec: str,
        model_options: Mapping[str, Any],
        workers: int | None,
        address: str | None,
        actor_options: Mapping[str, Any] | None,
        placement_timeout: float = PLACEMENT_TIMEOUT_S,
    ):
        ray = self.ray = _import_ray()
        options = {"num_cpus": 1, **(actor_options or {})}
        wanted = WorkerResources.of(options)
        self.group: Any = None
        self.own_cluster = not ray.is_initialized()
        self.address: str | None = None  # the cluster joined; None: local or already there
        if self.own_cluster:
            address = self.address = address or os.environ.get("RAY_ADDRESS") or None
            if address is None:
                # "local": a new instance, even if a `ray start` cluster runs on this machine.
                ray.init(
                    address="local",
                    num_cpus=max(LOCAL_CPUS, math.ceil((workers or 0) * wanted.cpus)),
                    include_dashboard=False,
                    log_to_driver=False,
                    configure_logging=False,
                )
            else:
                ray.init(address=address, log_to_driver=False, configure_logging=False)
        try:
            if workers is None:
                workers = max(1, workers_that_fit(ray.nodes(), wanted))
            # A local cluster gets no nodes later: what does not fit now never will.
            can_grow = not (self.own_cluster and self.address is None)
            self.group, strategies = reserve(ray, wanted, workers, placement_timeout,
                                             can_grow=can_grow)  # fmt: skip
            replica = ray.remote(ModelReplica)
            self.actors = [
                replica.options(max_restarts=2, max_task_retries=2, scheduling_strategy=strategy,
                                **options).remote(spec, model_options)
                for strategy in strategies
            ]  # fmt: skip
            self.load = [0] * workers
            try:
                names = ray.get([actor.name.remote() for actor in self.actors])
                self.placements = ray.get([actor.placement.remote() for actor in self.actors])
                # Each replica checks its own server list (what it keeps of it decides how
                # soon a refusal stops the run), as the in-process runner does before a run.
                refused = ray.get([actor.preflight.remote() for actor in self.actors])
            except ray.exceptions.RayError as error:
                raise GavelError(
                    f"the Ray workers could not build the model {spec!r}: {_cause(error)}"
                ) from None
            for message in refused:
                if message is not None:
                    raise ConfigError(message)
            self.model_name = names[0]
        except BaseException:
            self.close()
            raise

    def submit(
        self, batch: list[Request], retried: frozenset[str] = frozenset()
    ) -> tuple[int, Any]:
        """Send a batch to the actor with the fewest batches not yet collected (with the ids
        of it an earlier run failed)."""
        index = min(range(len(self.actors)), key=self.load.__getitem__)
        self.load[index] += 1
        known = frozenset(request.sample_id for request in batch) & retried
        return index, self.actors[index].answer_batch.remote(batch, known)

    def result(self, submitted: tuple[int, Any]) -> Answered:
        index, ref = submitted
        try:
            return self.ray.get(ref)
        except self.ray.exceptions.RayError as error:
            raise GavelError(
                f"a Ray worker failed: {_cause(error)}. The lines written are kept; "
                "rerun to continue."
            ) from None
        finally:
            self.load[index] -= 1

    def close(self) -> None:
        for actor in getattr(self, "actors", []):
            with contextlib.suppress(Exception):  # already gone
                self.ray.kill(actor)
        if self.group is not None:
            with contextlib.suppress(Exception):
                self.ray.util.remove_placement_group(self.group)
        if self.own_cluster:
            self.ray.shutdown()


def _cause(error: BaseException) -> str:
    cause = getattr(error, "cause", None) or error
    text = str(cause).strip().splitlines()
    return redact_userinfo(f"{type(cause).__name__}: {text[-1] if text else 'no message'}")
