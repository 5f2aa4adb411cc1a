"""One switch for numba's on-disk cache: ``VIEWER_NUMBA_CACHE=0`` turns it off (for debugging a
kernel, or a read-only install). Every kernel module imports ``njit`` from here."""

from __future__ import annotations

import functools
import os

import numba

CACHE = os.environ.get("VIEWER_NUMBA_CACHE", "1") not in ("0", "false", "no", "")

njit = functools.partial(numba.njit, cache=CACHE, nogil=True)

__all__ = ["CACHE", "njit"]
