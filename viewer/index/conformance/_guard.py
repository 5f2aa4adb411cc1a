"""A case run in a forked child under strict numerics and a time guard: an index's kernel cannot be interrupted
in-process, so a hang must kill a child, not stall the kit. Where the platform cannot fork, the case runs here
under the same numerics, without the guard."""

from __future__ import annotations

import os
import pickle
import select
import signal
import time
import traceback
import warnings
from collections.abc import Callable

import numpy as np

#: seconds a case may run: far above any case of the kit (well under a second each); only a hang reaches it
GUARD_S = 20.0


def _strict(fn: Callable[[], None]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
            fn()


#: in a forked child of :func:`guarded`: the pipe's write end (None in the parent)
_PIPE: int | None = None


def _send(kind: bytes, payload: bytes) -> None:
    msg = memoryview(kind + len(payload).to_bytes(8, "little") + payload)
    while msg:  # the parent reads while waiting, so a long message cannot block
        msg = msg[os.write(_PIPE, msg):]


def beat(label: str) -> None:
    """Inside a case run by :func:`guarded`: the case is alive and starts ``label`` (one of many steps, e.g. a
    hypothesis example): the guard's clock starts again, and a hang is reported at ``label``. Nothing
    elsewhere."""
    if _PIPE is not None:
        _send(b"B", label.encode("utf-8", "replace"))


def guarded(fn: Callable[[], None], seconds: float = GUARD_S) -> None:
    """Run ``fn()`` in a forked child (which inherits the compiled kernels) with RuntimeWarnings and numpy's
    overflow, invalid and divide as errors; raise what it raised (the exception itself when it pickles, else an
    ``AssertionError`` with its traceback), or ``AssertionError`` if it ran longer than ``seconds`` (since it
    started, or since its last :func:`beat`: a case of many steps forks once and guards each step)."""
    global _PIPE
    if not hasattr(os, "fork"):
        _strict(fn)
        return
    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: run, report, and leave without running the parent's exit handlers
        os.close(rd)
        _PIPE = wr
        msg = b""
        try:
            _strict(fn)
        except BaseException as exc:
            try:
                msg = pickle.dumps((exc, traceback.format_exc()))
            except Exception:
                msg = pickle.dumps((None, traceback.format_exc()))
        try:
            _send(b"R", msg)
        finally:
            os._exit(0)
    os.close(wr)
    buf, result, at = b"", None, ""
    deadline = time.monotonic() + seconds
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([rd], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                raise AssertionError(f"hung: still running after {seconds:.0f} s" + (f", at {at}" if at else ""))
            b = os.read(rd, 1 << 16)
            if not b:
                break
            buf += b
            while len(buf) >= 9 and len(buf) >= 9 + int.from_bytes(buf[1:9], "little"):
                end = 9 + int.from_bytes(buf[1:9], "little")
                kind, payload, buf = buf[:1], buf[9:end], buf[end:]
                if kind == b"B":
                    at, deadline = payload.decode("utf-8", "replace"), time.monotonic() + seconds
                else:
                    result = payload
    finally:
        os.close(rd)
        _, status = os.waitpid(pid, 0)
    if result:
        exc, text = pickle.loads(result)
        if isinstance(exc, Exception):
            raise exc
        raise AssertionError(text)
    if result is None or status != 0:
        raise AssertionError(f"the case's process died (status {status})" + (f", at {at}" if at else ""))
