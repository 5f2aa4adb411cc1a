"""Large index arrays on huge pages (viewer.index._pages): zero-filled, writable, C-contiguous, 2 MiB aligned
from 2 MiB up (on Linux), plain numpy below; the mapping lives as long as any view of it."""

from __future__ import annotations

import gc
import mmap
import sys

import numpy as np
import pytest

from viewer.index import _pages


def test_small_arrays_are_plain_numpy():
    a = _pages.zeros((100, 4))
    assert a.base is None and a.shape == (100, 4) and a.dtype == np.float64 and not a.any()
    b = _pages.full(10, -1, np.int32)
    assert b.dtype == np.int32 and (b == -1).all()


@pytest.mark.skipif(not (sys.platform.startswith("linux") and hasattr(mmap, "MADV_HUGEPAGE")),
                    reason="huge-page advice is Linux's")
def test_large_arrays_are_aligned_zeroed_and_outlive_their_name():
    a = _pages.full((300_000, 2), -1, np.int32)  # 2.4 MB
    assert a.shape == (300_000, 2) and a.dtype == np.int32 and a.flags.c_contiguous and a.flags.writeable
    assert a.ctypes.data % _pages.HUGE_PAGE == 0
    assert (a == -1).all()
    z = _pages.zeros((1 << 19, 4), np.float64)  # 16 MiB
    assert z.ctypes.data % _pages.HUGE_PAGE == 0 and not z.any()
    v = z[10:20, 1]  # a view keeps the mapping alive after the array's own name is gone
    del z
    gc.collect()
    v[:] = 3.0
    assert (v == 3.0).all()


@pytest.mark.skipif(not (sys.platform.startswith("linux") and hasattr(mmap, "MADV_HUGEPAGE")),
                    reason="huge-page advice is Linux's")
def test_an_array_with_a_reserve_extends_in_place():
    """extend lengthens an array made with a reserve without copying: the same memory, its rows kept, the
    new ones filled; beyond the reserve (give or take the 2 MiB of the alignment), or for an array
    without a mapping, it says None."""
    a = _pages.full((100_000, 2), 7, np.int32, reserve=50_000)  # 800 KB + 400 KB reserved
    small = _pages.zeros((100, 4), reserve=100)  # 6.4 KB in all
    assert small.base is None and _pages.extend(small, 150) is None  # plain numpy: no room
    b = _pages.full((300_000, 2), -1, np.int32, reserve=100_000)
    b[:5] = 3
    g = _pages.extend(b, 350_000, -1)
    assert g.shape == (350_000, 2) and g.ctypes.data == b.ctypes.data
    assert (g[:5] == 3).all() and (g[5:] == -1).all()
    assert _pages.extend(g, 400_000) is not None  # the reserve (and the alignment's slack, under 2 MiB)
    assert _pages.extend(g, 400_000 + _pages.HUGE_PAGE // 8) is None
    assert a.shape == (100_000, 2)
