"""``viewer bench`` after its arguments: the run (:func:`viewer.bench.run.run_bench`, its compilations said
on stderr), then the machine and baseline lines, the table, ``bench.csv``, ``bench.json`` (the machine,
package versions, command, settings and every row) and the figures, into one output directory that is
removed again when the run is refused or stopped before writing.
"""

from __future__ import annotations

import datetime as _dt
import shutil
import sys
from pathlib import Path

__all__ = ["BENCH_FILES", "FORMAT", "FORMAT_VERSION", "bench_and_write"]

#: what a bench writes into its directory: its table, its metadata and its figures (viewer.bench.plots.plot_bench)
BENCH_FILES = ("bench.csv", "bench.json", "bench_samples.parquet", "bench.png", "bench_scaling.png",
               "bench_shares.png")

#: bench.json's format: its name and version (1: the files before it said so; 2: format, version and provenance)
FORMAT, FORMAT_VERSION = "viewdist-bench", 2


def bench_and_write(cfg, out: Path, *, config: dict, force: bool, wide: bool, plots: bool) -> int:
    """Run the bench ``cfg`` (a :class:`viewer.bench.run.BenchConfig`) and write its results into ``out``.

    config : what ``bench.json`` records of the settings, in order (its ``dynamic`` is replaced by the shares
    of moving objects measured); force : replace results already in ``out``
    (refused before anything runs otherwise); wide : print every column (else those that fit the terminal);
    plots : draw the figures. ``out`` is made and checked writable first (:func:`viewer.files.output.writable_dir`).
    Returns the exit status (0).
    """
    from ..files.output import filled_dir, refuse_replacing, writable_dir
    from ..kernels.compile import reporting
    from ..recording.meta import write_json_atomic
    from ..system.provenance import provenance
    from ..system.machine import machine, machine_line, system
    from .report import baseline_line, floor_lines, format_table, json_rows, write_csv
    from .run import measured_shares, run_bench
    from .samples import SAMPLES_FILE, write_samples

    refuse_replacing([out / f for f in BENCH_FILES], f"--out {out}", "viewer bench", force)
    with filled_dir(out, writable_dir):  # removed again when refused or stopped before writing
        results: list = []
        with reporting(sys.stderr):  # a first run says what it compiles while "warming kernels"
            table = run_bench(cfg, keep=results)
        where = machine()
        print(machine_line(where))
        print(baseline_line(table))
        width = shutil.get_terminal_size().columns
        print(format_table(table, width=width, wide=wide))
        if not wide and table:
            print(f"(the columns that fit {width} characters; --wide prints every one, bench.csv has them all)")
        write_csv(table, out / "bench.csv")
        shares = measured_shares(cfg)
        for line in floor_lines(table, shares, width):
            print(line)
        write_samples(results, out / SAMPLES_FILE)
        origin = provenance()
        write_json_atomic(out / "bench.json", {
            "format": FORMAT, "format_version": FORMAT_VERSION, "provenance": origin,
            "machine": {"platform": system(), **where},
            "packages": origin["packages"], "command": list(sys.argv),
            "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "config": {**config, "dynamic": shares},  # (the shares measured, in the place config keeps for them)
            "columns": list(table[0]) if table else [],
            "rows": json_rows(table),
        })
        print(f"\nwrote {out / 'bench.csv'}, {out / 'bench.json'} (the machine, packages, command and commit), "
              f"{out / SAMPLES_FILE} (every timed sample)", file=sys.stderr)
        if plots and table:
            from .plots import plot_bench

            for path in plot_bench(table, out, machine=where["cpu"]):
                print(f"wrote {path}", file=sys.stderr)
    return 0
