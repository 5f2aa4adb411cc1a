"""Reading recordings back: a CSV plus its metadata -> columns as numpy arrays.

The schema version comes from the metadata file when there is one (and must be a version this
code knows, with the header it names); a CSV without metadata is accepted when its header is
exactly the columns of a known version.
"""

from __future__ import annotations

import csv
import os
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ..domain import COORD_LIMIT
from ..errors import UserError
from ..files.inputs import why_missing
from ..terminal.text import shorten
from .meta import meta_path_for, read_meta, run_label
from .schema import SCHEMA_NAME, SCHEMAS, SCHEMA_VERSION, columns_for, version_of_header

__all__ = ["Run", "read_run", "read_runs", "split_views"]


@dataclass
class Run:
    """One recording.

    path : the CSV
    meta : its metadata (``{}`` when the file had none)
    version : the schema version it was written with
    columns : name -> (F,) array per column: int64 for counts, float64 for times and positions,
        str (object) for ``index``
    label : the legend label (from the metadata, else the file name)
    """

    path: Path
    meta: dict
    version: int
    columns: dict[str, np.ndarray] = field(repr=False)
    label: str = ""

    def __len__(self) -> int:
        return len(self.columns["frame"])

    def __getitem__(self, name: str) -> np.ndarray:
        return self.columns[name]


def read_run(path: str | os.PathLike) -> Run:
    """Read one recording; every problem is a :class:`UserError` naming the file (and line)."""
    p = Path(path)
    if not p.exists():
        raise UserError(f"{p}: {why_missing(p)}")
    if p.is_dir():
        raise UserError(f"{p}: is a directory, expected a recording CSV")
    if not p.is_file():  # a FIFO or a device would block or never end
        raise UserError(f"{p}: not a regular file, expected a recording CSV")
    meta = read_meta(p) or {}
    try:
        with open(p, newline="", encoding="utf-8-sig") as f:  # a spreadsheet may add a byte-order mark
            text = f.read()
    except UnicodeDecodeError:
        raise UserError(f"{p}: not a text CSV file") from None
    except OSError as exc:
        raise UserError(f"{p}: cannot read: {exc.strerror or exc}") from None

    lines = text.splitlines(keepends=True)
    if not lines:
        raise UserError(f"{p}: empty file (expected a header row of {SCHEMA_NAME} columns)")
    try:
        header = next(csv.reader([lines[0]]))
    except csv.Error as exc:
        raise UserError(f"{p}:1: not a CSV header row: {exc}") from None
    version = _version(p, meta, header)
    cols = columns_for(version)
    names = [c.name for c in cols]

    body = lines[1:]
    # a run killed without warning (SIGKILL) may end in a partial row: drop it, say so
    if body and not body[-1].endswith("\n"):
        print(f"warning: {p}: last row is incomplete (interrupted write), ignored", file=sys.stderr)
        body = body[:-1]
    raw: list[list[str]] = []
    linenos: list[int] = []  # the file line of each row (blank lines skipped)
    reader = csv.reader(body)
    try:
        for row in reader:
            lineno = reader.line_num + 1  # the header is line 1
            if not row:
                continue
            if len(row) != len(names):
                raise UserError(f"{p}:{lineno}: expected {len(names)} fields, found {len(row)}")
            raw.append(row)
            linenos.append(lineno)
    except csv.Error as exc:  # a NUL byte, a field beyond the csv module's size limit
        raise UserError(f"{p}:{reader.line_num + 1}: not a CSV row: {exc}") from None

    columns: dict[str, np.ndarray] = {}
    for j, c in enumerate(cols):
        vals = [r[j] for r in raw]
        try:
            if c.kind == "int":
                arr = np.array([int(v) for v in vals], dtype=np.int64)
            elif c.kind == "float":
                arr = np.array([float(v) for v in vals], dtype=np.float64)
                if not (np.abs(arr) <= COORD_LIMIT).all():  # NaN, an infinity, or a sum of two would overflow
                    raise ValueError("outside the domain")
            else:
                arr = np.array(vals, dtype=object)
        except (ValueError, OverflowError):
            raise _bad_value(p, c, vals, linenos) from None
        if c.kind == "int" and arr.size == 0:
            arr = np.zeros(0, dtype=np.int64)
        if _never_negative(c) and arr.size and (arr < 0).any():
            i = int(np.argmax(arr < 0))
            what = "a count" if c.kind == "int" else f"a time ({c.unit})"
            raise UserError(f"{p}:{linenos[i]}: column {c.name!r}: {_shown(vals[i])} is below zero; "
                            f"{what} cannot be negative")
        columns[c.name] = arr
    return Run(p, meta, version, columns, run_label(meta, fallback=p.stem))


_INT64 = (-(2**63), 2**63 - 1)


def _never_negative(c) -> bool:
    """Whether column ``c`` holds values that cannot be below zero: every count (the integer columns) and
    every time (seconds or milliseconds: ``t``, ``dt``, the stage times). Positions and angles can."""
    return c.kind == "int" or (c.kind == "float" and c.unit in ("s", "ms"))


def _shown(v: str) -> str:
    return shorten(v, 40)


def _bad_value(p: Path, c, vals: list[str], linenos: list[int]) -> UserError:
    """The first value of column ``c`` that does not parse (or fit), as a message naming file, line and column."""
    for i, v in enumerate(vals):
        shown = _shown(v)
        line = linenos[i]
        try:
            if c.kind == "int":
                x = int(v)
                if not _INT64[0] <= x <= _INT64[1]:
                    return UserError(f"{p}:{line}: column {c.name!r}: {shown} does not fit a 64-bit integer")
            else:
                x = float(v)
                if not np.isfinite(x):
                    return UserError(f"{p}:{line}: column {c.name!r}: {shown} is not a finite number")
                if abs(x) > COORD_LIMIT:
                    return UserError(f"{p}:{line}: column {c.name!r}: {shown} is outside the numeric domain "
                                     f"(|value| <= 2**100 = {COORD_LIMIT:.4g}, viewer.domain)")
        except ValueError:
            what = "an integer" if c.kind == "int" else "a number"
            return UserError(f"{p}:{line}: column {c.name!r}: {shown!r} is not {what}")
    return UserError(f"{p}: column {c.name!r}: a value cannot be read")  # pragma: no cover


def _version(p: Path, meta: dict, header: list[str]) -> int:
    known = ", ".join(str(v) for v in SCHEMAS)
    schema = meta.get("schema") if meta else None
    if schema is not None:
        if not isinstance(schema, dict) or schema.get("name") != SCHEMA_NAME:
            raise UserError(f"{meta_path_for(p)}: field 'schema' does not describe a {SCHEMA_NAME} recording")
        v = schema.get("version")
        if not isinstance(v, int) or isinstance(v, bool) or v not in SCHEMAS:
            raise UserError(
                f"{p}: recorded with schema version {v!r}; this viewer reads versions {known} "
                f"(current {SCHEMA_VERSION})"
            )
        want = [c.name for c in columns_for(v)]
        if [h.strip() for h in header] != want:
            raise UserError(
                f"{p}: header does not match schema version {v} named in {meta_path_for(p).name} "
                f"(expected columns {', '.join(want)})"
            )
        return v
    v = version_of_header(header)
    if v is None:
        raise UserError(
            f"{p}: header is not the column list of any {SCHEMA_NAME} schema version this viewer reads "
            f"({known}); first columns found: {', '.join(header[:6])}"
        )
    return v


def split_views(run: Run) -> list[Run]:
    """A recording of K views (``viewer record --views K``: a ``view`` column with K values) as K runs, one
    per view, in view order, each labelled ``... · view j``; any other recording as itself."""
    views = run.columns.get("view")
    if views is None:
        return [run]
    numbers = np.unique(views)
    if numbers.size <= 1:
        return [run]
    out = []
    for v in numbers.tolist():
        keep = views == v
        out.append(replace(run, columns={k: a[keep] for k, a in run.columns.items()}, label=f"{run.label} · view {v}"))
    return out


def read_runs(paths) -> list[Run]:
    """:func:`read_run` over ``paths``, a recording of several views split into one run per view
    (:func:`split_views`: what ``plot`` and ``compare`` group by); equal labels are told apart by the file
    name, then its folder, then a counter (``run1/octree.csv`` and ``run2/octree.csv`` read
    ``octree · ... [run1/octree.csv]``)."""
    runs = [v for p in paths for v in split_views(read_run(p))]
    base = [r.label for r in runs]
    for depth in (1, 2, 0):
        labels = [r.label for r in runs]
        dup = {lb for lb in labels if labels.count(lb) > 1}
        if not dup:
            break
        for i, r in enumerate(runs):
            if r.label in dup:
                if depth:
                    tail = "/".join(r.path.parts[-depth:])
                    r.label = f"{base[i]} [{tail}]"
                else:
                    r.label = f"{r.label} #{i + 1}"
    return runs
