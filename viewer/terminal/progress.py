"""Progress bars with an ETA on stderr, drawn by `rich <https://rich.readthedocs.io>`_: a live bar on a
terminal, one plain line every 10% otherwise (a CI log, a pipe: no control codes, no colour).

The wrapper is thin on purpose: it only decides *when* to hand a count to rich. A frame loop calls
:meth:`Progress.update` every frame; handing every call to rich would put its lock and its speed samples in
every frame, so the wrapper compares the clock and passes a count on at most every ``interval`` seconds and
draws then, in the caller's thread (rich's own refresh thread is off: a redraw never lands inside a timed
frame). A call between draws then costs about what the hand-made class this replaced cost, and the draws, at
most four a second, a small share of a core (the measurements: the bench results README, "Figures that used to
live in code comments").

rich is imported when the first bar is made, not when this module is.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress", "ProgressCallback"]


def _columns(unit: str):
    """The bar's columns: what, the bar (whatever width is left, on a narrow terminal too), percent, done/total,
    the unit, the rate, the time left."""
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn

    return (TextColumn("{task.description}"), BarColumn(bar_width=None), TextColumn("{task.percentage:5.1f}%"),
            MofNCompleteColumn(), TextColumn(unit), TextColumn("{task.fields[rate]}"), TextColumn("ETA"),
            TimeRemainingColumn())


class Progress:
    """``Progress(total, "record")``, then ``update(done)`` as work completes, ``close()`` at the end.

    total : the number of units of the whole job; label : what is done (``record 2 indexes``); unit : the
    units' name (``frames``, ``objects``, ``tasks``); stream : where it is drawn (default ``sys.stderr``);
    interval : the shortest time between two draws on a terminal, seconds; enabled : False draws nothing
    (``--quiet``). On a terminal rich redraws one line in place; otherwise a line is printed each time
    another tenth of ``total`` is done (nothing in between).
    """

    def __init__(self, total: int, label: str = "", *, unit: str = "frames", stream: TextIO | None = None,
                 interval: float = 0.25, enabled: bool = True) -> None:
        self.total = max(1, int(total))
        self.label = label
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.enabled = enabled
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.start = time.perf_counter()
        self.done = 0
        self._next = 0.0  # the clock reading from which the next draw is due (terminal)
        self._next_decile = 1  # the next tenth of total that prints a line (no terminal)
        self._bar = None
        if enabled:
            from rich.console import Console
            from rich.progress import Progress as RichProgress

            console = Console(file=self.stream, force_terminal=self.tty, no_color=not self.tty,
                              highlight=False, width=None if self.tty else 120)
            self._bar = RichProgress(*_columns(unit), console=console, auto_refresh=False,
                                     redirect_stdout=False, redirect_stderr=self.tty)
            self._task = self._bar.add_task(label, total=self.total, rate="?/s")
            if self.tty:
                self._bar.start()

    def update(self, done: int) -> None:
        """``done`` units of ``total`` are finished (a count, not an increment); draws when due."""
        self.done = done
        if self._bar is None:
            return
        if self.tty:
            now = time.perf_counter()
            if now >= self._next or done >= self.total:
                self._next = now + self.interval
                self._draw(now, refresh=True)
        elif done * 10 >= self._next_decile * self.total:
            while done * 10 >= self._next_decile * self.total:
                self._next_decile += 1
            self._draw(time.perf_counter(), refresh=False)
            self._bar.console.print(self._bar.get_renderable())

    def _draw(self, now: float, refresh: bool) -> None:
        el = now - self.start
        rate = self.done / el if el > 0.05 else 0.0  # no rate from a moment's work
        self._bar.update(self._task, completed=min(self.done, self.total),
                         rate=f"{rate:.1f}/s" if rate > 0 else "?/s", refresh=refresh)

    def close(self) -> None:
        """End the bar: on a terminal its last state stays on its own line."""
        if self._bar is not None and self.tty:
            self._draw(time.perf_counter(), refresh=True)
            self._bar.stop()
        self._bar = None


class ProgressCallback:
    """A ``progress(done, n)`` callable, as :func:`viewer.scenes.load_scene` and the generators take one, that
    draws a :class:`Progress` (``label``, ``unit``) made on the first call with ``n >= min_total`` (smaller
    jobs draw nothing) and closed when ``done`` reaches ``n`` or on :meth:`close`."""

    def __init__(self, label: str, *, unit: str = "objects", enabled: bool = True, min_total: int = 0) -> None:
        self.label = label
        self.unit = unit
        self.enabled = enabled
        self.min_total = min_total
        self._bar: Progress | None = None

    def __call__(self, done: int, n: int) -> None:
        if not self.enabled or n < self.min_total:
            return
        if self._bar is None:
            self._bar = Progress(n, self.label, unit=self.unit)
        self._bar.update(done)
        if done >= n:
            self.close()

    def close(self) -> None:
        """Close the bar (if one was drawn); a later call starts a new one."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
