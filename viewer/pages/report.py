"""One report page from recordings, bench runs and sweeps (``viewer report``): the verdicts, sortable tables,
stage timelines, query time distributions, trade-offs with their Pareto fronts, and where the numbers come from.

Every sentence is one the other commands already print: a recording's :func:`viewer.reports.compare.summary`
and machine line, a bench's update floors (:func:`viewer.bench.report.floor_lines`), two bench runs' comparison
(:func:`viewer.bench.compare_runs.compare_bench`).
"""

from __future__ import annotations

import html
import io
import math
from typing import Callable, Sequence

from ..bench.compare_runs import BenchRun, compare_bench
from ..bench.report import floor_lines
from ..recording.meta import describe_machine, describe_renderer
from ..reports.compare import STATS, compare_runs, measured_line, runs_with_rows, summary
from .figures import Point, query_distribution, timeline, tradeoff
from .html import figure_html, page, table_html
from .inputs import Inputs, Sweep

__all__ = ["BENCH_COLUMNS", "build_report", "origin_lines", "tradeoff_points"]

#: the bench and sweep table's columns: (key, header); the moving frames' follow per share
BENCH_COLUMNS: tuple[tuple[str, str], ...] = (
    ("workload", "workload"), ("index", "index"), ("n", "objects"), ("threads", "threads"),
    ("query_median_us", "query median (us)"), ("query_p95_us", "query p95 (us)"),
    ("speedup_vs_scan", "x scan"), ("x_read", "x read floor"), ("bytes_per_object", "bytes / object"),
    ("build_s", "build (s)"), ("mean_visible", "visible (mean)"), ("move_per_s", "moves / s"),
)


def _finite(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0


def _shares_in(rows: Sequence[dict]) -> list[str]:
    """The shares moving that ``rows`` have columns for, as their labels (``10``)."""
    import re

    found = {m.group(1) for r in rows for k in r if (m := re.fullmatch(r"dynamic_(.+?)pct_move_ms", k))}
    return sorted(found, key=float)


def _bench_columns(rows: Sequence[dict]) -> list[tuple[str, str]]:
    cols = list(BENCH_COLUMNS)
    for p in _shares_in(rows):
        cols += [(f"dynamic_{p}pct_ms", f"frame at {p}% moving (ms)"),
                 (f"dynamic_{p}pct_move_ms", f"move_many at {p}% (ms)")]
    return [c for c in cols if any(c[0] in r for r in rows)]


def update_cost(row: dict) -> tuple[float, str] | None:
    """A row's update cost and its unit: ``move_many`` at the smallest share moving (ms a frame), else a single
    move (us, from ``move_per_s``); None when the row measured neither."""
    for p in _shares_in([row]):
        v = row.get(f"dynamic_{p}pct_move_ms")
        if _finite(v):
            return float(v), f"move_many at {p}% moving (ms a frame)"
    v = row.get("move_per_s")
    return (1e6 / v, "a single move (us)") if _finite(v) else None


def tradeoff_points(rows: Sequence[dict], label: Callable[[dict], str] = lambda r: r["workload"]):
    """From bench (or sweep) rows: the (query time, bytes an object) points and the (query time, update cost)
    points, and the update cost's unit ("" when no row has one)."""
    memory, updates, unit = [], [], ""
    for r in rows:
        q = r.get("query_median_us")
        if not _finite(q):
            continue
        if _finite(r.get("bytes_per_object")):
            memory.append(Point(label(r), str(r["index"]), float(r["bytes_per_object"]), float(q)))
        u = update_cost(r)
        if u is not None and (not unit or u[1] == unit):
            unit = u[1]
            updates.append(Point(label(r), str(r["index"]), float(q), u[0]))
    return memory, updates, unit


class _Page:
    """The page being written: its sections and whether plotly's script is in it yet."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.has_plotly = False

    def add(self, text: str) -> None:
        self.parts.append(text)

    def figure(self, fig) -> None:
        self.parts.append(figure_html(fig, first=not self.has_plotly))
        self.has_plotly = True

    def sentences(self, lines: Sequence[str]) -> None:
        if lines:
            self.add("<ul class=\"verdicts\">" + "".join(f"<li>{html.escape(s)}</li>" for s in lines) + "</ul>")

    def pre(self, text: str) -> None:
        self.add(f"<pre>{html.escape(text)}</pre>")


def _recordings(pg: _Page, runs) -> None:
    if not runs:
        return
    runs = runs_with_rows(runs, "report", warn=None)  # a take stopped before its first frame: left out
    pg.add("<h2>Recordings</h2>")
    pg.sentences(summary(runs))
    where = measured_line(runs)
    if where:
        pg.add(f"<p>{html.escape(where)}</p>")
    rows = []
    for r in compare_runs(runs, warn=None):
        row = {"column": r.column, "run": r.run, "frames": r.frames}
        row.update({s: r.values[s] for s in STATS})
        row.update({f"x_{s}": r.ratios[s] for s in STATS})
        rows.append(row)
    cols = [("column", "column"), ("run", "run"), ("frames", "frames"), *((s, s) for s in STATS),
            *((f"x_{s}", f"x faster ({s})") for s in STATS)]
    pg.add(table_html(cols, rows, "recordings-table"))
    pg.add("<h3>Stage times per frame</h3>"
           "<p>Drag to zoom, double-click to zoom out; a legend entry hides its line.</p>")
    for run in runs:
        pg.figure(timeline(run))


def _tradeoffs(pg: _Page, rows: Sequence[dict], what: str, label=lambda r: r["workload"]) -> None:
    memory, updates, unit = tradeoff_points(rows, label)
    if memory:
        pg.figure(tradeoff(memory, f"{what}: memory against query time (Pareto front per workload)",
                           "bytes per object", "query median (us)"))
    if updates:
        pg.figure(tradeoff(updates, f"{what}: update cost against query time (Pareto front per workload)",
                           "query median (us)", unit))
    else:
        pg.add(f"<p>{html.escape(what)}: no update cost measured (no moving frames, no moves), so no "
               "update trade-off.</p>")


def _bench(pg: _Page, run: BenchRun, k: int) -> None:
    rows = run.meta.get("rows", [])
    pg.add(f"<h2>Bench run: {html.escape(str(run.path))}</h2>")
    if run.meta.get("command"):
        cmd = run.meta["command"]
        cmd = " ".join(map(str, cmd)) if isinstance(cmd, list) else str(cmd)
        pg.add(f"<p>command: <code>{html.escape(cmd)}</code></p>")
    shares = [float(s) for s in run.meta.get("config", {}).get("dynamic", []) or []]
    pg.sentences(floor_lines(rows, shares, width=10_000))
    pg.add(table_html(_bench_columns(rows), rows, f"bench-table-{k}"))
    if any(kind == "query" for (_w, _i, kind, _s) in run.samples):
        pg.figure(query_distribution(run.samples, "query times per index (every timed query, raw samples)"))
    else:
        pg.add("<p>No raw samples (a bench.json before format version 2, or its bench_samples.parquet is not "
               "beside it): no distributions.</p>")
    _tradeoffs(pg, rows, "bench")


def _sweep(pg: _Page, sweep: Sweep, k: int) -> None:
    rows = sweep.ok_rows()
    pg.add(f"<h2>Sweep: {html.escape(str(sweep.path))}</h2>")
    failed = len(sweep.rows) - len(rows)
    pg.sentences([f"{len(rows)} rows of tasks that ran" + (f", {failed} of tasks failed or skipped" if failed else "")])
    label = lambda r: f"{r.get('workload', '')} n={r.get('n', '')}"  # noqa: E731  a sweep varies n too
    cols = [("task", "task"), *_bench_columns(rows)]
    pg.add(table_html(cols, rows, f"sweep-table-{k}"))
    _tradeoffs(pg, rows, "sweep", label)


def origin_lines(provenance: dict, machine: str = "", **more) -> list[str]:
    """Where numbers come from, a line a fact: the machine, the project's version and commit (``local changes``
    when the checkout had some), then ``more`` (name -> text, empty ones left out), then the package versions
    on one line. ``provenance``: a result file's provenance block (:mod:`viewer.system.provenance`; {} for a
    file from before it was written)."""
    out = []
    machine = machine or str(provenance.get("machine", "")).removeprefix("machine: ")
    if machine:
        out.append(f"machine: {machine}")
    if provenance.get("commit") or provenance.get("version"):
        dirty = " (run from a checkout with local changes)" if provenance.get("dirty") else ""
        out.append(f"{provenance.get('project', 'version')} {provenance.get('version', '?')}, commit "
                   f"{provenance.get('commit') or 'unknown'}{dirty}")
    else:
        out.append("no provenance recorded (a file from before results said where they come from)")
    out += [f"{k}: {v}" for k, v in more.items() if v]
    packages = provenance.get("packages") or {}
    if packages:
        out.append("packages: " + ", ".join(f"{k} {v}" for k, v in packages.items()))
    return out


def _provenance(pg: _Page, inputs: Inputs) -> None:
    pg.add("<h2>Machine and provenance</h2>")
    for run in inputs.benches:
        m = run.meta.get("machine") or {}
        machine = ", ".join(str(m[k]) for k in ("host", "cpu") if m.get(k)) + (
            f", {m['cores']} logical CPUs" if m.get("cores") else "")
        prov = run.meta.get("provenance") or {"packages": run.meta.get("packages") or {}}
        pg.add(f"<h3>bench: {html.escape(str(run.path))}</h3>")
        pg.pre("\n".join(origin_lines(prov, "" if run.meta.get("provenance") else machine, date=run.meta.get("date"),
                                      format=f"{run.meta.get('format', 'viewdist-bench')} version {run.version}")))
    for r in inputs.recordings:
        meta = r.meta if isinstance(r.meta, dict) else {}
        schema = meta.get("schema") or {}
        pg.add(f"<h3>recording: {html.escape(str(r.path))}</h3>")
        more = {"GL renderer": describe_renderer(meta), "schema": f"version {schema.get('version', r.version)}"}
        prov = meta.get("provenance") or {"packages": meta.get("packages") or {}}
        pg.pre("\n".join(origin_lines(prov, describe_machine(meta), **more)))
    for s in inputs.sweeps:
        machines = sorted({f"{r.get('host')}, {r.get('cpu')}, {r.get('cores')} logical CPUs" for r in s.rows})
        pg.add(f"<h3>sweep: {html.escape(str(s.path))}</h3>")
        pg.pre("\n".join(origin_lines(s.provenance, " | ".join(machines))))


def build_report(inputs: Inputs, title: str = "viewdist report") -> str:
    """The whole page (HTML text) for ``inputs``."""
    pg = _Page()
    if len(inputs.benches) == 2:
        out, err = io.StringIO(), io.StringIO()
        compare_bench([inputs.benches[0].path, inputs.benches[1].path], [], out=out, err=err)
        pg.add("<h2>Two bench runs compared</h2>")
        pg.pre(err.getvalue() + out.getvalue())
    _recordings(pg, inputs.recordings)
    for k, run in enumerate(inputs.benches):
        _bench(pg, run, k)
    for k, sweep in enumerate(inputs.sweeps):
        _sweep(pg, sweep, k)
    _provenance(pg, inputs)
    return page(title, "\n".join(pg.parts))
