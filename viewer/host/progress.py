"""A progress bar with an ETA on stderr: redrawn in place on a terminal, a line every 10% otherwise."""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress"]


def _hms(seconds: float) -> str:
    s = int(round(max(0.0, seconds)))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


class Progress:
    """``Progress(total, "record")``, then ``update(done)`` as work completes, ``close()`` at the end.

    Redraws at most every ``interval`` seconds, so calling ``update`` every frame costs ~1 us.
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
        self._next = 0.0
        self._next_decile = 1
        self.done = 0

    def update(self, done: int) -> None:
        """``done`` units of ``total`` are finished (a count, not an increment); redraws when due."""
        self.done = done
        if not self.enabled:
            return
        now = time.perf_counter()
        if self.tty:
            if now >= self._next or done >= self.total:
                self._next = now + self.interval
                self.stream.write("\r" + self.line(now))
                self.stream.flush()
        elif done * 10 >= self._next_decile * self.total:
            while done * 10 >= self._next_decile * self.total:
                self._next_decile += 1
            self.stream.write(self.line(now) + "\n")
            self.stream.flush()

    def line(self, now: float | None = None) -> str:
        """The bar as one line: percent, done/total, rate per second, elapsed and ETA (h:mm:ss). ``now``: a
        :func:`time.perf_counter` reading (default: the current one)."""
        now = time.perf_counter() if now is None else now
        el = now - self.start
        frac = min(1.0, self.done / self.total)
        width = 30
        fill = int(frac * width)
        rate = self.done / el if el > 0.05 else 0.0  # no rate from a moment's work
        eta = (self.total - self.done) / rate if rate > 0 else (0.0 if self.done >= self.total else float("nan"))
        eta_s = _hms(eta) if eta == eta else "?"
        rate_s = f"{rate:8.1f}/s" if rate > 0 else "       ?/s"
        return (f"{self.label} [{'#' * fill}{'.' * (width - fill)}] {frac * 100:5.1f}%  "
                f"{self.done}/{self.total} {self.unit}  {rate_s}  elapsed {_hms(el)}  ETA {eta_s}")

    def close(self) -> None:
        """End the bar's line on a terminal (nothing to do otherwise)."""
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()
