"""Keep Python's cyclic garbage collector out of a frame.

A run builds its world once (a scene, its index, numba's dispatchers, GL objects: ~130,000 tracked Python
objects in a ``record`` of ``dynamic-1m``) and then runs frames that allocate little. The collector still walks
the older generations' objects when it collects them, in whichever frame crossed its threshold: measured here
(``viewer record dynamic-1m --index coherent octree scan loop32 --frames 1200``), the setup's full collections
took 26-65 ms each, and one generation-1 collection during the frames 5.6 ms. :func:`settle` collects once after
the setup and freezes what survives (:func:`gc.freeze`): in the same record, no collection during the frames
then took over 0.56 ms. With six indexes (``--index loop32 brute scan octree looseoctree coherent``) the frames'
own young objects still made 22 generation-1 collections in 1,200 frames, 10 of them over 1 ms (up to 2 ms:
a 3-5x spike on the coherent mode's 0.8 ms update). A recording's frame loop (and ``view --headless``'s)
therefore runs with the automatic collector off and collects the young generations itself between frames
(:class:`FrameCollector`), outside every timed stage, as ``viewer bench`` times its queries with the collector
off.
"""

from __future__ import annotations

import gc

__all__ = ["FrameCollector", "settle"]

#: frames between two collections of the young generations in a frame loop that collects itself (at ~6
#: indexes' worth of per-frame objects, the automatic collector's generation-1 pass came every ~330 frames)
COLLECT_EVERY = 256
#: of those collections, every this many is a full one (generation 2 too)
FULL_EVERY = 16


def settle() -> None:
    """Collect the setup's garbage, then move every surviving object out of the collector's reach (they live
    for the whole run; objects made later, a new index after a switch, are collected as usual)."""
    gc.collect()
    gc.freeze()


class FrameCollector:
    """The cyclic collector kept out of timed frames: ``with FrameCollector() as fc:`` turns the automatic
    collector off for the block (restored after it), and ``fc.between_frames()``, called after each frame,
    collects the young generations (0 and 1) every ``every`` frames (default :data:`COLLECT_EVERY`), between
    frames, where no stage is timed.
    Every :data:`FULL_EVERY`-th of those collections is a full one, so garbage never piles up in a long run."""

    def __init__(self, every: int | None = None):
        self.every = max(1, int(COLLECT_EVERY if every is None else every))
        self.frames = 0
        self.collections = 0
        self._was = False

    def __enter__(self) -> "FrameCollector":
        self._was = gc.isenabled()
        gc.disable()
        return self

    def between_frames(self) -> None:
        self.frames += 1
        if self.frames % self.every == 0:
            self.collections += 1
            # every FULL_EVERY-th time all generations, so a run of millions of frames holds no garbage for long
            gc.collect(2 if self.collections % FULL_EVERY == 0 else 1)

    def __exit__(self, *exc) -> None:
        if self._was:
            gc.enable()
