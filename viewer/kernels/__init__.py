"""The numba side of every kernel: the compile switches each kernel module imports (:mod:`.jit`: ``njit``,
``njit_noref``, the on-disk cache and its key), the cache prefetch hint kernels may call (:mod:`.prefetch`),
and what a command prints while numba compiles (:mod:`.compile`).

Modules are imported by name (``from viewer.kernels.jit import njit``), nothing is re-exported here: ``compile``
must load without numba (it imports numba lazily, and is not one of the files that key the kernel cache), while
``jit`` and ``prefetch`` load numba.
"""
