"""Run a sweep's tasks on Dask (``dask.distributed``) and gather them into one CSV.

By default an embedded ``LocalCluster`` of **one** worker process with one task slot: tasks running side by
side on one machine disturb each other's timings, so one at a time is the honest default; ``workers`` starts
more where a user accepts that. ``scheduler`` (``tcp://host:8786``) sends the same tasks to an existing cluster.
Every task is measured whole on one worker (all its indexes interleaved in one process), so its ratios never
mix machines; its row says which machine.
"""

from __future__ import annotations

import logging
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from viewer.errors import UserError

from .results import failure_rows, open_results, task_rows
from .spec import Sweep, Task
from .task import bench_config, run_task

__all__ = ["SweepOutcome", "estimate", "plan", "run_sweep"]

MEMORY_SHARE = 0.85  # a task may plan to use this share of a worker's memory


@dataclass
class SweepOutcome:
    """What :func:`run_sweep` did: ``total`` tasks, of which ``already`` were in the CSV before, and the
    counts that ``ok``, ``failed`` or were ``skipped`` now; the CSV, the plots written, and ``(label,
    reason)`` of each failure."""

    total: int
    already: int = 0
    ok: int = 0
    failed: int = 0
    skipped: int = 0
    csv: Path | None = None
    plots: list[Path] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)


def estimate(task: Task) -> int:
    """Peak bytes of the task with every index built at once (the bench's estimate)."""
    from viewer.bench.run import estimate_bytes

    return estimate_bytes(bench_config(task), task.n)


def plan(sweep: Sweep, csv_path: Path | None) -> list[tuple[Task, int, bool]]:
    """(task, estimated bytes, already in the CSV) for every task of the sweep, in order."""
    done: set[str] = set()
    if csv_path is not None and Path(csv_path).exists():
        res = open_results(csv_path)
        res.close()
        done = res.done
    return [(t, estimate(t), t.key in done) for t in sweep.tasks()]


def _client(workers: int, scheduler: str | None):
    import dask
    from dask.distributed import Client, LocalCluster

    if scheduler:
        try:
            return Client(scheduler, timeout="15s"), None
        except (OSError, TimeoutError) as exc:
            raise UserError(f"--scheduler {scheduler}: cannot reach the Dask scheduler ({exc})") from None
        except ValueError as exc:
            raise UserError(f"--scheduler {scheduler}: {exc}") from None
    # a worker that dies (out of memory, killed) fails its task at once instead of being retried three times
    dask.config.set({"distributed.scheduler.allowed-failures": 0})
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                           silence_logs=logging.ERROR)
    return Client(cluster), cluster


def _worker_memory(client) -> int:
    from viewer.bench.run import available_bytes

    limits = [w.get("memory_limit") or 0 for w in client.scheduler_info()["workers"].values()]
    limits = [m for m in limits if m > 0]
    return min(limits) if limits else available_bytes()


def run_sweep(sweep: Sweep, out: Path, *, workers: int = 1, scheduler: str | None = None, plots: bool = True,
              log: Callable[[str], None] = lambda s: print(s, file=sys.stderr, flush=True),
              progress: bool = True) -> SweepOutcome:
    """Run every task of ``sweep`` not already in ``out/sweep.csv``; returns the counts.

    Rows are appended as each task finishes. Ctrl-C cancels what is running and keeps what finished: run the
    same command again to resume.
    """
    from viewer.host.progress import Progress

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    results = open_results(out / "sweep.csv")
    tasks = sweep.tasks()
    todo = [t for t in tasks if t.key not in results.done]
    outcome = SweepOutcome(total=len(tasks), already=len(tasks) - len(todo), csv=results.path)
    if outcome.already:
        log(f"{outcome.already} of {len(tasks)} tasks already in {results.path}: skipped (resuming)")
    if not todo:
        results.close()
        outcome.plots = _summary(results.rows, out) if plots else []
        return outcome
    where = scheduler or (f"a local Dask cluster of {workers} worker process{'es' if workers > 1 else ''}")
    log(f"starting {where} ...")
    client, cluster = _client(workers, scheduler)
    fresh: list[dict] = []
    futures = {}
    try:
        memory = _worker_memory(client)
        for t in todo:
            need = estimate(t)
            if need > MEMORY_SHARE * memory:
                why = (f"estimated {need / 2**30:.1f} GiB does not fit a worker's {memory / 2**30:.1f} GiB "
                       f"(at most {MEMORY_SHARE:.0%})")
                log(f"[{t.label}] skipped: {why}")
                results.write(failure_rows(t, "skipped", why))
                outcome.skipped += 1
                continue
            fut = client.submit(run_task, t, key=f"viewer-sweep-{t.key}-{time.monotonic_ns()}", pure=False)
            futures[fut] = t
        log(f"{len(futures)} tasks scheduled on {len(client.scheduler_info()['workers'])} worker(s)")
        bar = Progress(len(futures), f"sweep {sweep.name}", unit="tasks", enabled=progress)
        from dask.distributed import as_completed

        for k, fut in enumerate(as_completed(list(futures)), 1):
            t = futures[fut]
            try:
                res = fut.result()
            except Exception as exc:  # a failed task never stops the sweep: it is recorded with its reason
                reason = f"{type(exc).__name__}: {exc}".strip().splitlines()[0][:500]
                if type(exc).__name__ == "KilledWorker":
                    reason = f"worker lost (killed or out of memory): {reason}"
                results.write(failure_rows(t, "failed", reason))
                outcome.failed += 1
                outcome.failures.append((t.label, reason))
                log(f"\n[{t.label}] failed: {reason}")
            else:
                rows = task_rows(t, res)
                results.write(rows)
                if rows[0]["status"] == "ok":
                    outcome.ok += 1
                    fresh.extend(rows)
                    if plots:
                        _task_plots(res["rows"], out / "tasks" / t.key)
                else:
                    outcome.skipped += 1
                    log(f"\n[{t.label}] skipped: {rows[0]['reason']}")
            bar.update(k)
        bar.close()
    except KeyboardInterrupt:
        for fut in futures:
            fut.cancel()
        log(f"\ninterrupted: {len(results.rows)} rows of finished tasks are in {results.path}; "
            "run the same command again to resume")
        raise
    finally:
        results.close()
        client.close()
        if cluster is not None:
            cluster.close()
    if plots:
        outcome.plots = _summary(results.rows, out)
    return outcome


def _task_plots(rows: list[dict], where: Path) -> None:
    from viewer.bench.plots import plot_bench

    where.mkdir(parents=True, exist_ok=True)
    plot_bench(rows, where)


def _summary(rows: list[dict], out: Path) -> list[Path]:
    from .plots import plot_summary

    path = plot_summary(rows, out / "summary.png")
    return [path] if path else []
