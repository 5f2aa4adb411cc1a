"""Fair conditions for a timing: Python's cyclic garbage collector kept out of timed frames (:mod:`.heap`),
and the balanced orders in which several indexes take their timed turns (:mod:`.interleave`).

Both serve the frame drivers (a recording, a replay, the window) as much as ``viewer bench``, so they sit low,
below the drivers and the bench alike. Modules are imported by name (``from viewer.timing.heap import
FrameCollector``); each loads only the standard library.
"""
