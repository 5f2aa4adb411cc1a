"""Numbers as the scene commands print them: every figure of a line with the same significant digits, in
plain notation where that is readable (``5000``, not ``5e+03``), so both ends of a range compare at a glance
(``262.6..262.6``, never ``263..262.6``)."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["num", "span", "short_count"]

#: significant digits of every figure a scene line prints
DIGITS = 4


def num(v: float, digits: int = DIGITS) -> str:
    """``v`` to ``digits`` significant digits: plain notation from 1e-4 up to 1e9 (trailing zeros of the
    fraction dropped: ``0.5``, ``262.6``, ``5000``, ``1234568``), scientific outside it (``1.268e+30``)."""
    v = float(v)
    if v == 0 or not math.isfinite(v):
        return f"{v:g}"
    r = float(f"{v:.{digits}g}")  # rounded to the digits first: 9999.7 -> 1e4, whose exponent is then 4
    e = math.floor(math.log10(abs(r)))
    if not -4 <= e < 9:
        return f"{r:.{digits - 1}e}"
    text = f"{r:.{max(digits - 1 - e, 0)}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def span(values: np.ndarray, digits: int = DIGITS) -> str:
    """``MIN..MAX (median MED)`` of ``values`` (non-empty), each figure by :func:`num`; one figure
    (``500 (all)``) when they are all equal as printed."""
    lo, hi, med = (num(x, digits) for x in (np.min(values), np.max(values), np.median(values)))
    if lo == hi:
        return f"{lo} (all)"
    return f"{lo}..{hi} (median {med})"


def short_count(n: int) -> str:
    """A count as bundled scene names spell it: ``1m``, ``10m``, ``100k``, else the digits (``1500``)."""
    for div, suffix in ((1_000_000, "m"), (1_000, "k")):
        if n >= div and n % div == 0:
            return f"{n // div}{suffix}"
    return str(n)
