"""Facts about the machine and the process a run happens on, GL-free and index-free: the CPU and OS line
printed beside every figure (:mod:`.machine`), whether a window can open (:mod:`.display`), files written
only whole (:mod:`.output`), the interleaved orders of timed turns (:mod:`.interleave`), progress on the
terminal (:mod:`.progress`), how much memory the process may still use (:mod:`.memory`), and the numba
switches every kernel compiles with (:mod:`.jit`, :mod:`.prefetch`).

Modules are imported by name (``from viewer.host.output import replace_atomically``): each is small and
loads only the standard library (``jit`` and ``prefetch`` load numba).
"""
