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


def guarded(fn: Callable[[], None], seconds: float = GUARD_S) -> None:
    """Run ``fn()`` in a forked child (which inherits the compiled kernels) with RuntimeWarnings and numpy's
    overflow, invalid and divide as errors; raise what it raised (the exception itself when it pickles, else an
    ``AssertionError`` with its traceback), or ``AssertionError`` if it ran longer than ``seconds``."""
    if not hasattr(os, "fork"):
        _strict(fn)
        return
    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: run, report, and leave without running the parent's exit handlers
        os.close(rd)
        msg = b""
        try:
            _strict(fn)
        except BaseException as exc:
            try:
                msg = pickle.dumps((exc, traceback.format_exc()))
            except Exception:
                msg = pickle.dumps((None, traceback.format_exc()))
        try:
            view = memoryview(msg)
            while view:  # the parent reads while waiting, so a long message cannot block
                view = view[os.write(wr, view):]
        finally:
            os._exit(0)
    os.close(wr)
    chunks = []
    deadline = time.monotonic() + seconds
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([rd], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                raise AssertionError(f"hung: still running after {seconds:.0f} s")
            b = os.read(rd, 1 << 16)
            if not b:
                break
            chunks.append(b)
    finally:
        os.close(rd)
        _, status = os.waitpid(pid, 0)
    if chunks:
        exc, text = pickle.loads(b"".join(chunks))
        if isinstance(exc, Exception):
            raise exc
        raise AssertionError(text)
    if status != 0:
        raise AssertionError(f"the case's process died (status {status})")
