"""The sweep's one CSV: a row per task x index, written as each task finishes, read back to resume.

Columns: the task's key and axis values, its status (``ok``, ``failed``, ``skipped``) and reason, the machine
that measured it (host, CPU model, cores, numba threads) and the task's wall time, then every column of
``viewer bench``'s table (:data:`viewer.bench.report.COLUMNS`), floats written exactly (shortest round trip),
so every ratio is the bench's own, computed inside one task from one run's timings. A failed or skipped task
has one row per index with the reason and empty measurements.

Each task's rows go to the file in one write, flushed and synced, so an interrupted sweep keeps every task that
finished; a task counts as done only when all its rows are there (``rows_in_task``), so a torn write is run
again.
"""

from __future__ import annotations

import csv
import math
import os
from pathlib import Path

from viewer.errors import UserError

from .spec import AXES, Task

__all__ = ["AXIS_COLUMNS", "TASK_COLUMNS", "columns", "failure_rows", "open_results", "task_rows"]

# the task's axes by name, but ``updates`` (the axis: how many update calls) is ``update_calls`` here, since the
# bench's own ``updates`` column says how an index updates ("in place", ...)
AXIS_COLUMNS: dict[str, str] = {a: ("update_calls" if a == "updates" else a) for a in AXES}
TASK_COLUMNS: tuple[str, ...] = ("task", *AXIS_COLUMNS.values(), "status", "reason", "host", "cpu", "cores",
                                 "threads", "task_s", "rows_in_task")
DONE = ("ok", "skipped")


def columns() -> list[str]:
    """The sweep CSV's header: the task's columns (:data:`TASK_COLUMNS`), then the bench's row columns that
    are not among them, in the bench's order."""
    from viewer.bench.report import COLUMNS

    return [*TASK_COLUMNS, *(name for name, _, _ in COLUMNS if name not in TASK_COLUMNS)]


def _cell(v) -> str:
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float) or hasattr(v, "dtype"):
        f = float(v)
        return "" if math.isnan(f) else repr(f)
    return "" if v is None else str(v)


def task_rows(task: Task, result: dict) -> list[dict]:
    """The CSV rows of a task that ran: one per bench row, or one per index marked skipped when none came back."""
    bench = result["rows"]
    head = {"task": task.key, **_params(task), **result["machine"], "task_s": result["seconds"]}
    if not bench:
        why = "; ".join(result["log"][-2:]) or "no rows"
        return failure_rows(task, "skipped", why, head)
    skipped = [line for line in result["log"] if "skipped" in line]
    out = [{**head, "status": "ok", "reason": "; ".join(skipped), "rows_in_task": len(bench), **r} for r in bench]
    return out


def failure_rows(task: Task, status: str, reason: str, head: dict | None = None) -> list[dict]:
    """One row per index of ``task`` marked ``status`` (``"failed"``, ``"skipped"``) for ``reason``;
    ``head`` the task's columns when known (else its key and axis values)."""
    head = head or {"task": task.key, **_params(task)}
    n = len(task.indexes)
    return [{**head, "status": status, "reason": reason, "rows_in_task": n, "index": ix} for ix in task.indexes]


def _params(task: Task) -> dict:
    return {AXIS_COLUMNS[k]: v for k, v in task.params().items()}


class ResultsFile:
    """Append-only writer of the sweep CSV; ``done`` holds the keys of tasks already measured."""

    def __init__(self, path: Path, done: set[str], rows: list[dict]):
        self.path = path
        self.done = done
        self.rows = rows
        self.cols = columns()
        self._fh = open(path, "a", newline="", encoding="utf-8")

    def write(self, rows: list[dict]) -> None:
        """Append ``rows`` (missing columns empty, NaN as empty, extra keys dropped) and fsync, so a crash
        loses at most the task being written; ``rows`` also join :attr:`rows`."""
        import io

        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=self.cols, extrasaction="ignore", lineterminator="\n")
        for r in rows:
            w.writerow({k: _cell(r.get(k)) for k in self.cols})
        self._fh.write(buf.getvalue())
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self.rows.extend(rows)

    def close(self) -> None:
        self._fh.close()


def open_results(path: Path) -> ResultsFile:
    """Open (or create) the sweep CSV at ``path``, keeping the rows of finished tasks and dropping the rest
    (failed tasks and torn writes are run again). A CSV with other columns is refused, naming the file."""
    path = Path(path)
    cols = columns()
    kept: list[dict] = []
    done: set[str] = set()
    if path.exists():
        try:
            raw = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UserError(f"{path}: cannot read the sweep's results: {exc}") from None
        torn = bool(raw) and not raw.endswith("\n")
        if torn:
            raw = raw[: raw.rfind("\n") + 1]  # a torn last row
        lines = raw.splitlines()
        if lines:
            reader = csv.DictReader(lines)
            if reader.fieldnames != cols:
                raise UserError(f"{path}: its columns are not this viewer's sweep columns (written by another "
                                "version?); choose a new --out")
            rows = list(reader)
            count: dict[str, int] = {}
            for r in rows:
                count[r["task"]] = count.get(r["task"], 0) + 1
            for r in rows:
                try:
                    whole = count[r["task"]] == int(r["rows_in_task"])
                except ValueError:
                    whole = False
                if whole and r["status"] in DONE:
                    kept.append(r)
                    done.add(r["task"])
        if torn or len(kept) != max(0, len(lines) - 1):
            _rewrite(path, cols, kept)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.stat().st_size == 0:
        _rewrite(path, cols, kept)
    return ResultsFile(path, done, kept)


def _rewrite(path: Path, cols: list[str], rows: list[dict]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=cols, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in cols})
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
