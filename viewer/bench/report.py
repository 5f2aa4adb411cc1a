"""Tables and CSV rows of benchmark results, every figure beside its ratio to the baseline, the
multi-core linear scan (``scan``); brute force keeps a row of its own."""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

import numpy as np

from viewer.frame.ranges import BAND_COLUMNS
from viewer.files.output import atomic_file
from viewer.system.machine import machine_line  # (re-exported: the bench prints it)
from viewer.frame.stages import TIME_STATS

from .result import IndexResult
from .workloads import point_kinds

__all__ = ["BASELINE", "COLUMNS", "CORE", "DEFAULT_SHARES", "DYNAMIC_STATS", "RANGE_COLUMNS", "baseline_line", "columns",
           "dynamic_columns", "floor_lines", "format_table", "json_rows", "machine_line", "rows", "share_label", "write_csv"]

#: the index every ratio is measured against
BASELINE = "scan"

#: the shares of objects moving per frame that ``viewer bench`` measures by default (``--dynamic``)
DEFAULT_SHARES: tuple[float, ...] = (0.01, 0.1)

# name, header, format; the CSV has every column, the printed table the ones with a header. The dynamic
# workload's columns (four per share measured) go between _STATIC and _TAIL: see columns().
_STATIC: tuple[tuple[str, str, str], ...] = (
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
    # what each rate above is made of: the calls the index actually received (objects, for move_many) and
    # the seconds they took; the rate is the one over the other
    ("removes", "", "{:d}"),
    ("remove_s", "", "{:.6g}"),
    ("inserts", "", "{:d}"),
    ("insert_s", "", "{:.6g}"),
    ("moves", "", "{:d}"),
    ("move_s", "", "{:.6g}"),
    ("batch_moves", "", "{:d}"),
    ("move_many_s", "", "{:.6g}"),
)
_TAIL: tuple[tuple[str, str, str], ...] = (("updates", "", "{}"),)

#: the columns of a workload whose scene has visibility ranges (issue 24; :mod:`viewer.bench.ranges`), between
#: :data:`_STATIC` and the dynamic ones, in every row of a run with such a workload (NaN in the others'): the
#: query followed by the range filter (median, us; its speed-up over the scan's), the filter alone (median,
#: us), and per camera point on average the objects in range, per LOD band (band 3: band 3 and coarser) and
#: the HLOD proxies among them
RANGE_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("range_query_median_us", "q+rng us", "{:.1f}"),
    ("range_speedup_vs_scan", "rng x scan", "{:.2f}"),
    ("range_filter_median_us", "rng us", "{:.2f}"),
    ("mean_in_range", "in range", "{:.1f}"),
    *((f"mean_{b}", b, "{:.1f}") for b in BAND_COLUMNS),
    ("mean_proxies", "proxies", "{:.1f}"),
)

#: the columns the printed table keeps by default (``viewer bench --wide`` prints every headed column; the
#: CSV always has them all), most important first: when even these do not fit the terminal, the last go
#: first (the dynamic workload's columns, of every share measured, count as ``dynamic``)
CORE: tuple[str, ...] = ("workload", "index", "query_median_us", "speedup_vs_scan", "build_s", "bytes_per_object",
                         "ranges", "dynamic", "query_p95_us", "x_read", "candidates_per_visible", "threads")


def share_label(share: float) -> str:
    """A share of objects moving as the percentage in its column names: 0.01 -> ``"1"``, 0.005 -> ``"0.5"``,
    1.0 -> ``"100"`` (6 significant digits)."""
    return f"{share * 100:.6g}"


#: the statistics of the moving frames (name in the column, printed header, percentile of the frames):
#: the median, and the worst frames a player sees as a stutter (a subset of ``viewer compare``'s,
#: :data:`viewer.frame.stages.TIME_STATS`)
DYNAMIC_STATS: tuple[tuple[str, str, float], ...] = tuple(
    ("" if name == "median" else f"{name}_", "ms" if name == "median" else name, q)
    for name, q in TIME_STATS if name in ("median", "p99", "max"))


def dynamic_columns(share: float) -> tuple[tuple[str, str, str], ...]:
    """The columns of one share moving: the frame cost's median, p99 and max (ms, over the frames measured:
    ``--frames``, at least 100 by default) and the scan's median over this index's; in the CSV also the
    ``move_many`` alone (median and p99, ms), the workload's two update floors measured in the same frames
    (:mod:`viewer.kernels.floors`: the movers' rows written at their ids, and one after another; median ms) and
    the ``move_many`` over the scatter floor."""
    p = share_label(share)
    return (*((f"dynamic_{p}pct_{key}ms", f"dyn{p}% {head}", "{:.2f}") for key, head, _ in DYNAMIC_STATS),
            (f"dynamic_{p}pct_x_scan", f"dyn{p}% x", "{:.2f}"),
            (f"dynamic_{p}pct_move_ms", "", "{:.3f}"),
            (f"dynamic_{p}pct_move_p99_ms", "", "{:.3f}"),
            (f"dynamic_{p}pct_scatter_floor_ms", "", "{:.3f}"),
            (f"dynamic_{p}pct_contiguous_floor_ms", "", "{:.3f}"),
            (f"dynamic_{p}pct_move_x_floor", "", "{:.2f}"))


def columns(shares=DEFAULT_SHARES, ranges: bool = False) -> tuple[tuple[str, str, str], ...]:
    """Every column of a run that measured the dynamic workload at ``shares`` (fractions in (0, 1], in
    the order given; none: no dynamic column) and (``ranges``) a scene with visibility ranges
    (:data:`RANGE_COLUMNS`): (name, printed header or "" for the CSV only, format)."""
    dyn = tuple(c for s in shares for c in dynamic_columns(s))
    return (*_STATIC, *(RANGE_COLUMNS if ranges else ()), *dyn, *_TAIL)


#: the columns of a run at the default shares (:data:`DEFAULT_SHARES`)
COLUMNS: tuple[tuple[str, str, str], ...] = columns()


def rows(results: list[IndexResult], read_us: dict[str, float] | None = None,
         shares=DEFAULT_SHARES) -> list[dict]:
    """One dict per (workload, index) with every column of :func:`columns` of ``shares`` (the shares of
    the dynamic workload measured, keys of :attr:`IndexResult.dynamic_frames_ms`), in that order. ``read_us``: per
    workload, the median read floor of the baseline scan (us)."""
    read_us = read_us or {}
    base = {r.workload: r for r in results if r.index == BASELINE}
    nan = float("nan")
    ranged = any(r.range_query_us.size for r in results)  # the range columns in every row, or in none
    out = []
    for r in results:
        b = base.get(r.workload)
        floor = float(np.median(r.floor_us)) if r.floor_us.size else nan
        read = read_us.get(r.workload, nan)
        at_objects, on_path = point_kinds(r.query_us.shape[-1])
        row = {
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
            "max_nodes_per_level": int(r.max_per_level),
            "bytes_per_object": r.bytes_per_object,
            "insert_per_s": r.insert_per_s,
            "remove_per_s": r.remove_per_s,
            "move_per_s": r.move_per_s,
            "move_many_per_s": r.move_many_per_s,
            "removes": r.removes,
            "remove_s": r.remove_s,
            "inserts": r.inserts,
            "insert_s": r.insert_s,
            "moves": r.moves,
            "move_s": r.move_s,
            "batch_moves": r.batch_moves,
            "move_many_s": r.move_many_s,
        }
        if ranged:
            row.update(_range_cells(r, b))
        for share in shares:
            *stats, (x, _, _), (mv, _, _), (mv99, _, _), (sf, _, _), (cf, _, _), (xf, _, _) = dynamic_columns(share)
            for (col, _, _), (_, _, q) in zip(stats, DYNAMIC_STATS):
                row[col] = r.dynamic_ms(share, q)
            d = r.dynamic_ms(share)
            row[x] = (b.dynamic_ms(share) / d) if b and d > 0 else nan
            row[mv], row[mv99] = r.move_ms(share), r.move_ms(share, 99.0)
            row[sf], row[cf] = r.floor_ms(share), r.floor_ms(share, contiguous=True)
            row[xf] = row[mv] / row[sf] if row[sf] > 0 else nan
        row["updates"] = r.note
        out.append(row)
    return out


def _range_cells(r: IndexResult, b: IndexResult | None) -> dict:
    """The :data:`RANGE_COLUMNS` of ``r`` (``b``: the workload's baseline result, or None); NaN for a workload
    measured without ranges."""
    nan = float("nan")
    if not r.range_query_us.size:
        return {name: nan for name, _, _ in RANGE_COLUMNS}
    q = r.range_query_us.shape[-1]
    med = float(np.median(r.range_query_us))
    base = float(np.median(b.range_query_us)) if b is not None and b.range_query_us.size else nan
    cells = {
        "range_query_median_us": med,
        "range_speedup_vs_scan": base / med if med > 0 else nan,
        "range_filter_median_us": float(np.median(r.range_filter_us)),
        "mean_in_range": r.in_range / q,
    }
    cells.update({f"mean_{name}": float(r.band_sums[j]) / q for j, name in enumerate(BAND_COLUMNS)})
    cells["mean_proxies"] = r.proxies / q
    return cells


def json_rows(table: list[dict]) -> list[dict]:
    """The rows as JSON can hold them: numpy numbers as Python ones, NaN and infinities as None."""
    def cell(v):
        if isinstance(v, (np.integer, np.bool_)):
            return v.item()
        if isinstance(v, (float, np.floating)):
            f = float(v)
            return f if math.isfinite(f) else None
        return v

    return [{k: cell(v) for k, v in row.items()} for row in table]


def _fmt(fmt: str, v) -> str:
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return "-"
    return fmt.format(v)


def floor_lines(table: list[dict], shares, width: int = 80) -> list[str]:
    """Per workload and share moving, a paragraph (wrapped to ``width``): the update's two floors and each
    index's ``move_many`` (median) as a multiple of the first, fastest first."""
    import textwrap

    lines = []
    for wl in dict.fromkeys(row["workload"] for row in table):
        mine = [row for row in table if row["workload"] == wl]
        for share in shares:
            p = share_label(share)
            sf, cf = mine[0].get(f"dynamic_{p}pct_scatter_floor_ms"), mine[0].get(f"dynamic_{p}pct_contiguous_floor_ms")
            if sf is None or not sf == sf:
                continue
            x = f"dynamic_{p}pct_move_x_floor"
            xs = sorted((row[x], row["index"]) for row in mine if row.get(x) == row.get(x))
            text = (f"update floors, {wl} at {p}% moving: {sf:.3f} ms writing the movers' rows at their ids, "
                    f"{cf:.3f} ms one after another; move_many over the first: "
                    + ", ".join(f"{name} {v:.1f}x" for v, name in xs))
            lines += textwrap.wrap(text, width=max(40, width), subsequent_indent="  ")
    return lines


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


def _spec(name: str) -> tuple[str, str, str]:
    """The (name, header, format) of a row's key: one of :data:`_STATIC`, :data:`RANGE_COLUMNS`, :data:`_TAIL`
    or a dynamic column."""
    for c in (*_STATIC, *RANGE_COLUMNS, *_TAIL):
        if c[0] == name:
            return c
    m = re.fullmatch(r"dynamic_(.+?)pct_.*", name)
    if m:
        return next((c for c in dynamic_columns(float(m.group(1)) / 100) if c[0] == name), (name, "", "{}"))
    return (name, "", "{}")


_RANGE_NAMES = frozenset(name for name, _, _ in RANGE_COLUMNS)


def _core_rank(name: str) -> int | None:
    """Where column ``name`` stands in :data:`CORE` (None: not a core column)."""
    key = "dynamic" if name.startswith("dynamic_") else "ranges" if name in _RANGE_NAMES else name
    return CORE.index(key) if key in CORE else None


def format_table(table: list[dict], width: int | None = None, wide: bool = False) -> str:
    """The printed table: one block per workload, aligned columns (those of the rows' keys that have a
    header, in the rows' order). ``wide``: every one of them; else the core ones (:data:`CORE`), and of those
    only as many as fit in ``width`` characters (None: no limit), the least important left out first
    (never the workload, the index, the query median and the speed-up over the scan)."""
    cols = [c for c in (_spec(k) for k in (table[0] if table else dict.fromkeys(n for n, _, _ in COLUMNS))) if c[1]]
    if not wide:
        cols = [c for c in cols if _core_rank(c[0]) is not None]
        while width is not None and _table_width(table, cols) > width:
            worst = max(_core_rank(c[0]) for c in cols)
            if worst < 4:
                break
            dyn = [c for c in cols if c[0].startswith("dynamic_")]
            # the dynamic columns go a share at a time (the first share's pair first), the others one by one
            first = dyn[0][0].split("pct_")[0] + "pct_" if dyn else None
            gone = ([c for c in dyn if c[0].startswith(first) or len(dyn) <= 2] if worst == CORE.index("dynamic")
                    else [c for c in cols if _core_rank(c[0]) == worst])
            cols = [c for c in cols if c not in gone]
    return _format(table, cols)


def _table_width(table: list[dict], cols: list[tuple[str, str, str]]) -> int:
    """The characters of the widest line of the table of ``cols``."""
    return max(len(ln) for ln in _format(table, cols).splitlines() or [""])


def _format(table: list[dict], cols: list[tuple[str, str, str]]) -> str:
    """The table of the columns ``cols`` (name, header, format), one block per workload."""
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
    """Write the table atomically (a temporary file renamed into place); its header is the rows' keys (the
    columns of :func:`columns` of the shares measured), :data:`COLUMNS` for an empty table."""
    names = list(table[0]) if table else [k for k, _, _ in COLUMNS]
    with atomic_file(path, text=True, newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=names)
        w.writeheader()
        for row in table:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, (float, np.floating)) else v) for k, v in row.items()})
