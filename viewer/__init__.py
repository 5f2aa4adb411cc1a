"""A 3D view-distance culling testbed: spatial indexes over per-object view spheres, scenes, a GPU
viewer and per-frame recording.

Sub-packages: :mod:`viewer.index` (the indexes; no GL), :mod:`viewer.scenes` (generators, recipes and
``.npz`` files), :mod:`viewer.render` (the only moderngl code), :mod:`viewer.drivers.window` (the window).
``INDEXES`` and ``make_index`` are imported on first use, so ``import viewer.scenes`` does not load the
index package.
"""

from ._version import __version__
from .errors import UserError

__all__ = ["INDEXES", "UserError", "__version__", "make_index"]


def __getattr__(name: str):
    if name in ("INDEXES", "make_index"):
        from . import index

        return getattr(index, name)
    raise AttributeError(f"module 'viewer' has no attribute {name!r}")
