"""What a report reads: each input path sorted into a recording, a bench run or a sweep and read back.

- a recording: ``RUN.csv`` (its ``RUN.meta.json`` beside it, or that metadata file named instead), read by
  :func:`viewer.recording.read_runs`;
- a bench run: its directory or its ``bench.json`` (raw samples included when ``bench_samples.parquet`` is beside
  it), read by :func:`viewer.bench.compare_runs.load_bench`;
- a sweep: its directory or its one CSV (:mod:`viewer.sweep.results`: a ``task`` and a ``status`` column), read by
  :func:`viewer.results.load` (its provenance from ``sweep.json`` beside it) when named ``sweep.csv``.

Anything else is a :class:`~viewer.errors.UserError` naming the path.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from ..bench.compare_runs import BenchRun, is_bench, load_bench
from ..errors import UserError
from ..files.inputs import why_missing
from ..recording.reader import Run, read_runs

__all__ = ["Inputs", "Sweep", "read_inputs"]

#: the columns that make a CSV a sweep's (:data:`viewer.sweep.results.TASK_COLUMNS` starts with them)
SWEEP_MARKS = ("task", "status")
#: the name a sweep gives its CSV in its output directory
SWEEP_FILE = "sweep.csv"


@dataclass
class Sweep:
    """A sweep's CSV read back: its path, its rows (column -> a number where the cell is one, else text) and its
    provenance (``{}`` when no ``sweep.json`` beside it says)."""

    path: Path
    rows: list[dict]
    provenance: dict = field(default_factory=dict)

    def ok_rows(self) -> list[dict]:
        """The rows of tasks that ran (status ``ok``)."""
        return [r for r in self.rows if r.get("status") == "ok"]


@dataclass
class Inputs:
    """Every input of a report, by kind, in the order given."""

    recordings: list[Run] = field(default_factory=list)
    benches: list[BenchRun] = field(default_factory=list)
    sweeps: list[Sweep] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.recordings or self.benches or self.sweeps)


def _number(text: str):
    try:
        return float(text)
    except ValueError:
        return text


def _header(path: Path) -> list[str]:
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            return next(csv.reader(fh), [])
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise UserError(f"{path}: not a readable CSV ({exc})") from None


def read_sweep(path: Path) -> Sweep:
    """A sweep's CSV (:mod:`viewer.sweep.results`) as a :class:`Sweep`; :class:`UserError` naming the file."""
    if path.name == SWEEP_FILE:
        from ..results import load

        res = load(path)
        return Sweep(path, res.rows, res.provenance)
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            rows = [{k: _number(v) for k, v in row.items() if k is not None} for row in csv.DictReader(fh)]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise UserError(f"{path}: not a readable sweep CSV ({exc})") from None
    return Sweep(path, rows)


def kind_of(path: str | Path) -> str:
    """``recording``, ``bench`` or ``sweep``: what ``path`` holds; :class:`UserError` naming it otherwise."""
    p = Path(path)
    if not p.exists():
        raise UserError(f"{p}: {why_missing(p)}")
    if p.name.endswith(".meta.json"):
        return "recording"
    if is_bench(p):
        return "bench"
    if p.is_dir() and (p / SWEEP_FILE).is_file():
        return "sweep"
    if p.is_file() and p.suffix.lower() == ".csv":
        head = _header(p)
        return "sweep" if all(m in head for m in SWEEP_MARKS) else "recording"
    raise UserError(f"{p}: not a recording (RUN.csv), a bench run (its directory or bench.json) nor a sweep's CSV")


def read_inputs(paths: Sequence[str | Path]) -> Inputs:
    """Every path read back by its kind (:func:`kind_of`); :class:`UserError` naming the first that is none."""
    out = Inputs()
    runs: list[Path] = []
    for path in paths:
        kind = kind_of(path)
        if kind == "bench":
            out.benches.append(load_bench(path))
        elif kind == "sweep":
            p = Path(path)
            out.sweeps.append(read_sweep(p / SWEEP_FILE if p.is_dir() else p))
        else:
            p = Path(path)
            if p.name.endswith(".meta.json"):
                p = p.with_name(p.name[: -len(".meta.json")] + ".csv")
            runs.append(p)
    if runs:
        out.recordings = read_runs(runs)
    return out
