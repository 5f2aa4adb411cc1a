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
from viewer.terminal.text import clip

from .lock import locked
from .results import failure_rows, open_results, read_results, task_rows
from .spec import Sweep, Task, sweep_shares
from .task import bench_config, run_task

__all__ = ["CONNECT_TIMEOUT", "SweepOutcome", "check_scheduler_address", "estimate", "plan", "run_sweep"]

MEMORY_SHARE = 0.85  # a task may plan to use this share of a worker's memory
#: seconds a sweep waits for a Dask scheduler to accept and answer (``--connect-timeout``)
CONNECT_TIMEOUT = 15.0


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


def plan(sweep: Sweep, csv_path: Path | None, log: Callable[[str], None] | None = None
         ) -> list[tuple[Task, int, bool]]:
    """(task, estimated bytes, already in the CSV) for every task of the sweep, in order. Reads the CSV and
    changes nothing (a sweep may be running into it); ``log`` gets the warnings about rows that do not parse."""
    done: set[str] = set()
    if csv_path is not None:
        done, warnings = read_results(Path(csv_path), sweep_shares(sweep))
        for w in warnings:
            (log or (lambda s: None))(w)
    return [(t, estimate(t), t.key in done) for t in sweep.tasks()]


def check_scheduler_address(text: str) -> str:
    """``tcp://HOST:PORT`` or ``HOST:PORT`` -> ``tcp://HOST:PORT``. :class:`UserError` naming ``--scheduler``
    for any other scheme (``tls://`` needs certificates a sweep does not take, ``ucx://`` a library it does not
    use), a missing host or a port outside 1..65535."""
    from urllib.parse import urlsplit

    t = text.strip()
    if not t:
        raise UserError("--scheduler: an empty address; give the Dask scheduler as tcp://HOST:PORT")
    scheme, sep, loc = t.partition("://")
    if not sep:
        scheme, loc = "tcp", t
    if scheme.lower() != "tcp":
        raise UserError(f"--scheduler {text}: {scheme}:// addresses are not supported; a sweep connects to its "
                        "Dask scheduler over plain tcp:// (tcp://HOST:8786)")
    try:
        u = urlsplit("tcp://" + loc)
        host, port = u.hostname, u.port
    except ValueError:
        host, port = None, None
    if not host or port is None or not 1 <= port <= 65535 or u.path or u.query or u.fragment or u.username:
        raise UserError(f"--scheduler {text}: not an address of the form tcp://HOST:PORT (port in 1..65535)")
    return f"tcp://{loc}"


def _probe(address: str, timeout: float) -> None:
    """Connect to the Dask scheduler at ``address`` (``tcp://``) and exchange Dask's handshake, all within
    ``timeout`` seconds (Dask's own connect waits for the peer's handshake without a limit: a port that accepts
    and never answers would hold the sweep until the peer closes). :class:`UserError` naming ``--scheduler``
    and what went wrong: nothing listening, no answer, an HTTP server (the dashboard's port?), another protocol."""
    import asyncio

    from distributed.comm.addressing import parse_address
    from distributed.comm.registry import get_backend

    scheme, loc = parse_address(address)

    async def exchange():
        connector = get_backend(scheme).get_connector()
        try:
            comm = await asyncio.wait_for(connector.connect(loc), timeout)
        except asyncio.TimeoutError:
            return f"no connection within {timeout:g} s"
        except OSError as exc:
            why = str(exc).split(": ", 1)[-1] if str(exc).startswith("in <") else str(exc)  # Dask's "in <obj>: "
            return f"cannot reach the Dask scheduler ({why})"
        try:
            await asyncio.wait_for(comm.write(comm.handshake_info()), timeout)
            await asyncio.wait_for(comm.read(), timeout)
        except asyncio.TimeoutError:
            return (f"the port accepts connections but no Dask scheduler answered within {timeout:g} s "
                    "(--connect-timeout)")
        except OSError:
            return "the peer closed the connection without a Dask scheduler's answer"
        except Exception:  # noqa: BLE001: what Dask makes of another protocol's bytes (MemoryError, ...)
            return "protocol"
        finally:
            comm.abort()
        return None

    problem = asyncio.run(exchange())
    if problem == "protocol":
        host, _, port = loc.rpartition(":")
        if _speaks_http(host.strip("[]"), int(port), timeout):
            problem = ("an HTTP server answered, not a Dask scheduler (the dashboard's port? the scheduler's is "
                       "usually 8786)")
        else:
            problem = "the peer answered, but not in Dask's protocol: not a Dask scheduler"
    if problem:
        raise UserError(f"--scheduler {address}: {problem}")


def _speaks_http(host: str, port: int, timeout: float) -> bool:
    """Whether the peer at ``host:port`` answers a ``HEAD /`` in HTTP."""
    import socket

    try:
        with socket.create_connection((host, port), timeout=timeout) as s:
            s.sendall(b"HEAD / HTTP/1.0\r\n\r\n")
            got = b""
            while len(got) < 5:
                chunk = s.recv(5 - len(got))
                if not chunk:
                    break
                got += chunk
            return got == b"HTTP/"
    except OSError:
        return False


def _client(workers: int, scheduler: str | None, connect_timeout: float = CONNECT_TIMEOUT):
    import dask
    from dask.distributed import Client, LocalCluster

    if scheduler:
        # every later connection (a reconnect, a worker's address) gives up after the same time
        dask.config.set({"distributed.comm.timeouts.connect": f"{connect_timeout}s"})
        try:
            return Client(scheduler, timeout=f"{connect_timeout}s"), None
        except (OSError, TimeoutError) as exc:
            raise UserError(f"--scheduler {scheduler}: cannot reach the Dask scheduler ({exc})") from None
        except Exception as exc:  # noqa: BLE001: what Dask makes of a peer that is not a scheduler
            raise UserError(f"--scheduler {scheduler}: not a Dask scheduler ({type(exc).__name__}: "
                            f"{clip(str(exc), 200)})") from None
    # a worker that dies (out of memory, killed) fails its task at once instead of being retried three times
    dask.config.set({"distributed.scheduler.allowed-failures": 0})
    # no dashboard; the scheduler's own HTTP server on any free port (its default, 8787, warns when another
    # cluster holds it)
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                           scheduler_kwargs={"dashboard_address": ":0"}, silence_logs=logging.ERROR)
    return Client(cluster), cluster


def _worker_memory(client) -> int:
    from viewer.bench.run import available_bytes

    limits = [w.get("memory_limit") or 0 for w in client.scheduler_info()["workers"].values()]
    limits = [m for m in limits if m > 0]
    return min(limits) if limits else available_bytes()


def run_sweep(sweep: Sweep, out: Path, *, workers: int = 1, scheduler: str | None = None, plots: bool = True,
              log: Callable[[str], None] = lambda s: print(s, file=sys.stderr, flush=True),
              progress: bool = True, connect_timeout: float = CONNECT_TIMEOUT) -> SweepOutcome:
    """Run every task of ``sweep`` not already in ``out/sweep.csv``; returns the counts.

    Rows are appended as each task finishes. Ctrl-C cancels what is running and keeps what finished: run the
    same command again to resume. ``out`` is locked for the whole run (:func:`viewer.sweep.lock.locked`): a
    second sweep into it is refused at once. A ``scheduler`` is checked (its address, then a connection and
    Dask's handshake within ``connect_timeout`` seconds) before anything is written.
    """
    out = Path(out)
    if scheduler is not None:
        scheduler = check_scheduler_address(scheduler)
        _probe(scheduler, connect_timeout)
    with locked(out):
        return _run_locked(sweep, out, workers, scheduler, plots, log, progress, connect_timeout)


#: the sweep's metadata beside sweep.csv: what it is (format, version), the sweep file, and each run into the
#: directory (a resume is a run) with its provenance (the coordinating process's version, commit, machine)
META_NAME, FORMAT, FORMAT_VERSION = "sweep.json", "viewdist-sweep", 1


def _note_run(path: Path, sweep: Sweep, tasks: int, where: str) -> None:
    """Add this run to ``path`` (sweep.json), written whole; earlier runs are kept (a file that cannot be read
    as one is replaced: the CSV, not this note, holds the measurements)."""
    import datetime as _dt
    import json

    from viewer.recording.meta import write_json_atomic
    from viewer.system.provenance import provenance

    try:
        runs = json.loads(path.read_text()).get("runs", []) if path.is_file() else []
        runs = runs if isinstance(runs, list) else []
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        runs = []
    runs.append({"date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), "scheduler": where,
                 "tasks": tasks, "provenance": provenance()})
    write_json_atomic(path, {"format": FORMAT, "format_version": FORMAT_VERSION, "sweep": sweep.name,
                             "source": sweep.source, "indexes": list(sweep.indexes), "csv": "sweep.csv",
                             "runs": runs})


def _run_locked(sweep: Sweep, out: Path, workers: int, scheduler: str | None, plots: bool,
                log: Callable[[str], None], progress: bool, connect_timeout: float) -> SweepOutcome:
    from viewer.terminal.progress import Progress

    results = open_results(out / "sweep.csv", sweep_shares(sweep))
    for w in results.warnings:
        log(w)
    tasks = sweep.tasks()
    _note_run(out / META_NAME, sweep, len(tasks), scheduler or f"local, {workers} worker(s)")
    keys = {t.key for t in tasks}
    todo = [t for t in tasks if t.key not in results.done]
    outcome = SweepOutcome(total=len(tasks), already=len(tasks) - len(todo), csv=results.path)
    if outcome.already:
        log(f"{outcome.already} of {len(tasks)} tasks already in {results.path}: skipped (resuming)")
    others = {r["task"] for r in results.rows} - keys
    if others:
        # the sweep file changed since those rows were written: they stay in the CSV (nothing measured is
        # lost), and the summary shows this sweep's tasks only
        log(f"{len(others)} task{'s' if len(others) > 1 else ''} in {results.path} {'are' if len(others) > 1 else 'is'} "
            f"not in this sweep (its file changed since): kept in the CSV, left out of the summary")
    if not todo:
        results.close()
        outcome.plots = _summary(results.rows, out, keys) if plots else []
        return outcome
    where = scheduler or (f"a local Dask cluster of {workers} worker process{'es' if workers > 1 else ''}")
    log(f"starting {where} ...")
    try:
        client, cluster = _client(workers, scheduler, connect_timeout)
    except BaseException:
        results.close()
        raise
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
                reason = clip(f"{type(exc).__name__}: {exc}".strip().splitlines()[0], 500)
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
        outcome.plots = _summary(results.rows, out, keys)
    return outcome


def _task_plots(rows: list[dict], where: Path) -> None:
    from viewer.bench.plots import plot_bench

    where.mkdir(parents=True, exist_ok=True)
    plot_bench(rows, where)


def _summary(rows: list[dict], out: Path, keys: set[str]) -> list[Path]:
    """The sweep's summary plot of the rows of the tasks ``keys`` (this sweep's)."""
    from .plots import plot_summary

    path = plot_summary([r for r in rows if r["task"] in keys], out / "summary.png")
    return [path] if path else []
