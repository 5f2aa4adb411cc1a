"""One switch for numba's on-disk cache: ``VIEWER_NUMBA_CACHE=0`` turns it off (for debugging a
kernel, or a read-only install). Every kernel module imports ``njit`` from here."""

from __future__ import annotations

import functools
import os

import numba

CACHE = os.environ.get("VIEWER_NUMBA_CACHE", "1") not in ("0", "false", "no", "")

njit = functools.partial(numba.njit, cache=CACHE, nogil=True)

# For small kernels that allocate nothing (they get every buffer from the caller): compiled without
# numba's reference counting. Every array passed from one numba function to another otherwise costs
# an atomic incref/decref pair (measured here: ~100 ns per array per call, 4x the cost of a small
# helper), which dominates hot loops that call helpers taking arrays.
njit_noref = functools.partial(numba.njit, cache=CACHE, nogil=True, _nrt=False)

__all__ = ["CACHE", "njit", "njit_noref"]
