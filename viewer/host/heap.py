"""Keep Python's cyclic garbage collector out of a frame.

A run builds its world once (a scene, its index, numba's dispatchers, GL objects: ~130,000 tracked Python
objects in a ``record`` of ``dynamic-1m``) and then runs frames that allocate little. The collector still walks
the older generations' objects when it collects them, in whichever frame crossed its threshold: measured here
(``viewer record dynamic-1m --index coherent octree scan loop32 --frames 1200``), the setup's full collections
took 26-65 ms each, and one generation-1 collection during the frames 5.6 ms. :func:`settle` collects once after
the setup and freezes what survives (:func:`gc.freeze`): in the same record, no collection during the frames
then took over 0.56 ms.
"""

from __future__ import annotations

import gc

__all__ = ["settle"]


def settle() -> None:
    """Collect the setup's garbage, then move every surviving object out of the collector's reach (they live
    for the whole run; objects made later, a new index after a switch, are collected as usual)."""
    gc.collect()
    gc.freeze()
