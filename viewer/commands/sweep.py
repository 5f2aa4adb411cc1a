"""``viewer sweep SWEEP.toml``: a benchmark grid fanned out on Dask, merged into one CSV."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import _args

HELP = "run a benchmark grid (scenes x N x radius models x ...) on Dask, one CSV for the whole sweep"

DESCRIPTION = """\
A sweep file (TOML) names the axes of a benchmark grid (scene generators, N, radius models, queries,
dynamic shares, frames, updates, seeds) and the indexes; the product of the axes is the set of tasks. A task
is one workload with all the indexes, measured interleaved in one process exactly as 'viewer bench' does, so
every ratio in a task is a same-machine, same-run ratio, wherever the task runs. Workers generate their
scenes from recipe and seed (bit-identical everywhere): no large array travels.

By default the tasks run on an embedded Dask LocalCluster of ONE worker process, one task at a time: tasks
running side by side on one machine disturb each other's timings. --workers N runs more at once (faster,
noisier); --scheduler tcp://HOST:8786 sends them to an existing Dask cluster.

Results: OUT/sweep.csv (a row per task x index, with the task's host, CPU model and thread count), the
bench's plots per task (OUT/tasks/KEY/) and OUT/summary.png (speed-up over the baseline across the axes).
An interrupted sweep run again skips the tasks already in the CSV; a row that does not parse (torn, cut
short, hand-edited) is named in a warning, kept in OUT/sweep-rejected.csv, and its task measured again. One
sweep at a time writes OUT (it holds OUT/sweep.lock): a second one is refused, naming the first one's pid.
A task that fails (out of memory, a missing peer library, a lost worker) is recorded with its reason and
the sweep goes on; a task whose memory estimate does not fit a worker is skipped with a message.

Exit status: 0 when every task finished or was skipped, 100 + K when K tasks failed (K at most 99), 2 for
a bad sweep file or flag, 130 when interrupted. Bundled sweeps: {bundled}.
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    from viewer.sweep import bundled_sweeps

    p = subparsers.add_parser("sweep", help=HELP, description=DESCRIPTION.format(bundled=", ".join(bundled_sweeps())),
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sweep", metavar="SWEEP", help="a sweep file (.toml) or a bundled sweep's name")
    p.add_argument("-o", "--out", type=_args.directory, metavar="DIR",
                   help="results directory (default runs/sweep-NAME); run again with the same DIR to resume")
    p.add_argument("--workers", type=_args.positive_int, default=1, metavar="N",
                   help="worker processes of the local cluster (default 1: one task at a time, honest timings)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="an existing Dask scheduler, e.g. tcp://host:8786 (instead of a local cluster; tcp:// only)")
    p.add_argument("--connect-timeout", type=_args.positive_float, default=None, metavar="SECONDS",
                   help="give up on --scheduler when it has not accepted and answered within this time "
                        "(default 15)")
    p.add_argument("--dry-run", action="store_true",
                   help="list the tasks and their memory estimates, run nothing")
    p.add_argument("--no-plots", action="store_true", help="write the CSV only")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)
    return p


def run(args) -> int:
    from viewer.errors import UserError
    from viewer.sweep import load_sweep, run_sweep

    from viewer.sweep.run import CONNECT_TIMEOUT, check_scheduler_address

    sweep = load_sweep(args.sweep)
    if args.scheduler is not None and args.workers != 1:
        raise UserError("--workers starts a local cluster; with --scheduler the cluster's own workers run the tasks")
    if args.connect_timeout is not None and args.scheduler is None:
        raise UserError("--connect-timeout is the time to reach a --scheduler; give --scheduler too")
    if args.scheduler is not None:
        check_scheduler_address(args.scheduler)
    out = args.out or Path("runs") / f"sweep-{sweep.name}"
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: exists and is not a directory")
    if args.dry_run:
        return _dry_run(sweep, out)
    # the output directory is made, checked writable and locked by run_sweep (sweep.lock), after the scheduler
    # answered: a second sweep into it is refused at once
    res = run_sweep(sweep, out, workers=args.workers, scheduler=args.scheduler, plots=not args.no_plots,
                    progress=not args.quiet, connect_timeout=args.connect_timeout or CONNECT_TIMEOUT)
    print(f"sweep {sweep.name}: {res.total} tasks: {res.ok} measured now, {res.already} already done, "
          f"{res.skipped} skipped, {res.failed} failed")
    for label, reason in res.failures:
        print(f"  failed: {label}: {reason}")
    print(f"wrote {res.csv}", file=sys.stderr)
    for p in res.plots:
        print(f"wrote {p}", file=sys.stderr)
    return 0 if not res.failed else 100 + min(res.failed, 99)


def _dry_run(sweep, out: Path) -> int:
    from viewer.bench.run import available_bytes
    from viewer.sweep import plan

    rows = plan(sweep, out / "sweep.csv", log=lambda s: print(f"warning: {s}", file=sys.stderr))
    have = available_bytes()
    print(f"sweep {sweep.name} ({sweep.source}): {len(rows)} tasks, each measuring "
          f"{', '.join(sweep.indexes)}")
    print(f"{'task':<12}  {'workload':<40} {'queries':>7} {'dynamic':>10} {'seed':>4}  {'memory':>9}  status")
    for t, need, done in rows:
        status = "done (in CSV)" if done else ("too large here" if need > 0.85 * have else "to run")
        print(f"{t.key:<12}  {t.label:<40} {t.queries:>7} {t.dynamic:>10} {t.seed:>4}  "
              f"{need / 2**30:7.2f} GiB  {status}")
    print(f"this machine has {have / 2**30:.1f} GiB available; nothing was run")
    return 0
