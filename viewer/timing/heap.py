"""Keep Python's cyclic garbage collector out of a frame.

A run builds its world once (a scene, its index, numba's dispatchers, GL objects: ~130,000 tracked Python
objects in a ``record`` of ``dynamic-1m``) and then runs frames that allocate little. The collector still walks
the older generations' objects when it collects them, in whichever frame crossed its threshold: that frame
pays for walking the whole setup, a spike many times its own cost that it did not cause. :func:`settle` collects
once after the setup and freezes what survives (:func:`gc.freeze`), so a later collection walks only what the
frames made. Even so, with several indexes the frames' own young objects still trip generation-1 collections
now and then, each a spike beside a fast mode's update. A recording's frame loop (and ``view --headless``'s)
therefore runs with the automatic collector off and collects the young generations itself between frames
(:class:`FrameCollector`), outside every timed stage, as ``viewer bench`` times its queries with the collector
off. (The measurements behind this: the bench results README, "Figures that used to live in code comments".)
"""

from __future__ import annotations

import gc
import weakref
from contextlib import contextmanager
from typing import Iterable, Iterator

__all__ = ["FrameCollector", "collect_if_alive", "collector_off", "settle"]

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


def collect_if_alive(refs: Iterable[weakref.ref]) -> None:
    """A full collection only if an object the caller has just let go of still lives (``refs``: weak references
    to them): one held by a reference cycle, which only the collector frees, so a large one never outlives its
    use. Objects freed by their reference counts (every registered index) need none, and a full collection walks
    the whole heap."""
    if any(r() is not None for r in refs):
        gc.collect()


@contextmanager
def collector_off() -> Iterator[None]:
    """The automatic cyclic collector off for the block, then as it was: no collection lands in the timed work
    inside it (a build, a pass of queries), and none is run before it either (a full collection walks the whole
    heap: in a process that has built many indexes, or a test worker, a quarter of a second each time)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


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
