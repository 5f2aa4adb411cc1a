"""Any result the testbed writes, read back into one kind of table: :func:`load`.

``load(path)`` recognises a bench run (its directory or ``bench.json``, format version 1 or 2), a recording
(``RUN.csv`` beside ``RUN.meta.json``), a sweep's results (its directory or ``sweep.csv``) and a cost map (its
directory or ``costmap.csv``), and returns a :class:`Result`: its kind, format name and version, provenance (what
the file says of the project's version, commit, machine and packages; empty for files from before they said so)
and its rows, one dict per row, as the file holds them::

    from viewer.results import load
    bench = load("runs/bench-20261207")          # Result(kind="bench", rows=[{"workload": ..., "index": ...}, ...])
    table = bench.to_arrow()                     # a pyarrow.Table, for pandas, polars or DuckDB
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UserError
from ..index.specs import number_or_text

__all__ = ["Result", "load"]


@dataclass
class Result:
    """One result file read back.

    kind : ``bench``, ``recording``, ``sweep`` or ``costmap``
    format, version : the file's format name and version (a recording's: its schema's)
    provenance : the project's version, commit, dirty flag, machine line and packages ({} when not recorded)
    rows : the rows, one dict each (column name -> value)
    meta : the file's metadata as written (bench.json, RUN.meta.json; {} for a sweep or a cost map)
    """

    path: Path
    kind: str
    format: str
    version: int
    provenance: dict = field(default_factory=dict)
    rows: list[dict] = field(default_factory=list)
    meta: dict = field(default_factory=dict)

    def to_arrow(self):
        """The rows as a ``pyarrow.Table`` (columns in the order of the first row)."""
        import pyarrow as pa

        names = list(dict.fromkeys(k for r in self.rows for k in r))
        return pa.table({k: [r.get(k) for r in self.rows] for k in names})


def load(path: str | Path) -> Result:
    """Read the result at ``path`` (see the module's docstring); a :class:`UserError` naming the path for one
    that is none of them."""
    p = Path(path)
    if not p.exists():
        raise UserError(f"{p}: no such file or directory")
    if p.is_dir():
        for name, kind in (("bench.json", "bench"), ("sweep.csv", "sweep"), ("costmap.csv", "costmap")):
            if (p / name).is_file():
                return load(p / name) if kind != "bench" else _bench(p)
        raise UserError(f"{p}: holds no bench.json, sweep.csv or costmap.csv")
    if p.suffix == ".json":
        return _bench(p)
    if p.name == "sweep.csv":
        meta = _json_beside(p.with_name("sweep.json"))
        runs = meta.get("runs") or [{}]
        return Result(p, "sweep", meta.get("format", "viewdist-sweep"), int(meta.get("format_version", 1)),
                      runs[-1].get("provenance", {}), _csv_rows(p), meta)
    if p.name == "costmap.csv":
        meta = _json_beside(p.with_name("costmap.json"))
        return Result(p, "costmap", meta.get("format", "viewdist-costmap"), int(meta.get("format_version", 1)),
                      meta.get("provenance", {}), _csv_rows(p), meta)
    if p.suffix.lower() == ".csv":
        from ..recording import read_run

        run = read_run(p)
        names = list(run.columns)
        rows = [{k: _item(run.columns[k][i]) for k in names} for i in range(len(run))]
        schema = run.meta.get("schema", {}) if run.meta else {}
        return Result(p, "recording", schema.get("name", "recording"), int(run.version), (run.meta or {}).get(
            "provenance", {}), rows, run.meta or {})
    raise UserError(f"{p}: not a result the testbed writes (bench.json, a recording's .csv, sweep.csv, costmap.csv)")


def _bench(p: Path) -> Result:
    from ..bench.compare_runs import load_bench

    run = load_bench(p)
    return Result(run.path, "bench", run.meta.get("format", "viewdist-bench"), run.version,
                  run.meta.get("provenance", {}), list(run.meta["rows"]), run.meta)


def _json_beside(p: Path) -> dict:
    """The metadata file ``p`` beside a CSV ({} when there is none: files from before it was written)."""
    try:
        return json.loads(p.read_text()) if p.is_file() else {}
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UserError(f"{p}: not readable metadata ({exc})") from None


def _item(v):
    return v.item() if hasattr(v, "item") else v


def _csv_rows(p: Path) -> list[dict]:
    try:
        with open(p, newline="") as fh:
            return [{k: number_or_text(v) for k, v in row.items()} for row in csv.DictReader(fh)]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise UserError(f"{p}: cannot read ({exc})") from None
