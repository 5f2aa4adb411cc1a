"""Comparing recordings: median / p95 / max of every stage per run, with ratios against a reference run:
the first run of the ``scan`` index (the multi-core linear scan, the baseline of every ratio the product
prints) when there is one, else the first run.

Percentiles are numpy's default (linear interpolation between order statistics, "type 7"): p95 of
``[1, 2, 3, 4, 5]`` is ``4.8``.
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..errors import UserError
from ..recording.reader import Run, read_runs
from ..frame.stages import HUD_COUNTS, TIMED_COLUMNS

__all__ = ["STATS", "CompareRow", "compare_files", "compare_runs", "format_table", "reference_run"]

#: the statistics of each stage, in table order
STATS: tuple[str, ...] = ("median", "p95", "max")

#: count columns summarised under the stage times (the counts the HUD shows, but the object total and the
#: per-level peak)
COUNTS: tuple[str, ...] = tuple(c for c, _ in HUD_COUNTS if c not in ("objects", "max_nodes_per_level"))


@dataclass(frozen=True)
class CompareRow:
    """One line of the table.

    column : the CSV column (``query_ms``, ..., or a count)
    run : the run's label
    frames : rows in the run
    values : ``{"median": ..., "p95": ..., "max": ...}`` in the column's unit (ms, or objects)
    ratios : the same statistics divided by the reference run's (1 for the reference itself; None where
        the reference's value is 0)
    """

    column: str
    run: str
    frames: int
    values: dict[str, float]
    ratios: dict[str, float | None]


def _stats(a: np.ndarray) -> dict[str, float]:
    a = np.asarray(a, dtype=np.float64)
    return {"median": float(np.median(a)), "p95": float(np.percentile(a, 95)), "max": float(np.max(a))}


def reference_run(runs: Sequence[Run]) -> int:
    """Position in ``runs`` of the reference: the first recording of the ``scan`` index (by its metadata,
    else its ``index`` column), else 0."""
    for j, r in enumerate(runs):
        idx = r.meta.get("index") if isinstance(r.meta, dict) else None
        idx = idx.get("name") if isinstance(idx, dict) else idx  # metadata: {"name": ..., "options": ...}
        if idx is None and "index" in r.columns and len(r):
            col = r.columns["index"]
            idx = col[0] if (col == col[0]).all() else None
        if idx == "scan":
            return j
    return 0


def compare_runs(runs: Sequence[Run], columns: Sequence[str] = TIMED_COLUMNS + COUNTS,
                 reference: int | None = None) -> list[CompareRow]:
    """Rows of the comparison, grouped by column then run; ratios against ``runs[reference]`` (default:
    :func:`reference_run`). A column some run lacks (a recording of an older schema version) is left out."""
    if not runs:
        raise UserError("no recordings to compare")
    for r in runs:
        if len(r) == 0:
            raise UserError(f"{r.path}: the recording has no rows")
    ref_run = runs[reference_run(runs) if reference is None else reference]
    rows: list[CompareRow] = []
    for col in (c for c in columns if all(c in r.columns for r in runs)):
        ref = _stats(ref_run[col])
        for j, r in enumerate(runs):
            v = _stats(r[col])
            ratios = {k: (v[k] / ref[k] if ref[k] != 0 else None) for k in STATS}
            rows.append(CompareRow(col, r.label, len(r), v, ratios))
    return rows


def compare_files(paths: Sequence[str | os.PathLike]) -> list[CompareRow]:
    return compare_runs(read_runs(paths))


def format_table(rows: Sequence[CompareRow], fmt: str = "text") -> str:
    """The table as aligned ``text``, ``markdown`` or ``csv``."""
    head = ["column", "run", "frames", *STATS, *(f"x{s}" for s in STATS)]
    body = []
    for r in rows:
        is_ms = r.column.endswith("_ms")
        vals = [(f"{r.values[s]:.3f}" if is_ms else f"{r.values[s]:.1f}") for s in STATS]
        rat = ["-" if r.ratios[s] is None else f"{r.ratios[s]:.2f}" for s in STATS]
        body.append([r.column, r.run, str(r.frames), *vals, *rat])
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(head)
        w.writerows(body)
        return buf.getvalue()
    if fmt == "markdown":
        lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" if i < 2 else "---:" for i in range(len(head))) + "|"]
        lines += ["| " + " | ".join(b) + " |" for b in body]
        return "\n".join(lines) + "\n"
    if fmt != "text":
        raise ValueError(f"unknown table format {fmt!r}")
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(head)]
    right = [i >= 2 for i in range(len(head))]

    def line(cells):
        return "  ".join(c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right)).rstrip()

    out = [line(head), line(["-" * w for w in widths])]
    prev = None
    for b in body:
        if prev is not None and b[0] != prev:
            out.append("")
        out.append(line(b))
        prev = b[0]
    return "\n".join(out) + "\n"
