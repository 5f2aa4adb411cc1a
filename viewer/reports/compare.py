"""Comparing recordings: median / p95 / p99 / max of every stage per run (:data:`viewer.frame.stages.TIME_STATS`),
with ratios against a reference run:
the first run of the ``scan`` index (the multi-core linear scan, the baseline of every ratio the product
prints) when there is one, else the first run.

Every ratio points one way, as ``viewer bench``'s ``x scan``: the **speed-up of a run over the reference**,
the reference's figure over the run's (above 1: faster, or fewer objects for a count), printed to three
significant digits (:func:`format_ratio`: 29 candidates against 100,000 is ``3.45e+03``, never ``0.00``).
:func:`summary` says what the table found in words: the reference, and per run one sentence on its query and
its frame (and the stage that dominates the frame, on the renderer the runs name).

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
from ..recording.meta import (describe_machine, describe_path, describe_renderer, describe_scene, machine_identity,
                              path_identity, renderer_identity, scene_identity)
from ..recording.reader import Run, read_runs
from ..frame.stages import COLUMN_INFO, HUD_COUNTS, STAGES, TIME_STATS, TIMED_COLUMNS
from ..terminal.text import escape_text, figure

__all__ = ["BAND_COUNTS", "MOTION_SINCE", "RATIO_HEADERS", "STATS", "CompareRow", "band_columns", "compare_files",
           "compare_runs", "ended_early", "format_ratio", "format_table", "measured_line", "mismatch_warnings",
           "reference_line", "reference_run", "run_compare", "runs_with_rows", "summary", "verdicts"]

#: the statistics of each stage, in table order
STATS: tuple[str, ...] = tuple(name for name, _ in TIME_STATS)

#: count columns summarised under the stage times (the counts the HUD shows, but the object total and the
#: per-level peak)
COUNTS: tuple[str, ...] = tuple(c for c, _ in HUD_COUNTS if c not in ("objects", "max_nodes_per_level"))

#: the LOD band columns (schema version 6, issue 24: ``band0`` .. ``band3``, ``band_changes``, ``proxies``): the
#: count columns of the version that added ``band0``, in file order
BAND_COUNTS: tuple[str, ...] = tuple(
    c.name for c in COLUMN_INFO
    if c.kind == "int" and c.since == next(b.since for b in COLUMN_INFO if b.name == "band0"))

#: the headers of the three ratio columns, by format: the direction is in the name (the reference's figure
#: over the run's: above 1, the run is faster)
RATIO_HEADERS: dict[str, tuple[str, ...]] = {
    "text": tuple(STATS),  # under a group header, "x faster: reference / run"
    "markdown": tuple(f"x faster ({s})" for s in STATS),
    "csv": tuple(f"x_faster_{s}" for s in STATS),
}

#: the group header over the text table's ratio columns
_RATIO_GROUP = "x faster: reference / run"
#: the group header over the text table's value columns
_VALUE_GROUP = "ms, or objects"

#: how a verdict names each stage
_STAGE_WORDS: dict[str, str] = {"update_ms": "the update", "query_ms": "the query", "cull_ms": "the frustum cull",
                                "gather_ms": "gathering", "upload_ms": "uploading", "draw_ms": "drawing"}


@dataclass(frozen=True)
class CompareRow:
    """One line of the table.

    column : the CSV column (``query_ms``, ..., or a count)
    run : the run's label
    frames : rows in the run
    values : ``{"median": ..., "p95": ..., "p99": ..., "max": ...}`` in the column's unit (ms, or objects)
    ratios : the speed-up over the reference run, statistic by statistic: the reference's value over this
        run's (above 1: this run is faster, or counts fewer; 1 for the reference itself; None where this
        run's value or the reference's is 0: the scan visits no nodes, so its 0 over an octree's 7 says nothing)
    """

    column: str
    run: str
    frames: int
    values: dict[str, float]
    ratios: dict[str, float | None]


def _stats(a: np.ndarray) -> dict[str, float]:
    a = np.asarray(a, dtype=np.float64)
    return {name: float(np.percentile(a, q)) for name, q in TIME_STATS}


def reference_run(runs: Sequence[Run]) -> int:
    """Position in ``runs`` of the reference: the first recording of the ``scan`` index (by its metadata,
    else its ``index`` column), else 0."""
    for j, r in enumerate(runs):
        if _index_of(r) == "scan":
            return j
    return 0


def _warn_stderr(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def _paths(runs: Sequence[Run], most: int = 3) -> str:
    """The first ``most`` runs' files, escaped, ``, ``-separated, then `` and N more`` (for a message)."""
    shown = ", ".join(escape_text(r.path) for r in runs[:most])
    return shown + (f" and {len(runs) - most} more" if len(runs) > most else "")


def ended_early(run: Run) -> str | None:
    """Why ``run`` holds only part of what was asked, from its metadata (``complete`` false: a signal, the
    program's exit, a write error, or killed before its files were closed), as a warning; None for a run that
    finished (or whose metadata does not say)."""
    if run.meta.get("complete", True) is not False:
        return None
    how = run.meta.get("ended")
    how = {None: "its files were never closed: killed?", "exit": "the program exited first"}.get(how, how)
    return (f"{escape_text(run.path)}: the recording ended early ({escape_text(str(how))}) after {len(run):,} "
            f"frames; its figures cover only the part of the path it reached")


def runs_with_rows(runs: Sequence[Run], what: str = "compare",
                   warn: Callable[[str], None] | None = _warn_stderr) -> list[Run]:
    """``runs`` without the recordings that have no rows (a take stopped before its first frame, a run
    killed at once), each left out with a warning through ``warn``, and a warning for each run kept that ended
    early (:func:`ended_early`); a :class:`UserError` when none is left (``what``: the verb of the message,
    ``compare`` or ``plot``)."""
    if not runs:
        raise UserError(f"no recordings to {what}")
    kept = [r for r in runs if len(r) > 0]
    if not kept:
        names = _paths(runs, 5)
        raise UserError(f"nothing to {what}: no recording has rows ({names})"
                        if len(runs) > 1 else f"{escape_text(runs[0].path)}: the recording has no rows")
    if warn is not None:
        for r in runs:
            if len(r) == 0:
                warn(f"{escape_text(r.path)}: the recording has no rows; left out")
            elif (why := ended_early(r)) is not None:
                warn(why)
    return kept


def _groups(runs: Sequence[Run], ident: Callable) -> dict[tuple, list[Run]]:
    """``runs`` grouped by ``ident(meta)`` (those for which it is None left out), in first-seen order."""
    groups: dict[tuple, list[Run]] = {}
    for r in runs:
        k = ident(r.meta)
        if k is not None:
            groups.setdefault(k, []).append(r)
    return groups


def _differ(what: str, groups: dict[tuple, list[Run]], describe: Callable, figures: str) -> str:
    parts = []
    for members in groups.values():
        parts.append(f"{escape_text(describe(members[0].meta))}: {_paths(members)}")
    return f"these runs are of different {what}, so their {figures} are not like for like: " + "; ".join(parts)


#: the schema version from which the world's own step is timed apart (``motion_ms``), out of ``update_ms``
MOTION_SINCE = next(s.since for s in STAGES if s.name == "motion")


def _update_split(runs: Sequence[Run]) -> str | None:
    """A warning when ``update_ms`` means two things among ``runs``: a moving world recorded before and from
    :data:`MOTION_SINCE` (before, it holds the world's own step too); None otherwise."""
    if not any("moved" in r.columns and np.any(r["moved"] > 0) for r in runs):
        return None
    old = [r for r in runs if r.version < MOTION_SINCE]
    new = [r for r in runs if r.version >= MOTION_SINCE]
    if not old or not new:
        return None
    return (f"update_ms is not like for like: recordings before schema version {MOTION_SINCE} ({_paths(old)}) count "
            f"the world's own step in it, later ones ({_paths(new)}) time it apart as motion_ms; compare their "
            f"update_ms with update_ms + motion_ms")


def mismatch_warnings(runs: Sequence[Run]) -> list[str]:
    """Why ``runs`` may not be comparable: one line when their metadata name different scenes (name, N,
    seed), else one when they name different camera paths (name, generated kind, speed); one more when they
    were measured on different machines (CPU, logical CPUs), and one when on different GL renderers; one when
    ``update_ms`` means two things among them (:func:`_update_split`); none when they agree. Runs whose
    metadata does not say are not counted either way."""
    out: list[str] = []
    for what, ident, describe in (("scenes", scene_identity, describe_scene), ("camera paths", path_identity, describe_path)):
        groups = _groups(runs, ident)
        if len(groups) > 1:
            out.append(_differ(what, groups, describe, "figures"))
            break  # different scenes: their paths differ too (a generated path is named after its scene)
    for what, ident, describe in (("machines", machine_identity, describe_machine),
                                  ("GL renderers", renderer_identity, describe_renderer)):
        groups = _groups(runs, ident)
        if len(groups) > 1:
            out.append(_differ(what, groups, describe, "times"))
    if (split := _update_split(runs)) is not None:
        out.append(split)
    return out


def measured_line(runs: Sequence[Run]) -> str:
    """``timed on: vm, AMD EPYC (...), 2 logical CPUs; GL renderer: llvmpipe (...)``: where the runs' times
    were taken, from their metadata (several, ``|``-separated, when they differ: :func:`mismatch_warnings`
    says so); "" when no run's metadata names a machine or a renderer."""
    def named(describe: Callable) -> str:
        seen: list[str] = []
        for r in runs:
            d = describe(r.meta)
            if d and d not in seen:
                seen.append(d)
        shown = " | ".join(escape_text(d) for d in seen[:3])
        return shown + (f" | {len(seen) - 3} more" if len(seen) > 3 else "")

    machines, renderers = named(describe_machine), named(describe_renderer)
    if not machines and not renderers:
        return ""
    return (f"timed on: {machines or 'a machine the metadata does not name'}; "
            f"GL renderer: {renderers or 'not named in the metadata'}")


def band_columns(runs: Sequence[Run]) -> tuple[str, ...]:
    """The LOD band columns (:data:`BAND_COUNTS`) worth showing for ``runs``: all of them when every run has
    them (schema version 6 or newer) and some run's say something ``drawn`` does not (a band other than 0, a
    band change or a drawn proxy: a scene with LOD switches or HLOD); else none (an older recording, or only
    scenes without ranges, where ``band0`` is ``drawn`` and the rest are 0)."""
    if not runs or not all(c in r.columns for r in runs for c in BAND_COUNTS):
        return ()
    for r in runs:
        if any(np.any(np.asarray(r[c]) != 0) for c in BAND_COUNTS[1:]):
            return BAND_COUNTS
        if "drawn" in r.columns and np.any(np.asarray(r["band0"]) != np.asarray(r["drawn"])):
            return BAND_COUNTS
    return ()


def compare_runs(runs: Sequence[Run], columns: Sequence[str] | None = None,
                 reference: int | None = None, warn: Callable[[str], None] | None = _warn_stderr) -> list[CompareRow]:
    """Rows of the comparison, grouped by column then run; ratios are speed-ups over ``runs[reference]``
    (default: :func:`reference_run`): its value over the run's. ``columns`` None: the stage times, the counts
    (:data:`COUNTS`) and the LOD band columns when the runs have them (:func:`band_columns`). A column some run
    lacks (a recording of an older schema version) is left out.
    A run without rows is left out with a warning through ``warn`` (:func:`runs_with_rows`; ``reference``
    counts the runs left); none with rows is a :class:`UserError`."""
    runs = runs_with_rows(runs, "compare", warn)
    if columns is None:
        columns = TIMED_COLUMNS + COUNTS + band_columns(runs)
    ref_run = runs[reference_run(runs) if reference is None else reference]
    rows: list[CompareRow] = []
    for col in (c for c in columns if all(c in r.columns for r in runs)):
        ref = _stats(ref_run[col])
        for j, r in enumerate(runs):
            v = _stats(r[col])
            ratios = {k: (ref[k] / v[k] if v[k] != 0 and ref[k] != 0 else None) for k in STATS}
            rows.append(CompareRow(col, r.label, len(r), v, ratios))
    return rows


def compare_files(paths: Sequence[str | os.PathLike]) -> list[CompareRow]:
    """:func:`compare_runs` of the recordings at ``paths``."""
    return compare_runs(read_runs(paths))


def format_ratio(v: float | None, digits: int = 3) -> str:
    """A ratio to ``digits`` significant digits, trailing zeros kept: ``4.00``, ``0.250``, ``12.0``, ``3448``
    (whole numbers from 1000 up), ``2.90e-04`` (below 0.001); ``-`` for None or a value that is not finite."""
    if v is None or not np.isfinite(v):
        return "-"
    if v == 0:
        return "0"
    if abs(v) >= 10 ** digits:
        return figure(v, ".0f")
    if abs(v) < 1e-3:
        return f"{v:.{digits - 1}e}"
    return f"{v:#.{digits}g}".rstrip(".")


def _index_of(run: Run) -> str | None:
    """The index a run recorded (its metadata's, else its ``index`` column's when it holds one name)."""
    idx = run.meta.get("index") if isinstance(run.meta, dict) else None
    idx = idx.get("name") if isinstance(idx, dict) else idx
    if idx is None and "index" in run.columns and len(run):
        col = run.columns["index"]
        idx = col[0] if (col == col[0]).all() else None
    return str(idx) if isinstance(idx, str) and idx else None


def reference_line(runs: Sequence[Run], reference: int | None = None) -> str:
    """``reference: scan · clustered-100k (100k) (the scan run); x faster = ...``: which run every ratio is
    against, and which way the ratios point. ``runs``: runs with rows (:func:`runs_with_rows`)."""
    j = reference_run(runs) if reference is None else reference
    why = "the scan run" if _index_of(runs[j]) == "scan" else ("no scan run: the first" if len(runs) > 1 else "the only run")
    return (f"reference: {escape_text(runs[j].label)} ({why}); x faster = its time (or count) / the run's, "
            "above 1 = faster")


def _ms(v: float) -> str:
    return f"{v:#.3g}".rstrip(".") if v < 1000 else figure(v, ".0f")


def _count(v: float) -> str:
    return figure(v, ",.0f" if v == int(v) else ",.1f")


def _speed_words(s: float) -> str:
    """A speed-up as words: ``4.00x faster than``, ``2.10x slower than``, ``about as fast as``."""
    if s >= 1.05:
        return f"{format_ratio(s)}x faster than"
    if s <= 1 / 1.05:
        return f"{format_ratio(1 / s)}x slower than"
    return "about as fast as"


def _frame_words(s: float) -> str:
    """A speed-up of the whole frame: ``4% faster``, ``2.50x slower``, ``as fast``."""
    if 0.995 <= s <= 1.005:
        return "as fast"
    if s >= 2 or s <= 0.5:
        return f"{format_ratio(s if s > 1 else 1 / s)}x {'faster' if s > 1 else 'slower'}"
    pct = (s - 1) * 100 if s > 1 else (1 / s - 1) * 100
    return f"{pct:.0f}% {'faster' if s > 1 else 'slower'}"


def _renderer(runs: Sequence[Run]) -> str:
    """The GL renderer the runs' metadata name (``llvmpipe`` of ``llvmpipe (LLVM 15.0.7, 256 bits)``), ""
    when none or several do."""
    names = set()
    for r in runs:
        gl = r.meta.get("gl") if isinstance(r.meta, dict) else None
        name = gl.get("renderer") if isinstance(gl, dict) else None
        if isinstance(name, str) and name.strip():
            names.add(name.split(" (")[0].strip())
    return escape_text(names.pop()) if len(names) == 1 else ""


def verdicts(runs: Sequence[Run], reference: int | None = None) -> list[str]:
    """One sentence per run other than the reference: how much faster it answers queries (the medians of
    ``query_ms``), the candidates it tests, how much faster its whole frame is (``frame_ms``), and the stage
    that takes most of that frame when one takes half of it or more (on the renderer the runs' metadata name).
    ``runs``: runs with rows (:func:`runs_with_rows`)."""
    j = reference_run(runs) if reference is None else reference
    ref = runs[j]
    ref_ix = _index_of(ref)
    ref_name = "the scan" if ref_ix == "scan" else "the reference"
    indexes = [_index_of(r) for r in runs]
    unique = None not in indexes and len(set(indexes)) == len(indexes)
    renderer = _renderer(runs)
    med = lambda r, c: float(np.median(np.asarray(r[c], dtype=np.float64)))  # noqa: E731
    out = []
    for k, r in enumerate(runs):
        if k == j:
            continue
        name = indexes[k] if unique else escape_text(r.label)
        parts = []
        if "query_ms" in r.columns and "query_ms" in ref.columns:
            q, q0 = med(r, "query_ms"), med(ref, "query_ms")
            if q > 0 and q0 > 0:
                text = (f"{name} answers queries {_speed_words(q0 / q)} {ref_name} "
                        f"(median {_ms(q)} ms against {_ms(q0)})")
            else:
                text = f"{name} answers queries in {_ms(q)} ms (median) against {_ms(q0)}"
            if "candidates" in r.columns and "candidates" in ref.columns:
                c, c0 = med(r, "candidates"), med(ref, "candidates")
                if c != c0:
                    text += f", testing {_count(c)} candidates a frame against {_count(c0)}"
            parts.append(text)
        if "frame_ms" in r.columns and "frame_ms" in ref.columns:
            f, f0 = med(r, "frame_ms"), med(ref, "frame_ms")
            if f > 0 and f0 > 0:
                text = f"the frame is {_frame_words(f0 / f)} ({_ms(f)} ms against {_ms(f0)})"
                shares = {c: med(r, c) / f for c in _STAGE_WORDS if c in r.columns}
                top = max(shares, key=shares.get, default=None)
                if top is not None and shares[top] >= 0.5:
                    text += f": {_STAGE_WORDS[top]} is {min(shares[top], 1.0):.0%} of it"
                    if top != "query_ms" and renderer:
                        text += f" on this renderer ({renderer})"
                parts.append(text)
        if not parts:
            continue
        if len(parts) == 1 and not parts[0].startswith(name):
            parts[0] = f"{name}: {parts[0]}"
        sentence = "; ".join(parts)
        out.append(sentence + ".")
    return out


def summary(runs: Sequence[Run], reference: int | None = None) -> list[str]:
    """What the comparison found, as lines: :func:`reference_line`, then :func:`verdicts`."""
    return [reference_line(runs, reference), *verdicts(runs, reference)]


def format_table(rows: Sequence[CompareRow], fmt: str = "text") -> str:
    """The table as aligned ``text``, ``markdown`` or ``csv``. A run's label is written with its control
    characters escaped (:func:`viewer.terminal.text.escape_text`: no terminal escape sequence, line break or
    NUL reaches the output), and in markdown its ``|`` too. The ratio columns are speed-ups over the reference
    (:data:`RATIO_HEADERS`: ``x faster (median)``, ``x_faster_median``; in text under one group header),
    to three significant digits (:func:`format_ratio`)."""
    if fmt not in RATIO_HEADERS:
        raise ValueError(f"unknown table format {fmt!r}")
    head = ["column", "run", "frames", *STATS, *RATIO_HEADERS[fmt]]
    body = []
    for r in rows:
        is_ms = r.column.endswith("_ms")
        vals = [figure(r.values[s], ".3f" if is_ms else ".1f") for s in STATS]
        rat = [format_ratio(r.ratios[s]) for s in STATS]
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
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(head)]
    right = [i >= 2 for i in range(len(head))]
    n = len(STATS)
    groups = ((3, 3 + n, _VALUE_GROUP), (3 + n, 3 + 2 * n, _RATIO_GROUP))
    for lo, hi, title in groups:  # widen a group's columns alike until its header fits above them
        short = len(title) - (sum(widths[lo:hi]) + 2 * (hi - lo - 1))
        for i in range(lo, hi):
            widths[i] += max(0, short) // (hi - lo) + (i < lo + max(0, short) % (hi - lo))

    def line(cells):
        return "  ".join(c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right)).rstrip()

    top = ""
    for lo, hi, title in groups:
        start = sum(widths[:lo]) + 2 * lo
        span = sum(widths[lo:hi]) + 2 * (hi - lo - 1)
        top = top.ljust(start) + title.rjust(span)
    out = [top, line(head), line(["-" * w for w in widths])]
    prev = None
    for b in body:
        if prev is not None and b[0] != prev:
            out.append("")
        out.append(line(b))
        prev = b[0]
    return "\n".join(out) + "\n"


def run_compare(paths, fmt: str = "text", stages_only: bool = False) -> int:
    """``viewer compare`` after its arguments: read the recordings at ``paths``, warn (stderr) of runs left
    out or not alike, and print the summary, the machine line and the table in ``fmt`` (``text``,
    ``markdown``, ``csv``; ``stages_only``: the timed columns alone). In text the summary and table go to
    stdout; otherwise the table alone does (for a file or another program) and the rest to stderr. Returns 0."""

    def warn(message: str) -> None:
        print(f"viewer compare: warning: {message}", file=sys.stderr)

    runs = runs_with_rows(read_runs(paths), "compare", warn)
    for message in mismatch_warnings(runs):
        warn(message)
    # warned of above (left out, ended early): not again
    rows = compare_runs(runs, TIMED_COLUMNS, warn=None) if stages_only else compare_runs(runs, warn=None)
    first, *sentences = summary(runs)
    where = measured_line(runs)  # the machine and the GL renderer the times were taken on
    head = first + ("\n" + where if where else "")
    if fmt == "text":
        sys.stdout.write(head + "\n\n" + format_table(rows, fmt))
        if sentences:
            sys.stdout.write("\n" + "\n".join(sentences) + "\n")
    else:  # standard output: the table alone, for a file or another program
        print("\n".join([head, *sentences]), file=sys.stderr)
        sys.stdout.write(format_table(rows, fmt))
    return 0


def gate_recordings(paths, gates: list[tuple[str, float]]) -> int:
    """``viewer compare RUN.csv ... --fail-if query_ms:PCT``: each run after the first against the first, per
    gated column, the ratio of the medians with its 95% interval and Mann-Whitney U test over the frames
    (:func:`viewer.timing.significance.difference`), a line each; returns 1 when one is significantly slower than
    the first by more than PCT, else 0."""
    from ..timing.significance import difference

    runs = runs_with_rows(read_runs(paths), "compare", warn=None)
    a, failed = runs[0], []
    for metric, pct in gates:
        for b in runs[1:]:
            d = difference(a[metric], b[metric])
            print(f"{metric}: {b.label} against {a.label}: B/A {d.ratio:.3f} (95% interval {d.lo:.3f}..{d.hi:.3f}, "
                  f"Mann-Whitney p {d.p:.2g}): {d.words()}")
            if d.significant and d.ratio > 1 + pct:
                failed.append(f"{b.label} {metric} {d.words()}")
    gate = ", ".join(f"{m}:{100 * p:g}%" for m, p in gates)
    print(f"--fail-if {gate}: " + ("a significant slowdown beyond it: " + "; ".join(failed) if failed
                                   else "no significant slowdown beyond it"))
    return 1 if failed else 0
