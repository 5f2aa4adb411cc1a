"""The sweep's one CSV: a row per task x index, written as each task finishes, read back to resume.

Columns: the task's key and axis values, its status (``ok``, ``failed``, ``skipped``) and reason, the machine
that measured it (host, CPU model, cores, numba threads) and the task's wall time, then every column of
``viewer bench``'s table (:data:`viewer.bench.report.COLUMNS`), floats written exactly (shortest round trip),
so every ratio is the bench's own, computed inside one task from one run's timings. A failed or skipped task
has one row per index with the reason and empty measurements.

Each task's rows go to the file in one write, flushed and synced, so an interrupted sweep keeps every task that
finished; a task counts as done only when all its rows are there (``rows_in_task``) and every one of them parses,
so a torn write (last row or any other) or a hand-edited row that no longer parses makes its task run again. Such
a row is never simply dropped: it is named in a warning and kept, as it was, in ``sweep-rejected.csv`` beside
the CSV. The CSV is only ever replaced whole through a uniquely named temporary file in its directory (never a
fixed name that could be a symbolic link pointing elsewhere), and never written through a symbolic link.
"""

from __future__ import annotations

import csv
import errno
import io
import math
import os
import re
import stat
from typing import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from viewer.errors import UserError
from viewer.terminal.text import clip

from .spec import AXES, Task

__all__ = ["AXIS_COLUMNS", "REJECTED_NAME", "TASK_COLUMNS", "columns", "failure_rows", "open_results",
           "read_results", "task_rows"]

# the task's axes by name, but ``updates`` (the axis: how many update calls) is ``update_calls`` here, since the
# bench's own ``updates`` column says how an index updates ("in place", ...)
AXIS_COLUMNS: dict[str, str] = {a: ("update_calls" if a == "updates" else a) for a in AXES}
TASK_COLUMNS: tuple[str, ...] = ("task", *AXIS_COLUMNS.values(), "status", "reason", "host", "cpu", "cores",
                                 "threads", "task_s", "rows_in_task")
DONE = ("ok", "skipped")
STATUSES = ("ok", "failed", "skipped")
#: where rows that do not parse are kept, verbatim, when a resumed sweep sets them aside
REJECTED_NAME = "sweep-rejected.csv"
_KEY = re.compile(r"[0-9a-f]{12}")
_WHOLE = re.compile(r"[0-9]+")
_INTS = {AXIS_COLUMNS[a] for a in ("n", "queries", "frames", "updates", "seed")}


def columns(shares: Sequence[float] | None = None) -> list[str]:
    """The sweep CSV's header: the task's columns (:data:`TASK_COLUMNS`), then the bench's row columns that
    are not among them, in the bench's order, with a pair of dynamic columns per share of the bench's defaults
    and of ``shares`` (every share the sweep measures, :func:`viewer.sweep.spec.sweep_shares`), so a sweep of
    the default shares keeps the header it always had."""
    from viewer.bench.report import columns as bench_columns

    cols = bench_columns(_with_defaults(shares))
    return [*TASK_COLUMNS, *(name for name, _, _ in cols if name not in TASK_COLUMNS)]


def _cell(v) -> str:
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float) or hasattr(v, "dtype"):
        f = float(v)
        return "" if math.isnan(f) else repr(f)
    # one physical line per row, always: a resumed sweep reads the file line by line
    return "" if v is None else str(v).replace("\r", " ").replace("\n", " ")


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
    """Append-only writer of the sweep CSV; ``done`` holds the keys of tasks already measured, ``warnings`` what
    reading it back found (rows that do not parse, each named by its line)."""

    def __init__(self, path: Path, done: set[str], rows: list[dict], warnings: list[str] | None = None,
                 cols: list[str] | None = None):
        self.path = path
        self.done = done
        self.rows = rows
        self.warnings = list(warnings or [])
        self.cols = columns() if cols is None else cols
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError as exc:
            raise _open_error(path, exc) from None
        self._fd = fd

    def write(self, rows: list[dict]) -> None:
        """Append ``rows`` (missing columns empty, NaN as empty, extra keys dropped) and fsync, so a crash
        loses at most the task being written; ``rows`` also join :attr:`rows`. A write that fails (a full
        disk) cuts the file back to the rows before it and is a :class:`UserError`."""
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=self.cols, extrasaction="ignore", lineterminator="\n")
        for r in rows:
            w.writerow({k: _cell(r.get(k)) for k in self.cols})
        view = memoryview(buf.getvalue().encode("utf-8"))
        end = os.lseek(self._fd, 0, os.SEEK_END)
        try:
            while view:
                view = view[os.write(self._fd, view):]
            os.fsync(self._fd)
        except OSError as exc:
            try:
                os.ftruncate(self._fd, end)
            except OSError:  # pragma: no cover - a file we could write but not truncate: resuming rejects the row
                pass
            raise UserError(f"{self.path}: cannot write the sweep's results: {exc.strerror or exc}; the "
                            f"{len(self.rows)} rows before are kept: run the same command again to resume") from None
        self.rows.extend(rows)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


@dataclass
class _Read:
    """What reading a sweep CSV found."""

    kept: list[dict] = field(default_factory=list)  # the rows of finished tasks
    done: set[str] = field(default_factory=set)  # their keys
    rejected: list[bytes] = field(default_factory=list)  # rows that do not parse, as they were
    warnings: list[str] = field(default_factory=list)
    clean: bool = True  # the file holds exactly the header and ``kept``


def _open_error(path: Path, exc: OSError) -> UserError:
    if exc.errno == errno.ELOOP:
        return UserError(f"{path}: is a symbolic link; a sweep writes its results only to a regular file in its "
                         "directory: remove the link or choose another --out")
    return UserError(f"{path}: cannot write the sweep's results: {exc.strerror or exc}")


def _check_regular(path: Path) -> bool:
    """True when ``path`` is a regular file, False when it does not exist; :class:`UserError` for anything else
    (a symbolic link, a directory, a FIFO that reading would wait on forever)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise UserError(f"{path}: cannot read the sweep's results: {exc.strerror or exc}") from None
    if stat.S_ISLNK(st.st_mode):
        raise _open_error(path, OSError(errno.ELOOP, "symbolic link"))
    if not stat.S_ISREG(st.st_mode):
        raise UserError(f"{path}: not a regular file; the sweep's results must be a CSV file: remove it or "
                        "choose another --out")
    return True


def _row_problem(row: dict, numeric: set[str]) -> str | None:
    """Why ``row`` (column -> text) is not a row this viewer wrote, or None."""
    if not _KEY.fullmatch(row["task"]):
        return f"task {clip(row['task'], 40)!r} is not a task key"
    if row["status"] not in STATUSES:
        return f"status {clip(row['status'], 40)!r} is not one of {', '.join(STATUSES)}"
    if not _WHOLE.fullmatch(row["rows_in_task"]) or int(row["rows_in_task"]) < 1:
        return f"rows_in_task {clip(row['rows_in_task'], 40)!r} is not a whole number >= 1"
    for col in ("scene", "radius", "dynamic", "index"):
        if not row[col].strip():
            return f"{col} is empty"
    for col in _INTS:
        if not _WHOLE.fullmatch(row[col]):
            return f"{col} {clip(row[col], 40)!r} is not a whole number"
    for col in numeric:
        text = row[col]
        if not text:
            continue
        try:
            float(text)
        except ValueError:
            return f"{col} {clip(text, 40)!r} is not a number"
    return None


def _with_defaults(shares: Sequence[float] | None) -> tuple[float, ...]:
    """The bench's default shares and ``shares``, ascending, each once."""
    from viewer.bench.report import DEFAULT_SHARES

    return tuple(sorted({*DEFAULT_SHARES, *(shares or ())}))


def _numeric(shares: Sequence[float] | None = None) -> set[str]:
    """The columns that hold a number or nothing: the machine's counts, the task's time, and the bench's columns
    printed with a number format (those printed as ``{}`` may hold text)."""
    from viewer.bench.report import columns as bench_columns

    cols = bench_columns(_with_defaults(shares))
    return {"cores", "threads", "task_s"} | {name for name, _, fmt in cols if fmt != "{}"}


def _read(path: Path, shares: Sequence[float] | None = None) -> _Read:
    """Read the sweep CSV at ``path`` line by line (each row is one line), keeping the rows of finished tasks:
    every row of the task there (``rows_in_task``), each one parsing, each ``ok`` or ``skipped``. A row that does
    not parse (torn by a crash, cut short, hand-edited) is named in a warning and its task is not done.
    ``shares``: the sweep's dynamic shares (its columns)."""
    cols = columns(shares)
    numeric = _numeric(shares)
    res = _Read()
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UserError(f"{path}: cannot read the sweep's results: {exc.strerror or exc}") from None
    if not raw:
        res.clean = False
        return res
    lines = raw.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    else:
        res.clean = False  # the last line is torn (no end of line)
    try:
        header = next(csv.reader([lines[0].decode("utf-8").rstrip("\r")]))
    except (UnicodeDecodeError, csv.Error, StopIteration):
        header = None
    if header != cols:
        if len(lines) == 1 and not raw.endswith(b"\n") and ",".join(cols).startswith(
                lines[0].decode("utf-8", "replace")):
            res.clean = False  # only a torn header: nothing was recorded yet
            return res
        raise UserError(f"{path}: its columns are not this viewer's sweep columns (written by another "
                        "version?); choose a new --out")
    rows: list[dict] = []
    bad_tasks: set[str] = set()
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            res.clean = False
            continue
        problem, fields = None, None
        try:
            fields = next(csv.reader([line.decode("utf-8").rstrip("\r")]))
        except UnicodeDecodeError:
            problem = "not UTF-8 text"
        except (csv.Error, StopIteration) as exc:
            problem = f"not a CSV row ({exc})"
        if fields is not None:
            if len(fields) != len(cols):
                problem = f"{len(fields)} fields where a row has {len(cols)}"
            else:
                problem = _row_problem(dict(zip(cols, fields)), numeric)
        if problem is None:
            rows.append(dict(zip(cols, fields)))
            continue
        torn = number == len(lines) and not raw.endswith(b"\n")
        key = fields[0] if fields and _KEY.fullmatch(fields[0]) else None
        if key:
            bad_tasks.add(key)
        res.rejected.append(line)
        res.clean = False
        res.warnings.append(
            f"{path}: line {number} does not parse ({'torn: ' if torn else ''}{problem}): "
            f"{f'task {key}' if key else 'its task'} will be measured again; the line is kept in "
            f"{path.with_name(REJECTED_NAME)}")
    count: dict[str, int] = {}
    for r in rows:
        count[r["task"]] = count.get(r["task"], 0) + 1
    for r in rows:
        key = r["task"]
        if key not in bad_tasks and count[key] == int(r["rows_in_task"]) and r["status"] in DONE:
            res.kept.append(r)
        else:
            res.clean = False
    # a task is done only when every one of its rows was kept (and agree on how many there are)
    kept_count: dict[str, int] = {}
    for r in res.kept:
        kept_count[r["task"]] = kept_count.get(r["task"], 0) + 1
    whole = {k for k, c in kept_count.items() if c == count[k]}
    if len(whole) != len(kept_count):
        res.kept = [r for r in res.kept if r["task"] in whole]
    res.done = whole
    return res


def read_results(path: Path, shares: Sequence[float] | None = None) -> tuple[set[str], list[str]]:
    """The keys of the tasks finished in the sweep CSV at ``path`` and the warnings reading it gave, changing
    nothing (what ``--dry-run`` shows)."""
    path = Path(path)
    if not _check_regular(path):
        return set(), []
    res = _read(path, shares)
    return res.done, res.warnings


def open_results(path: Path, shares: Sequence[float] | None = None) -> ResultsFile:
    """Open (or create) the sweep CSV at ``path``, keeping the rows of finished tasks and dropping the rest
    (failed tasks and torn writes are run again; rows that do not parse are kept in :data:`REJECTED_NAME`
    first). A CSV with other columns is refused, naming the file. The caller holds the directory's lock."""
    path = Path(path)
    cols = columns(shares)
    if _check_regular(path):
        res = _read(path, shares)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        res = _Read(clean=False)
    if res.rejected:
        _keep_rejected(path.with_name(REJECTED_NAME), res.rejected, cols)
    if not res.clean:
        _rewrite(path, cols, res.kept)
    return ResultsFile(path, res.done, res.kept, res.warnings, cols)


def _keep_rejected(where: Path, lines: list[bytes], cols: list[str]) -> None:
    """Append ``lines`` (rows that do not parse, as they were) to ``where``, never through a symbolic link."""
    try:
        fd = os.open(where, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise _open_error(where, exc) from None
    with os.fdopen(fd, "ab") as fh:
        if fh.tell() == 0:
            fh.write((",".join(cols) + "\n").encode())
        fh.write(b"".join(line + b"\n" for line in lines))
        fh.flush()
        os.fsync(fh.fileno())


def _rewrite(path: Path, cols: list[str], rows: list[dict]) -> None:
    """Replace ``path`` whole by a header and ``rows``: written to a uniquely named temporary file in the same
    directory (created exclusively: never an existing file or link), synced, then renamed over ``path``."""
    try:
        mode = stat.S_IMODE(os.lstat(path).st_mode)
    except OSError:
        mode = 0o644
    from viewer.files.output import atomic_file

    try:
        with atomic_file(path, text=True, mode=mode, sync=True, newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=cols, extrasaction="ignore", lineterminator="\n")
            w.writeheader()
            for r in rows:
                w.writerow({k: r.get(k, "") for k in cols})
    except OSError as exc:
        raise _open_error(path, exc) from None
