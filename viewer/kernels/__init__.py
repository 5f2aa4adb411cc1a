"""The numba side of every kernel: the compile switches each kernel module imports (:mod:`.jit`: ``njit``,
``njit_noref``, the on-disk cache and its key), the cache prefetch hint kernels may call (:mod:`.prefetch`),
what a command prints while numba compiles (:mod:`.compile`), the sealed cache files whose damage
means a recompile, said once, never a traceback (:mod:`.damaged_cache`), and the least work a moving frame's
update can be, timed beside every index's (:mod:`.floors`: the bench and the recordings measure it).

Modules are imported by name (``from viewer.kernels.jit import njit``), nothing is re-exported here: ``compile``
and ``damaged_cache`` must load without numba (they import numba lazily, and are not among the files that key the
kernel cache), while ``jit`` and ``prefetch`` load numba.
"""
