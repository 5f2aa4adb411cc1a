"""Tables and CSV rows of benchmark results, every figure beside its ratio to the baseline, the
multi-core linear scan (``scan``); brute force keeps a row of its own."""

from __future__ import annotations

import csv
import math
import os
from pathlib import Path

import numpy as np

from .measure import IndexResult
from .workloads import point_kinds

__all__ = ["BASELINE", "COLUMNS", "baseline_line", "format_table", "machine_line", "rows", "write_csv"]

#: the index every ratio is measured against
BASELINE = "scan"

# name, header, format; the CSV has every column, the printed table the ones with a header
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("workload", "workload", "{}"),
    ("index", "index", "{}"),
    ("n", "", "{}"),
    ("threads", "thr", "{}"),
    ("build_s", "build s", "{:.3f}"),
    ("build_first_s", "1st build s", "{:.3f}"),
    ("query_median_us", "q med us", "{:.1f}"),
    ("query_p95_us", "q p95 us", "{:.1f}"),
    ("query_median_objects_us", "q med obj", "{:.1f}"),
    ("query_median_path_us", "q med path", "{:.1f}"),
    ("speedup_vs_scan", "x scan", "{:.2f}"),
    ("read_floor_us", "read us", "{:.1f}"),
    ("x_read", "x read", "{:.2f}"),
    ("floor_median_us", "", "{:.2f}"),
    ("x_floor", "x floor", "{:.1f}"),
    ("mean_visible", "visible", "{:.1f}"),
    ("candidates_per_visible", "cand/vis", "{:.2f}"),
    ("mean_nodes_visited", "nodes", "{:.1f}"),
    ("max_nodes_per_level", "max/lvl", "{}"),
    ("bytes_per_object", "B/obj", "{:.0f}"),
    ("insert_per_s", "insert/s", "{:.3g}"),
    ("remove_per_s", "remove/s", "{:.3g}"),
    ("move_per_s", "move/s", "{:.3g}"),
    ("move_many_per_s", "move_many/s", "{:.3g}"),
    ("dynamic_1pct_ms", "dyn1% ms", "{:.2f}"),
    ("dynamic_10pct_ms", "dyn10% ms", "{:.2f}"),
    ("dynamic_10pct_x_scan", "dyn10% x", "{:.2f}"),
    ("updates", "", "{}"),
)


def rows(results: list[IndexResult], read_us: dict[str, float] | None = None) -> list[dict]:
    """One dict per (workload, index) with every column of :data:`COLUMNS`. ``read_us``: per workload,
    the median read floor of the baseline scan (us)."""
    read_us = read_us or {}
    base = {r.workload: r for r in results if r.index == BASELINE}
    nan = float("nan")
    out = []
    for r in results:
        b = base.get(r.workload)
        floor = float(np.median(r.floor_us)) if r.floor_us.size else nan
        read = read_us.get(r.workload, nan)
        d1 = r.dynamic_ms.get(0.01, nan)
        d10 = r.dynamic_ms.get(0.1, nan)
        at_objects, on_path = point_kinds(r.query_us.shape[-1])
        out.append(
            {
                "workload": r.workload,
                "index": r.index,
                "n": r.n,
                "threads": r.threads,
                "build_s": r.build_s,
                "build_first_s": r.build_first_s,
                "query_median_us": r.median_us,
                "query_p95_us": r.p95_us,
                "query_median_objects_us": r.median_of_us(at_objects),
                "query_median_path_us": r.median_of_us(on_path),
                "speedup_vs_scan": (b.median_us / r.median_us) if b else nan,
                "read_floor_us": read,
                "x_read": r.median_us / read if read > 0 else nan,
                "floor_median_us": floor,
                "x_floor": r.x_floor,
                "mean_visible": r.mean_visible,
                "candidates_per_visible": r.cand_per_visible,
                "mean_nodes_visited": r.mean_nodes,
                "max_nodes_per_level": r.max_per_level,
                "bytes_per_object": r.bytes_per_object,
                "insert_per_s": r.insert_per_s,
                "remove_per_s": r.remove_per_s,
                "move_per_s": r.move_per_s,
                "move_many_per_s": r.move_many_per_s,
                "dynamic_1pct_ms": d1,
                "dynamic_10pct_ms": d10,
                "dynamic_10pct_x_scan": (b.dynamic_ms.get(0.1, nan) / d10) if b and d10 == d10 else nan,
                "updates": r.note,
            }
        )
    return out


def _fmt(fmt: str, v) -> str:
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return "-"
    return fmt.format(v)


def machine_line(where: dict) -> str:
    """One line naming the machine of a run (``where``: :func:`viewer.host.machine.machine`): its figures are
    this CPU's, not another's."""
    return f"machine: {where['host']}, {where['cpu']}, {where['cores']} logical CPUs, no GPU involved"


def baseline_line(table: list[dict]) -> str:
    """One line naming the baseline and the threads it ran on (numba's threading layer beside them)."""
    import numba

    threads = sorted({row["threads"] for row in table if row["index"] == BASELINE})
    try:
        layer = numba.threading_layer()
    except ValueError:  # no parallel kernel has run
        layer = "not started"
    t = "/".join(str(v) for v in threads) or "-"
    return (f"ratios against '{BASELINE}' (16-bit SIMD linear scan + exact float64 recheck) on {t} thread(s) of "
            f"{numba.get_num_threads()} (numba threading layer: {layer}); 'read us' = the time it takes to read "
            f"its 16-bit prefilter arrays once: its floor")


def format_table(table: list[dict]) -> str:
    """The printed table: one block per workload, aligned columns."""
    cols = [(k, h, f) for k, h, f in COLUMNS if h]
    lines = []
    body = [[_fmt(f, row[k]) for k, _, f in cols] for row in table]
    widths = [max(len(h), *(len(b[j]) for b in body)) if body else len(h) for j, (_, h, _) in enumerate(cols)]
    head = "  ".join(h.rjust(w) if j > 1 else h.ljust(w) for j, ((_, h, _), w) in enumerate(zip(cols, widths)))
    last = None
    for row, b in zip(table, body):
        if row["workload"] != last:
            if last is not None:
                lines.append("")
            lines.append(head)
            lines.append("-" * len(head))
            last = row["workload"]
        lines.append("  ".join(s.rjust(w) if j > 1 else s.ljust(w) for j, (s, w) in enumerate(zip(b, widths))))
    return "\n".join(lines)


def write_csv(table: list[dict], path: Path) -> None:
    """Write the table atomically (a temporary file renamed into place)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=[k for k, _, _ in COLUMNS])
        w.writeheader()
        for row in table:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, (float, np.floating)) else v) for k, v in row.items()})
    os.replace(tmp, path)
