"""Large index arrays on transparent huge pages.

A query reads a few cache lines spread over arrays of many megabytes (node rows, object rows, ids). On
4 KiB pages each of those lines is also a TLB miss once anything else has run (the bench's brute
force and scan turns flush the TLB and the caches between turns), and on this machine's virtual
machine a TLB miss is a two-dimensional page walk. numpy gets huge pages only for some allocations
(``np.empty`` of 4 MiB and more, when glibc serves it by ``mmap``; never ``np.zeros``), so the arrays
are allocated here instead: an anonymous private mapping advised ``MADV_HUGEPAGE`` (the kernel's
``madvise`` mode), its start aligned to 2 MiB. Measured at 1e6 in the bench's conditions, the same
index with its arrays copied to 4 KiB pages against huge pages, in one process: the octree's query on
uniform 5.26 -> 4.89 us and clustered 5.64 -> 5.15; the hash grid's on uniform 4.68 -> 3.28; on the
diagonal, both within noise. The octree, the hash grid and the scan (whose read floor then reads huge
pages too) allocate their large arrays here, and every index's grown arrays
(:func:`viewer.index._contract.grown`) come from here; the other indexes' builds keep numpy's.

Elsewhere (no ``MADV_HUGEPAGE``, or an array below 2 MiB) these are plain ``np.zeros`` / ``np.full``.
"""

from __future__ import annotations

import mmap

import numpy as np

__all__ = ["HUGE_PAGE", "zeros", "full"]

HUGE_PAGE = 2 << 20


def zeros(shape, dtype=np.float64) -> np.ndarray:
    """A zero-filled C-contiguous array of ``shape`` and ``dtype``; from 2 MiB up, in its own mapping
    advised for huge pages (the array keeps the mapping alive)."""
    dtype = np.dtype(dtype)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if nbytes < HUGE_PAGE or not hasattr(mmap, "MADV_HUGEPAGE"):
        return np.zeros(shape, dtype=dtype)
    try:
        buf = mmap.mmap(-1, nbytes + HUGE_PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    except OSError as exc:  # as numpy says it
        raise MemoryError(f"cannot allocate {nbytes} bytes for an array of shape {shape}: {exc}") from None
    try:
        buf.madvise(mmap.MADV_HUGEPAGE)
    except OSError:  # huge pages off or unsupported: the mapping still serves, on small pages
        pass
    raw = np.frombuffer(buf, dtype=np.uint8)
    start = (-raw.ctypes.data) % HUGE_PAGE
    return raw[start : start + nbytes].view(dtype).reshape(shape)


def full(shape, fill, dtype=np.float64) -> np.ndarray:
    """As :func:`zeros`, every element ``fill``."""
    a = zeros(shape, dtype)
    if fill != 0:
        a.fill(fill)
    return a
