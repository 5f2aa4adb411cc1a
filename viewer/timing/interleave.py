"""The order in which several indexes take their turns when they are measured interleaved (``viewer
bench``, ``viewer record``). In one fixed order (or a rotation of it) each index always follows the same
other one and pays for what that one did to the caches (brute force's passes over every object flush them),
which skews the comparison between the indexes. A balanced Latin square fixes that."""

from __future__ import annotations

__all__ = ["balanced_orders"]


def balanced_orders(k: int) -> list[list[int]]:
    """Orders of ``0..k-1`` (Williams' balanced Latin square: ``k`` rows for even ``k``, ``2k`` for odd) in
    which each item stands directly before each other item equally often, and in each place equally often."""
    if k <= 1:
        return [list(range(k))]
    first = [0]
    lo, hi = 1, k - 1
    while lo <= hi:
        first.append(lo)
        if lo != hi:
            first.append(hi)
        lo, hi = lo + 1, hi - 1
    rows = [[(j + r) % k for j in first] for r in range(k)]
    if k % 2:
        rows += [row[::-1] for row in rows]
    return rows
