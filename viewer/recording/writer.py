"""The per-frame recorder: rows buffered in memory, flushed in batches, never lost on the way out.

Usage from a frame loop::

    rec = Recorder("runs/a.csv", meta)      # header and metadata written now; bad paths fail now
    for ...:
        stats = pipeline.run(...)           # a FrameStats (or any mapping) with the CSV's field names
        rec.append(stats)
    rec.close()                              # or ``with Recorder(...) as rec:``

What "never distorts what it records" means here: ``append`` only stores a tuple; the rows are
formatted and written every ``flush_rows`` rows or ``flush_seconds`` seconds, and the time spent in
the recorder during a frame (that append, plus a flush if one happened) is its own column,
``record_ms``, outside ``frame_ms``.

What "a run killed mid-way leaves a valid CSV" means: the file only ever receives whole rows, in one
``os.write`` per flush. SIGTERM and SIGINT (when their handlers are Python's defaults) are routed
through a handler that waits for a flush in progress, then raises ``SystemExit`` / ``KeyboardInterrupt``
so the program unwinds through ``close``; an ``atexit`` hook closes whatever is still open (crashes
included). Only SIGKILL or a power cut lose the rows still buffered (at most one batch).
"""

from __future__ import annotations

import atexit
import csv
import io
import os
import signal
import threading
import time
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import UserError
from .meta import write_meta
from .schema import COLUMN_INFO, COLUMNS

__all__ = ["Recorder"]

# ----------------------------------------------------------------------------- process-wide hooks

_live: "weakref.WeakSet[Recorder]" = weakref.WeakSet()
_busy = 0  # > 0 while a recorder is writing: a signal then waits for the write to finish
_deferred: BaseException | None = None
_hooks_installed = False


def _raise_for(signum: int) -> BaseException:
    if signum == signal.SIGINT:
        return KeyboardInterrupt()
    return SystemExit(128 + signum)


def _on_signal(signum, frame) -> None:
    global _deferred
    for rec in list(_live):
        rec._interrupted = signal.Signals(signum).name
    if _busy:
        _deferred = _raise_for(signum)  # raised by the flush when it has written its bytes
        return
    raise _raise_for(signum)


def _close_all_at_exit() -> None:
    for rec in list(_live):
        try:
            rec.close(ended=rec._interrupted or "exit")
        except Exception:  # pragma: no cover - nothing sensible to do at interpreter exit
            pass


def _install_hooks() -> None:
    global _hooks_installed
    if _hooks_installed:
        return
    _hooks_installed = True
    atexit.register(_close_all_at_exit)
    if threading.current_thread() is not threading.main_thread():
        return  # signal handlers can only be set from the main thread; atexit still covers exits
    if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
        signal.signal(signal.SIGTERM, _on_signal)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_signal)


# ----------------------------------------------------------------------------- the recorder


class Recorder:
    """Append per-frame rows to a CSV of schema :data:`~viewer.recording.schema.COLUMNS`.

    Parameters
    ----------
    path : the CSV to write (its directory must exist and be writable; the file is replaced)
    meta : the metadata dict (:func:`~viewer.recording.meta.build_meta`), written beside the CSV as
        ``NAME.meta.json`` now and again on :meth:`close` with the row count; None writes a minimal one
    flush_rows : rows buffered before a write
    flush_seconds : the longest a row waits in memory
    """

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
        self.closed = False
        self._rows: list[tuple] = []
        self._count = 0
        self._interrupted: str | None = None
        self._last_flush = time.perf_counter()
        self._fmts = tuple(_formatter(c.kind, c.fmt) for c in COLUMN_INFO)
        self._record_at = COLUMNS.index("record_ms")
        self._fd = -1

        if self.path.is_dir():
            raise UserError(f"{self.path}: is a directory, expected a CSV file name")
        parent = self.path.parent
        if not parent.is_dir():
            raise UserError(f"{self.path}: directory {parent} does not exist")
        try:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        except OSError as exc:
            raise UserError(f"{self.path}: cannot write: {exc.strerror or exc}") from None
        try:
            self._write_all(_csv_line(COLUMNS).encode())
            self.meta.setdefault("frames", 0)
            self.meta["complete"] = False
            self.meta_path = write_meta(self.path, self.meta)
        except BaseException:
            os.close(self._fd)
            self._fd = -1
            try:
                self.path.unlink()
            except OSError:
                pass
            raise
        _install_hooks()
        _live.add(self)

    # -------------------------------------------------------------------------- hot path
    def append(self, stats: Any = None, /, **values: Any) -> None:
        """Buffer one frame's row.

        ``stats`` is a ``FrameStats`` (attributes named like the columns) or a mapping; ``values``
        override or supply columns. ``record_ms`` is filled in by the recorder; ``frame`` defaults
        to the row number. Writes happen here only every ``flush_rows`` rows / ``flush_seconds``.
        """
        t0 = time.perf_counter()
        if self.closed:
            raise ValueError(f"{self.path}: recorder is closed")
        if len(self._rows) >= self.flush_rows or (
            self._rows and t0 - self._last_flush >= self.flush_seconds
        ):
            self._flush_rows()
        row = self._row(stats, values)
        row[self._record_at] = (time.perf_counter() - t0) * 1e3
        self._rows.append(tuple(row))
        self._count += 1

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
        if not self.closed:
            self._flush_rows()

    def _flush_rows(self) -> None:
        global _busy, _deferred
        _busy += 1
        try:
            if self._rows:
                buf = io.StringIO()
                w = csv.writer(buf, lineterminator="\n")
                fmts = self._fmts
                w.writerows([[f(v) for f, v in zip(fmts, r)] for r in self._rows])
                self._write_all(buf.getvalue().encode())
                self.rows_written += len(self._rows)
                self._rows.clear()
            self._last_flush = time.perf_counter()
        finally:
            _busy -= 1
        if _deferred is not None and not _busy:
            exc, _deferred = _deferred, None
            raise exc

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            n = os.write(self._fd, view)
            view = view[n:]

    def close(self, ended: str = "closed") -> None:
        """Write every buffered row, close the file and rewrite the metadata with the row count.

        ``ended`` is stored in the metadata (``"closed"``, ``"SIGTERM"``, ``"exit"``, ...). Safe to
        call twice.
        """
        if self.closed:
            return
        global _deferred
        try:
            try:
                self._flush_rows()
            except (SystemExit, KeyboardInterrupt) as exc:
                # a signal arrived during this last flush: the rows are written, finish closing
                # and let the caller see it
                _deferred = exc
        finally:
            self.closed = True
            _live.discard(self)
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
            self.meta["frames"] = self.rows_written
            self.meta["complete"] = self._interrupted is None and ended == "closed"
            self.meta["ended"] = self._interrupted or ended
            try:
                write_meta(self.path, self.meta)
            except UserError:
                pass  # the CSV is complete; a metadata failure must not hide the run's own error
        if _deferred is not None and not _busy:
            exc, _deferred = _deferred, None
            raise exc

    def __enter__(self) -> "Recorder":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close(ended="closed" if exc_type is None else exc_type.__name__)

    def __len__(self) -> int:
        """Rows appended so far (written or buffered)."""
        return self._count

    def __repr__(self) -> str:
        return f"<Recorder {str(self.path)!r} rows={self._count} written={self.rows_written}>"


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
