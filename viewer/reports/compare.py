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
import sys
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..errors import UserError
from ..recording.meta import describe_path, describe_scene, path_identity, scene_identity
from ..recording.reader import Run, read_runs
from ..frame.stages import HUD_COUNTS, TIMED_COLUMNS
from ._text import escape_text

__all__ = ["STATS", "CompareRow", "compare_files", "compare_runs", "format_table", "mismatch_warnings",
           "reference_run", "runs_with_rows"]

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


def _warn_stderr(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def runs_with_rows(runs: Sequence[Run], what: str = "compare",
                   warn: Callable[[str], None] | None = _warn_stderr) -> list[Run]:
    """``runs`` without the recordings that have no rows (a take stopped before its first frame, a run
    killed at once), each left out with a warning through ``warn``; a :class:`UserError` when none is left
    (``what``: the verb of the message, ``compare`` or ``plot``)."""
    if not runs:
        raise UserError(f"no recordings to {what}")
    kept = [r for r in runs if len(r) > 0]
    if not kept:
        names = ", ".join(escape_text(r.path) for r in runs[:5]) + (f" and {len(runs) - 5} more" if len(runs) > 5 else "")
        raise UserError(f"nothing to {what}: no recording has rows ({names})"
                        if len(runs) > 1 else f"{escape_text(runs[0].path)}: the recording has no rows")
    if warn is not None:
        for r in runs:
            if len(r) == 0:
                warn(f"{escape_text(r.path)}: the recording has no rows; left out")
    return kept


def mismatch_warnings(runs: Sequence[Run]) -> list[str]:
    """Why ``runs`` may not be comparable: one line when their metadata name different scenes (name, N,
    seed), else one when they name different camera paths (name, generated kind, speed); none when they agree.
    Runs whose metadata does not say are not counted either way."""
    out: list[str] = []
    for what, ident, describe in (("scenes", scene_identity, describe_scene), ("camera paths", path_identity, describe_path)):
        if out:  # different scenes: their paths differ too (a generated path is named after its scene)
            break
        groups: dict[tuple, list[Run]] = {}
        for r in runs:
            k = ident(r.meta)
            if k is not None:
                groups.setdefault(k, []).append(r)
        if len(groups) > 1:
            parts = []
            for members in groups.values():
                files = ", ".join(escape_text(m.path) for m in members[:3])
                if len(members) > 3:
                    files += f" and {len(members) - 3} more"
                parts.append(f"{escape_text(describe(members[0].meta))}: {files}")
            out.append(f"these runs are of different {what}, so their figures are not like for like: "
                       + "; ".join(parts))
    return out


def compare_runs(runs: Sequence[Run], columns: Sequence[str] = TIMED_COLUMNS + COUNTS,
                 reference: int | None = None, warn: Callable[[str], None] | None = _warn_stderr) -> list[CompareRow]:
    """Rows of the comparison, grouped by column then run; ratios against ``runs[reference]`` (default:
    :func:`reference_run`). A column some run lacks (a recording of an older schema version) is left out.
    A run without rows is left out with a warning through ``warn`` (:func:`runs_with_rows`; ``reference``
    counts the runs left); none with rows is a :class:`UserError`."""
    runs = runs_with_rows(runs, "compare", warn)
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
    """The table as aligned ``text``, ``markdown`` or ``csv``. A run's label is written with its control
    characters escaped (:func:`viewer.reports._text.escape_text`: no terminal escape sequence, line break or
    NUL reaches the output), and in markdown its ``|`` too."""
    head = ["column", "run", "frames", *STATS, *(f"x{s}" for s in STATS)]
    body = []
    for r in rows:
        is_ms = r.column.endswith("_ms")
        vals = [(f"{r.values[s]:.3f}" if is_ms else f"{r.values[s]:.1f}") for s in STATS]
        rat = ["-" if r.ratios[s] is None else f"{r.ratios[s]:.2f}" for s in STATS]
        label = escape_text(r.run)
        if fmt == "markdown":
            label = label.replace("|", "\\|")
        body.append([r.column, label, str(r.frames), *vals, *rat])
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
