"""A 3D view-distance culling testbed: spatial indexes over per-object view spheres, scenes, a GPU
viewer and per-frame recording.

The index core (:mod:`viewer.index`) never imports GL; the GL code lives in :mod:`viewer.render` and
the window in :mod:`viewer.app`, both imported lazily.
"""

__version__ = "0.1.0"

from .errors import UserError  # noqa: E402
from .index import INDEXES, make_index  # noqa: E402

__all__ = ["INDEXES", "UserError", "__version__", "make_index"]
