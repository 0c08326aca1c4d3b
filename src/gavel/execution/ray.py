"""Ray: the samples sharded over actors that each hold a model replica."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gavel.execution.windows import RAY_REQUESTS_PER_TASK

if TYPE_CHECKING:
    from gavel.execution.plan import RunPlan


class RayExecutor:
    """:func:`gavel.runner.ray_executor.run_ray`; the replicas' resources go into the
    manifest (``settings.ray``)."""

    def run(self, plan: RunPlan) -> Any:
        from gavel.runner.ray_executor import run_ray

        s = plan.settings
        timeout: dict[str, Any] = (
            {} if s.placement_timeout is None else {"placement_timeout": s.placement_timeout}
        )
        # retry_errors: as the local executor, failed samples are asked again.
        summary = run_ray(str(s.model), plan.options, plan.prepared.requests, plan.out,
                          workers=s.workers, retry_errors=True, ray_address=s.ray_address,
                          total=plan.prepared.total, progress=not s.no_progress,
                          batch_size=plan.window or RAY_REQUESTS_PER_TASK,
                          gpus_per_worker=s.gpus_per_worker, cpus_per_worker=s.cpus_per_worker,
                          **timeout)  # fmt: skip
        if summary.resources is not None:
            plan.manifest.settings["ray"] = summary.ray_settings()
        return summary
