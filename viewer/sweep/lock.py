"""One sweep at a time in an output directory: an exclusive ``flock`` on ``OUT/sweep.lock`` for the whole run.

Two sweeps writing one directory lose rows: the second rewrites ``sweep.csv`` (a new file renamed over the old)
while the first keeps appending to the old, unlinked one, and two identical sweeps both measure every task.
:func:`locked` takes the lock without waiting; a second sweep is refused at once, naming the directory and the
running sweep's pid (written into the lock file while the lock is held). The kernel drops the lock when the
holder exits, however it exits, so a killed sweep never leaves a stale lock behind; the file itself is never
removed (removing a lock file lets two processes lock two different files).
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import time
from contextlib import contextmanager
from pathlib import Path

from viewer.errors import UserError

__all__ = ["LOCK_NAME", "locked"]

LOCK_NAME = "sweep.lock"


@contextmanager
def locked(out: Path, flag: str = "--out"):
    """Hold the exclusive lock of the sweep directory ``out`` (created if needed) while the block runs.
    :class:`UserError` naming ``flag``, the directory and the running sweep's pid when another sweep holds it,
    or when the lock file cannot be made (an unwritable directory, a symbolic link in its place)."""
    out = Path(out)
    path = out / LOCK_NAME
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UserError(f"{flag} {out}: {path} is a symbolic link; the sweep's lock file must be a regular "
                            "file in the directory: remove the link") from None
        raise UserError(f"cannot write to {flag} {out}: {exc.strerror or exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UserError(f"{flag} {out}: {path} is not a regular file; remove it")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise UserError(f"{flag} {out}: cannot lock {path}: {exc.strerror or exc}") from None
            raise UserError(f"{flag} {out}: another sweep is running into this directory ({_holder(fd)}); "
                            f"wait for it to finish, or choose another {flag}") from None
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        except OSError as exc:  # a full disk
            raise UserError(f"cannot write to {flag} {out}: {exc.strerror or exc}") from None
        try:
            yield path
        finally:
            try:
                os.ftruncate(fd, 0)  # no pid left behind once this sweep is over
            except OSError:
                pass
    finally:
        os.close(fd)  # releases the lock


def _holder(fd: int) -> str:
    """``pid N`` of the sweep holding the lock (it writes its pid right after taking the lock: wait briefly for
    it), or ``pid unknown``."""
    for _ in range(20):
        try:
            text = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
        except OSError:
            break
        if text.isdigit():
            return f"pid {int(text)}"
        time.sleep(0.05)
    return "pid unknown"
