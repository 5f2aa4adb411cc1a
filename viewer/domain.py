"""The numeric domain every index promises to answer exactly, and every entry point enforces.

Coordinates (object centres and query points) and view radii are finite float64 values with
``|coordinate| <= COORD_LIMIT`` and ``0 <= radius <= RADIUS_LIMIT``. Inside it every squared distance of
the contract's predicate, ``(dx*dx + dy*dy) + dz*dz <= r*r``, is finite (at most about 2**204), so that
predicate is well defined; an index's float32 boxes (max ~2**128) keep room for their margins; and subnormal
values are inside the domain (a radius of 1e-300 squares to 0: only an object exactly at the point holds it).
Outside it: ``ValueError`` naming the value, before anything changes. Scenes loaded from files refuse such
values too, naming the file and field. Pure: numpy only.
"""

import numpy as np

COORD_LIMIT = 2.0**100  # ~1.27e30 world units
RADIUS_LIMIT = 2.0**100
#: a camera angle (yaw, pitch) given by a user, in degrees, at most this far from 0 (float64 still resolves
#: 1e-9 of a degree there; far beyond it an angle is all rounding)
ANGLE_LIMIT = 1e6

__all__ = ["ANGLE_LIMIT", "COORD_LIMIT", "RADIUS_LIMIT", "first_outside"]


def first_outside(values: np.ndarray, limit: float, nonnegative: bool = False) -> int:
    """Index (along axis 0) of the first row of ``values`` holding a value outside the domain, or -1.

    values : (N,) or (N, k) float64; limit : ``COORD_LIMIT`` or ``RADIUS_LIMIT``; nonnegative : radii.
    NaN and infinities are outside.
    """
    v = np.asarray(values, dtype=np.float64)
    lo = 0.0 if nonnegative else -limit
    ok = (v >= lo) & (v <= limit)  # False for NaN
    if ok.ndim > 1:
        ok = ok.all(axis=tuple(range(1, ok.ndim)))
    bad = np.flatnonzero(~ok)
    return int(bad[0]) if bad.size else -1
