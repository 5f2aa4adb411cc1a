"""The per-frame recorder: rows buffered in memory, flushed in batches, never lost on the way out.

Usage from a frame loop::

    rec = Recorder("runs/a.csv", meta)      # header and metadata written now; bad paths fail now
    for ...:
        stats = pipeline.run(...)           # a FrameStats (or any mapping) with the CSV's field names
        rec.append(stats)
    rec.close()                              # or ``with Recorder(...) as rec:``

What "never distorts what it records" means here: ``append`` only checks the values and stores a
tuple; the rows are formatted and written every ``flush_rows`` rows or ``flush_seconds`` seconds, and
the time spent in the recorder during a frame (that append, plus a flush if one happened) is its own
column, ``record_ms``, outside ``frame_ms``.

What "a run killed mid-way leaves a valid CSV" means: the file only ever receives whole rows, in one
``os.write`` per flush (a batch torn by an exception is cut back to its last whole row before anything
else is written). SIGTERM and SIGINT are routed through a handler that waits for a write or a close in
progress, then hands the signal to the handler that was there before (Python's Ctrl-C handler raises
``KeyboardInterrupt``; an unhandled SIGTERM becomes ``SystemExit(143)``), so the program unwinds through
``close``; an ``atexit`` hook closes whatever is still open (crashes included). A signal the process
ignores stays ignored. Only SIGKILL or a power cut lose the rows still buffered (at most one batch).

A write that fails (a full disk, a file-size limit) cuts the CSV back to its whole rows, finishes the
metadata (``frames``, ``ended: "write error"``, ``error``) and raises a :class:`~viewer.errors.UserError`
saying so. Each CSV is locked while it is written: a second recorder on the same file (a second
``viewer record`` into the same directory) is refused with a message instead of interleaving rows.
"""

from __future__ import annotations

import atexit
import csv
import errno
import fcntl
import io
import operator
import os
import signal
import threading
import time
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..terminal.text import clip
from .meta import write_meta
from .schema import COLUMN_INFO, COLUMNS

__all__ = ["Recorder", "check_not_in_use", "in_use"]

# ----------------------------------------------------------------------------- process-wide hooks

_SIGNALS = (signal.SIGTERM, signal.SIGINT)
_live: "weakref.WeakSet[Recorder]" = weakref.WeakSet()
_busy = 0  # > 0 while a recorder writes or closes: a signal then waits for it to finish
_pending: list[int] = []  # signals that arrived while busy, delivered when the write is done
_previous: dict[int, Any] = {}  # the handler each signal had before ours
_atexit_installed = False


def _on_signal(signum, frame) -> None:
    if _busy:
        if signum not in _pending:
            _pending.append(signum)
        return
    _deliver(signum, frame)


def _deliver(signum: int, frame) -> None:
    """Hand ``signum`` to the handler that was installed before ours (raising, as a rule)."""
    name = signal.Signals(signum).name
    recs = list(_live)
    for rec in recs:
        rec._interrupted = name
    prev = _previous.get(signum)
    if callable(prev):
        prev(signum, frame)  # e.g. default_int_handler: raises KeyboardInterrupt
    elif signum == signal.SIGINT:
        raise KeyboardInterrupt()
    else:
        raise SystemExit(128 + signum)
    for rec in recs:  # the previous handler returned: the program goes on, the run was not interrupted
        if rec._interrupted == name:
            rec._interrupted = None


def _enter() -> None:
    global _busy
    _busy += 1


def _leave() -> None:
    """End a write or close; the first signal that arrived meanwhile is delivered now."""
    global _busy
    _busy -= 1
    if not _busy and _pending:
        signum = _pending[0]
        _pending.clear()
        _deliver(signum, None)


def _close_all_at_exit() -> None:
    for rec in list(_live):
        try:
            rec.close(ended=rec._interrupted or "exit")
        except BaseException:  # pragma: no cover - nothing sensible to do at interpreter exit
            pass


def _install_hooks() -> None:
    """atexit once; our signal handler in front of whatever handler SIGTERM / SIGINT have now (again if
    someone replaced it since). Signal handlers can only be set from the main thread."""
    global _atexit_installed
    if not _atexit_installed:
        _atexit_installed = True
        atexit.register(_close_all_at_exit)
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in _SIGNALS:
        cur = signal.getsignal(sig)
        if cur is _on_signal or cur in (signal.SIG_IGN, None):
            continue  # ours already, or ignored on purpose (e.g. a background job), or not Python's to set
        _previous[sig] = cur
        signal.signal(sig, _on_signal)


def _in_use_message(path) -> str:
    return (f"{path}: another recording is writing this file now (a second 'viewer record' into the same "
            "directory?); wait for it to finish or record into another directory")


def check_not_in_use(path: str | os.PathLike) -> None:
    """A :class:`UserError` when a recorder is writing the CSV at ``path`` now (see :func:`in_use`)."""
    if in_use(path):
        raise UserError(_in_use_message(path))


def in_use(path: str | os.PathLike) -> bool:
    """Whether a recorder (in this process or another) is writing the CSV at ``path`` now."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # closing also releases the lock taken here
    return False


# ----------------------------------------------------------------------------- values


def _int_value(v):
    if type(v) is int:
        return v
    if isinstance(v, (bool, str, bytes)) or v is None:
        raise TypeError
    try:
        return operator.index(v)  # numpy integers
    except TypeError:
        f = float(v)
        if not f.is_integer():
            raise ValueError from None
        return int(f)


def _float_value(v):
    if type(v) is not float:
        if isinstance(v, (bool, str, bytes)) or v is None:
            raise TypeError
        v = float(v)
    if v - v != 0.0:  # inf or NaN
        raise ValueError
    return v


def _str_value(v):
    if not isinstance(v, str):
        raise TypeError
    return v


_CONVERT = {"int": _int_value, "float": _float_value, "str": _str_value}
_WHAT = {"int": "a whole number", "float": "a finite number", "str": "a string"}


# ----------------------------------------------------------------------------- the recorder


class Recorder:
    """Append per-frame rows to a CSV of schema :data:`~viewer.recording.schema.COLUMNS`.

    Parameters
    ----------
    path : the CSV to write (its directory must exist and be writable; the file is replaced; a symbolic
        link by that name is replaced by the new file, never written through)
    meta : the metadata dict (:func:`~viewer.recording.meta.build_meta`), written beside the CSV as
        ``NAME.meta.json`` now and again on :meth:`close` with the row count; None writes a minimal one
    flush_rows : rows buffered before a write
    flush_seconds : the longest a row waits in memory

    Attributes: ``rows_written`` (whole rows in the file), ``error`` (why a write failed, or None).
    """

    #: bytes of spare room kept in the metadata file while recording, so that it can still be finished
    #: in place when the disk is full
    META_RESERVE = 4096

    def __init__(
        self,
        path: str | os.PathLike,
        meta: dict | None = None,
        *,
        flush_rows: int = 256,
        flush_seconds: float = 1.0,
    ) -> None:
        self.path = Path(path)
        self.meta: dict[str, Any] = dict(meta) if meta is not None else {}
        self.flush_rows = max(1, int(flush_rows))
        self.flush_seconds = float(flush_seconds)
        self.rows_written = 0
        self.error: str | None = None
        self.closed = False
        self._rows: list[tuple] = []
        self._count = 0
        self._offset = 0  # bytes of whole rows (and the header) in the file
        self._torn = False  # a write was cut short by an exception: cut the file back before the next
        self._batch_done = 0  # bytes of the batch being written that reached the file
        self._interrupted: str | None = None
        self._last_flush = time.perf_counter()
        self._fmts = tuple(_formatter(c.kind, c.fmt) for c in COLUMN_INFO)
        self._convs = tuple(_CONVERT[c.kind] for c in COLUMN_INFO)
        self._record_at = COLUMNS.index("record_ms")
        self._fd = -1

        if self.path.is_dir() and not self.path.is_symlink():
            raise UserError(f"{self.path}: is a directory, expected a CSV file name")
        parent = self.path.parent
        if not parent.is_dir():
            raise UserError(f"{self.path}: directory {parent} does not exist")
        self._fd = _open_own_file(self.path)  # truncated once locked
        try:
            _lock(self._fd, self.path)
            os.ftruncate(self._fd, 0)
            header = _csv_line(COLUMNS).encode()
            self._write_all(header)
            self._offset = len(header)
            self.meta.setdefault("frames", 0)
            self.meta["complete"] = False
            self.meta_path = write_meta(self.path, self.meta, reserve=self.META_RESERVE)
        except BaseException as exc:
            os.close(self._fd)
            self._fd = -1
            if not isinstance(exc, _Locked):
                try:
                    self.path.unlink()
                except OSError:
                    pass
            if isinstance(exc, OSError):
                raise UserError(f"{self.path}: cannot write: {exc.strerror or exc}") from None
            raise
        _install_hooks()
        _live.add(self)

    # -------------------------------------------------------------------------- hot path
    def append(self, stats: Any = None, /, **values: Any) -> None:
        """Buffer one frame's row.

        ``stats`` is a ``FrameStats`` (attributes named like the columns) or a mapping; ``values``
        override or supply columns. ``record_ms`` is filled in by the recorder; ``frame`` defaults
        to the row number. Writes happen here only every ``flush_rows`` rows / ``flush_seconds``.
        A value that does not fit its column (None, text in a number column, NaN, 1.5 frames) is a
        ``ValueError`` naming the column, raised here; the rows before it are kept.
        """
        t0 = time.perf_counter()
        if self.closed:
            raise ValueError(f"{self.path}: recorder is closed")
        if self.error is not None:
            raise UserError(f"{self.path}: recording stopped after {self.rows_written} frames: {self.error}")
        row = self._row(stats, values)
        try:
            row = [conv(v) for conv, v in zip(self._convs, row)]
        except (TypeError, ValueError, OverflowError):
            raise self._bad_value(row) from None
        if len(self._rows) >= self.flush_rows or (
            self._rows and t0 - self._last_flush >= self.flush_seconds
        ):
            self._flush_rows()
        row[self._record_at] = (time.perf_counter() - t0) * 1e3
        self._rows.append(tuple(row))
        self._count += 1

    def _bad_value(self, row: list) -> ValueError:
        for c, conv, v in zip(COLUMN_INFO, self._convs, row):
            try:
                conv(v)
            except (TypeError, ValueError, OverflowError):
                return ValueError(f"{self.path}: frame {self._count}: column {c.name!r} must be {_WHAT[c.kind]}, "
                                  f"got {clip(repr(v), 40)}; the row is not recorded")
        return ValueError(f"{self.path}: frame {self._count}: a value does not fit its column")  # pragma: no cover

    def _row(self, stats: Any, values: dict) -> list:
        get = stats.__getitem__ if isinstance(stats, Mapping) else (lambda k: getattr(stats, k))
        row = []
        for name in COLUMNS:
            if name in values:
                row.append(values[name])
                continue
            try:
                row.append(get(name))
            except (AttributeError, KeyError):
                if name == "frame":
                    row.append(self._count)
                elif name == "record_ms":
                    row.append(0.0)
                else:
                    raise ValueError(
                        f"recorder: frame stats have no field {name!r} (a CSV column); "
                        f"pass it as append(stats, {name}=...)"
                    ) from None
        return row

    # -------------------------------------------------------------------------- writing
    def flush(self) -> None:
        """Write the buffered rows now (e.g. at a quiet moment, or before reading the file)."""
        if not self.closed and self.error is None:
            self._flush_rows()

    def _flush_rows(self) -> None:
        _enter()
        try:
            self._write_rows()
        finally:
            _leave()

    def _write_rows(self) -> None:
        """Write the buffered rows as one batch of whole rows (signals wait: the caller is busy). A
        failed write cuts the file back to its whole rows and raises a UserError saying so."""
        if self._torn:
            self._cut_back()
        if self._rows:
            fmts = self._fmts
            buf = io.StringIO()
            csv.writer(buf, lineterminator="\n").writerows([[f(v) for f, v in zip(fmts, r)] for r in self._rows])
            data = buf.getvalue().encode()
            self._torn = True
            self._batch_done = 0
            try:
                self._write_all(data)
            except OSError as exc:
                # keep the whole rows that did reach the file, cut the torn one
                whole = data.rfind(b"\n", 0, self._batch_done) + 1
                kept = data.count(b"\n", 0, whole)
                self._offset += whole
                self.rows_written += kept
                lost = len(self._rows) - kept
                self._rows.clear()
                self._cut_back()
                self.error = f"{exc.strerror or exc} (errno {exc.errno})" if exc.errno else str(exc)
                self.meta["rows_lost"] = self.meta.get("rows_lost", 0) + lost
                raise UserError(
                    f"{self.path}: cannot write ({exc.strerror or exc}); the recording stopped after "
                    f"{self.rows_written} frames: the CSV keeps its {self.rows_written} whole rows "
                    f"({lost} more could not be written) and its metadata says so"
                ) from None
            self._offset += len(data)
            self.rows_written += len(self._rows)
            self._torn = False
            self._rows.clear()
        self._last_flush = time.perf_counter()

    def _cut_back(self) -> None:
        """Cut the file back to its whole rows (after a write that failed or was interrupted)."""
        try:
            os.ftruncate(self._fd, self._offset)
            os.lseek(self._fd, self._offset, os.SEEK_SET)
            self._torn = False
        except OSError:  # pragma: no cover - a file we could write but not truncate
            pass

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            n = os.write(self._fd, view)
            view = view[n:]
            self._batch_done += n

    def close(self, ended: str = "closed") -> None:
        """Write every buffered row, close the file and rewrite the metadata with the row count.

        ``ended`` is stored in the metadata (``"closed"``, ``"SIGTERM"``, ``"exit"``, ...). Safe to
        call twice. A signal arriving meanwhile waits until the metadata is written. A write that
        fails here raises its :class:`UserError` only on a normal close (``ended="closed"``): on the
        way out of another error the metadata records it and the first error stays the one reported.
        """
        if self.closed:
            return
        failure: UserError | None = None
        _enter()
        try:
            try:
                if self.error is None:
                    self._write_rows()
            except UserError as exc:
                failure = exc
            finally:
                self.closed = True
                _live.discard(self)
                if self._fd >= 0:
                    if self._torn:
                        self._cut_back()
                    os.close(self._fd)  # releases the lock
                    self._fd = -1
                self.meta["frames"] = self.rows_written
                self.meta["complete"] = self._interrupted is None and ended == "closed" and self.error is None
                self.meta["ended"] = "write error" if self.error else (self._interrupted or ended)
                if self.error:
                    self.meta["error"] = self.error
                try:
                    write_meta(self.path, self.meta)
                except UserError as exc:
                    failure = failure or exc  # the CSV holds whole rows; a metadata failure is still said
        finally:
            _leave()
        if failure is not None and ended == "closed":
            raise failure

    def __enter__(self) -> "Recorder":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close(ended="closed" if exc_type is None else exc_type.__name__)

    def __len__(self) -> int:
        """Rows appended so far (written or buffered)."""
        return self._count

    def __repr__(self) -> str:
        return f"<Recorder {str(self.path)!r} rows={self._count} written={self.rows_written}>"


class _Locked(UserError):
    pass


def _open_own_file(path: Path) -> int:
    """Open ``path`` for writing (created if missing), never through a symbolic link: a link by that name
    is removed and a new file made in its place, so the file it pointed to (maybe outside the run's
    directory) is left as it was. A :class:`UserError` when it cannot be written."""
    flags = os.O_WRONLY | os.O_CREAT | _NOFOLLOW
    for _ in range(3):
        try:
            if os.path.islink(path):
                os.unlink(path)  # replace the link, not what it points to
            return os.open(path, flags, 0o644)
        except FileNotFoundError:
            continue  # the link went away between the look and the unlink: try again
        except OSError as exc:
            if exc.errno == errno.ELOOP and os.path.islink(path):
                continue  # a link made between the unlink and the open: remove it too
            raise UserError(f"{path}: cannot write: {exc.strerror or exc}") from None
    raise UserError(f"{path}: cannot write: a symbolic link keeps appearing at this name")


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _lock(fd: int, path: Path) -> None:
    """Lock the CSV for this recorder (released when the file is closed, or the process ends)."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise _Locked(_in_use_message(path)) from None
    except OSError as exc:
        if exc.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
            raise  # a file system without locks is written unlocked


def _formatter(kind: str, fmt: str | None):
    if kind == "int":
        return lambda v: str(int(v))
    if kind == "str":
        return str
    if fmt is None:
        return lambda v: repr(float(v))
    return lambda v: fmt % v


def _csv_line(fields) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(fields)
    return buf.getvalue()
