"""The instance record: the one definition of the layout the gather kernel writes, the GPU buffer holds
and the object shaders read.

A record is 24 bytes, no padding (:data:`INSTANCE_DTYPE`):

    position  3 float32   object centre minus the render camera, world units (float32 keeps full
                          precision near the camera however far the world extends)
    size      float32     half-extent, world units
    colour    4 uint8     RGBA; the shaders read it normalised to [0, 1]
    fade      float32     1 inside, falling to 0 over the last ``fade`` fraction of the view distance

Every field is 4-byte aligned, so the kernel writes a record as one row of 32-bit words through a
float32 view and a uint32 view of the same memory; :data:`WORD` gives each field's first word.
The renderer derives its attribute format (``"3f f 4f1 f/i"``) and the attribute names (``in_`` +
field name) from the dtype.
"""

from __future__ import annotations

import numpy as np

__all__ = ["INSTANCE_DTYPE", "INSTANCE_WORDS", "WORD", "instance_words"]

#: One instance record as the GPU reads it (24 bytes, no padding).
INSTANCE_DTYPE = np.dtype([("position", "<f4", (3,)), ("size", "<f4"), ("colour", "u1", (4,)), ("fade", "<f4")])

#: 32-bit words per record
INSTANCE_WORDS: int = INSTANCE_DTYPE.itemsize // 4

#: field name -> index of its first 32-bit word in a record
WORD: dict[str, int] = {name: INSTANCE_DTYPE.fields[name][1] // 4 for name in INSTANCE_DTYPE.names}

assert INSTANCE_DTYPE.itemsize == 24 and all(INSTANCE_DTYPE.fields[n][1] % 4 == 0 for n in INSTANCE_DTYPE.names)


def instance_words(capacity: int) -> tuple[np.ndarray, np.ndarray]:
    """A zeroed buffer of ``capacity`` records as its two word views: ``(capacity, INSTANCE_WORDS)``
    float32 and uint32 of the same memory (``.view(INSTANCE_DTYPE)`` of a row block gives the records)."""
    f = np.zeros((int(capacity), INSTANCE_WORDS), dtype=np.float32)
    return f, f.view(np.uint32)
