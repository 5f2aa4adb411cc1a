"""Facts about the machine and the process a run happens on: the CPU and OS line printed beside every figure
(:mod:`.machine`), whether a window can open (:mod:`.display`), how much memory the process may still use
(:mod:`.memory`).

Modules are imported by name (``from viewer.system.machine import machine``): each is small and loads only the
standard library, and a module here shares its name with one of its functions (``machine``), which a re-export
would hide.
"""
