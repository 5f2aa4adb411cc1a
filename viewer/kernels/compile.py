"""Say when numba compiles: on a first run (an empty kernel cache) or after a kernel module changed.

Compiling the kernels a command runs takes tens of seconds on a first run and nothing later (numba's
on-disk cache, :mod:`viewer.kernels.jit`). A command that wants the user told wraps its warm-up in
:func:`reporting`; warm-ups name what they compile with :func:`compile_group` (an index's name,
``frame``). Nothing is printed unless numba really compiles (a cache miss: numba's ``numba:compile``
event, which a kernel loaded from the cache never sends), so a warm run stays quiet; a first run prints,
for example::

    compiling kernels (first run only; cached for later runs) ...
      octree: 7 kernels, 21.3 s
      frame: 4 kernels, 6.0 s
    compiled 11 kernels in 27.3 s

On a terminal each group's line is redrawn in place as its kernels compile (the kernel being compiled,
the time so far); otherwise the line starts when the group's first kernel starts compiling and ends
with its count and time.

numba is imported lazily, inside the functions: this module is not one of the kernel modules whose
bytes key the kernel cache (:func:`viewer.kernels.jit.kernel_digest`).
"""

from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager
from typing import Iterator, TextIO

__all__ = ["HEADER", "compile_group", "compiled_kernels", "reporting", "say"]

#: the line printed before the first kernel compiles
HEADER = "compiling kernels (first run only; cached for later runs) ..."

_local = threading.local()  # .groups: the thread's stack of group labels; .depth: nested compile events
_lock = threading.RLock()
_report: "_Report | None" = None
_listener = None
_counted = [0]  # kernels compiled in this process (top-level compile events), reported or not


def _label_of(module: str) -> str | None:
    """A group label from a kernel's module: ``viewer.index._octree_kernels`` -> ``octree``, every module
    of ``viewer.frame`` -> ``frame``; None for shared helpers (``_contract_kernels``, ``_morton``, ...)."""
    parts = module.split(".")
    if len(parts) >= 2 and parts[0] == "viewer" and parts[1] == "frame":
        return "frame"
    last = parts[-1]
    if last.endswith("_kernels") and last not in ("_contract_kernels",):
        return last.strip("_").removesuffix("_kernels").strip("_") or None
    return None


class _Report:
    """The lines on ``stream``: the header, one line per group, a total."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.header = False
        self.open: str | None = None  # the group whose line is being written
        self.count = 0  # kernels of the open line
        self.started = 0.0  # when the open line's first kernel started
        self.spent = 0.0  # seconds compiling in the open line's group
        self.total = 0
        self.total_s = 0.0
        self.first = 0.0  # when the first kernel started

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed pipe must not fail a warm-up
            pass

    def _line(self, now: float, current: str | None) -> str:
        what = f", compiling {current}" if current else ""
        return f"  {self.open}: {self.count} kernel{'s' if self.count != 1 else ''}, {now - self.started:.1f} s{what}"

    def start(self, label: str, kernel: str) -> None:
        now = time.perf_counter()
        if not self.header:
            self.header = True
            self.first = now
            self._write(HEADER + "\n")
        if label != self.open:
            self.close_line()
            self.open, self.count, self.started, self.spent = label, 0, now, 0.0
            if not self.tty:
                self._write(f"  {label} ...")
        if self.tty:
            self._write("\r" + self._line(now, kernel) + "\x1b[K")

    def end(self, seconds: float) -> None:
        self.count += 1
        self.spent += seconds
        self.total += 1
        self.total_s += seconds
        if self.tty:
            self._write("\r" + self._line(time.perf_counter(), None) + "\x1b[K")

    def interject(self, text: str) -> None:
        """``text`` on a line of its own; an open group's line is taken up again below it."""
        if self.open is None:
            self._write(text + "\n")
        elif self.tty:
            self._write("\r" + text + "\x1b[K\n" + self._line(time.perf_counter(), None))
        else:
            self._write("\n" + text + "\n" + f"  {self.open} ...")

    def close_line(self) -> None:
        """End the open group's line (its count and time)."""
        if self.open is None:
            return
        now = time.perf_counter()
        if self.tty:
            self._write("\r" + self._line(now, None) + "\x1b[K\n")
        else:
            self._write(f" {self.count} kernel{'s' if self.count != 1 else ''}, {now - self.started:.1f} s\n")
        self.open = None

    def close(self) -> None:
        """End the open line and, when anything compiled, say how much."""
        self.close_line()
        if self.header:
            self._write(f"compiled {self.total} kernel{'s' if self.total != 1 else ''} in "
                        f"{time.perf_counter() - self.first:.1f} s; later runs load them from the cache\n")


def _install() -> None:
    """Register, once per process, the listener of numba's compile events."""
    global _listener
    if _listener is not None:
        return
    from numba.core import event

    class _Listener(event.Listener):
        def on_start(self, ev) -> None:
            depth = getattr(_local, "depth", 0)
            _local.depth = depth + 1
            if depth:
                return  # a callee compiled inside a kernel: part of that kernel's time
            _local.t0 = time.perf_counter()
            with _lock:
                rep = _report
                if rep is None:
                    return
                fn = getattr(ev.data.get("dispatcher"), "py_func", None)
                name = getattr(fn, "__name__", "?")
                groups = getattr(_local, "groups", None)
                label = groups[-1] if groups else _label_of(getattr(fn, "__module__", "") or "")
                rep.start(label or rep.open or "index", name)

        def on_end(self, ev) -> None:
            _local.depth = depth = getattr(_local, "depth", 1) - 1
            if depth:
                return
            _counted[0] += 1
            with _lock:
                if _report is not None and _report.open is not None:
                    _report.end(time.perf_counter() - getattr(_local, "t0", time.perf_counter()))

    _listener = _Listener()
    event.register("numba:compile", _listener)


def say(text: str) -> None:
    """``text`` on a line of its own: on the stream of the :func:`reporting` block in force, between its
    lines (a group's line being written is taken up again below it), else on stderr. For what the user must
    hear about compiling whatever the report shows (a damaged kernel cache, :mod:`.damaged_cache`)."""
    with _lock:
        if _report is not None:
            _report.interject(text)
            return
    try:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):  # no stderr, or a closed one: nothing to tell
        pass


def compiled_kernels() -> int:
    """Kernels numba compiled (not loaded from the cache) in this process since the first
    :func:`reporting` or :func:`compile_group` (callees compiled inside a kernel not counted apart)."""
    return _counted[0]


@contextmanager
def compile_group(label: str) -> Iterator[None]:
    """Kernels compiled on this thread inside the block are reported under ``label`` (an index's name,
    ``frame``); the group's line ends with the block."""
    _install()
    groups = getattr(_local, "groups", None)
    if groups is None:
        groups = _local.groups = []
    groups.append(label)
    try:
        yield
    finally:
        groups.pop()
        if label not in groups:
            with _lock:
                if _report is not None and _report.open == label:
                    _report.close_line()


@contextmanager
def reporting(stream: TextIO | None = None, *, enabled: bool = True) -> Iterator[None]:
    """Inside the block, every kernel numba compiles is reported on ``stream`` (default stderr): the
    :data:`HEADER` before the first, a line per group, a total at the end. Silent when nothing compiles
    (a warm cache) or when not ``enabled``."""
    global _report
    if not enabled:
        yield
        return
    _install()
    with _lock:
        outer, _report = _report, _Report(stream if stream is not None else sys.stderr)
    try:
        yield
    finally:
        with _lock:
            _report.close()
            _report = outer
