"""Large index arrays on transparent huge pages.

A query reads a few cache lines spread over arrays of many megabytes (node rows, object rows, ids). On
4 KiB pages each of those lines is also a TLB miss once anything else has run (the bench's brute
force and scan turns flush the TLB and the caches between turns), and on a virtual machine (this
repository's are) a TLB miss is a two-dimensional page walk. numpy gets huge pages only for some allocations
(``np.empty`` of 4 MiB and more, when glibc serves it by ``mmap``; never ``np.zeros``), so the arrays
are allocated here instead: an anonymous private mapping advised ``MADV_HUGEPAGE`` (the kernel's
``madvise`` mode), its start aligned to 2 MiB. At 1e6 in the bench's conditions, the same index on huge
pages against its arrays copied to 4 KiB pages: the octree's and the hash grid's queries faster on uniform
and clustered worlds, the hash grid's most; on the diagonal, no difference beyond noise (the figures: the
bench results README, "Figures that used to live in code comments"). The octree, the hash grid and the scan
(whose read floor then reads huge pages too) allocate their large arrays here, and every index's grown arrays
(:func:`viewer.index._contract.grown`) come from here; the other indexes' builds keep numpy's.

Elsewhere (no ``MADV_HUGEPAGE``, or an array below 2 MiB) these are plain ``np.zeros`` / ``np.full``.

A mapping may also reserve address space after its array (``reserve`` rows), which :func:`extend` turns into
more rows in place: a pool that must grow while the world moves then grows without copying (the octree's
object pool: a copy or a repack of a large world's pool is a pause many frames long, a stutter in the frame it
lands in).
"""

from __future__ import annotations

import mmap

import numpy as np

__all__ = ["HUGE_PAGE", "extend", "full", "zeros"]

HUGE_PAGE = 2 << 20


def zeros(shape, dtype=np.float64, reserve: int = 0) -> np.ndarray:
    """A zero-filled C-contiguous array of ``shape`` and ``dtype``; from 2 MiB up, in its own mapping
    advised for huge pages (the array keeps the mapping alive).

    reserve : rows (along the first axis) the mapping also holds after the array, untouched (address space
        only: the kernel backs a page with memory when it is first written), so that :func:`extend` can
        lengthen the array in place, with no copy (from 64 KiB of array and reserve up: a smaller array
        is plain numpy, and :func:`extend` says it has no room)."""
    dtype = np.dtype(dtype)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    row = int(np.prod(shape[1:], dtype=np.int64)) * dtype.itemsize
    extra = max(0, int(reserve)) * row
    if nbytes < HUGE_PAGE and (extra == 0 or nbytes + extra < 1 << 16) or not hasattr(mmap, "MADV_HUGEPAGE"):
        return np.zeros(shape, dtype=dtype)
    try:
        buf = mmap.mmap(-1, nbytes + extra + HUGE_PAGE,
                        flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    except OSError as exc:  # as numpy says it
        raise MemoryError(f"cannot allocate {nbytes} bytes for an array of shape {shape}: {exc}") from None
    try:
        buf.madvise(mmap.MADV_HUGEPAGE)
    except OSError:  # huge pages off or unsupported: the mapping still serves, on small pages
        pass
    raw = np.frombuffer(buf, dtype=np.uint8)
    start = (-raw.ctypes.data) % HUGE_PAGE
    return raw[start : start + nbytes].view(dtype).reshape(shape)


def full(shape, fill, dtype=np.float64, reserve: int = 0) -> np.ndarray:
    """As :func:`zeros`, every element ``fill``."""
    a = zeros(shape, dtype, reserve)
    if fill != 0:
        a.fill(fill)
    return a


def _mapping(a: np.ndarray) -> np.ndarray | None:
    """The uint8 array over the whole mapping ``a`` lies in (None: ``a`` is not in one of ours)."""
    b = a
    while isinstance(b, np.ndarray):
        if isinstance(b.base, memoryview) and isinstance(b.base.obj, mmap.mmap):
            return b
        b = b.base
    return None


def extend(a: np.ndarray, rows: int, fill=0) -> np.ndarray | None:
    """``a`` lengthened in place to ``rows`` rows (>= its own), the new rows ``fill``: a view of the same
    memory, so the old rows are not copied and ``a`` itself stays valid. None when ``a`` was not made with
    room for them (:func:`zeros`'s ``reserve``): the caller then copies, as before."""
    raw = _mapping(a)
    if raw is None or not a.flags.c_contiguous or rows < a.shape[0]:
        return None
    row = a.dtype.itemsize * int(np.prod(a.shape[1:], dtype=np.int64))
    start = a.ctypes.data - raw.ctypes.data
    if start + rows * row > raw.size:
        return None
    g = raw[start : start + rows * row].view(a.dtype).reshape((rows,) + a.shape[1:])
    if fill != 0:
        g[a.shape[0] :] = fill  # the rest is zero: never written since the mapping was made
    return g
