"""One sweep task, run where a worker runs it: ``viewer bench``'s own measurement of one workload.

:func:`run_task` is what a Dask worker executes. It generates the task's scene from the generator and seed,
builds and measures every index interleaved (:func:`viewer.bench.run_bench`, unchanged), and returns the bench's
rows with the facts about the machine that measured them, so figures from different machines are never mixed
in one ratio.
"""

from __future__ import annotations

import time

from viewer.system.machine import machine

from .spec import Task, dynamic_shares

__all__ = ["bench_config", "machine", "run_task"]


def bench_config(task: Task):
    """The :class:`viewer.bench.BenchConfig` of one task (one scene, one N, one radius model, all its indexes)."""
    from viewer.bench.run import BenchConfig, parse_radius_spec
    from viewer.index import parse_index_spec

    return BenchConfig(
        scenes=[task.scene],
        sizes=[task.n],
        indexes=[parse_index_spec(s) for s in task.indexes],
        queries=task.queries,
        updates=task.updates,
        dynamic=dynamic_shares(task),
        frames=task.frames,
        seed=task.seed,
        radii=[parse_radius_spec(task.radius)],
    )


def run_task(task: Task) -> dict:
    """Measure one task; returns ``{"rows": [...bench rows], "log": [...], "machine": {...}, "seconds": s}``.

    A row list shorter than the task's indexes means some were skipped (unavailable peers, a size that would not
    fit): the log lines say why. Exceptions propagate: the caller records the task as failed with the reason.
    """
    from viewer.bench.run import run_bench

    log: list[str] = []
    t0 = time.perf_counter()
    rows = run_bench(bench_config(task), log=log.append)
    return {"rows": rows, "log": log, "machine": machine(), "seconds": time.perf_counter() - t0}
