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
