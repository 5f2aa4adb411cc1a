"""The registry of built-in indexes: name -> class, each class's module imported on first use.

:data:`INDEXES` is re-exported by :mod:`viewer.index`; :mod:`viewer.index.specs` reads it here, so the package
and what an ``--index`` text means import each other in one direction only. Adding an index: a line in
:data:`_CLASSES`.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping

from ._contract import SphereIndex

__all__ = ["INDEXES"]

# name -> (module under viewer.index, class): the core at the top, the rivals and peers under rivals/. Modules
# are imported on first use, so `from viewer.index import Octree` does not pay for compiling-or-loading every
# rival's kernels.
_CLASSES: dict[str, tuple[str, str]] = {
    "brute": ("brute", "BruteForce"),
    "bsp": ("rivals.leaftrees.bsp", "BSPTree"),
    "buckettree": ("rivals.grids.buckettree", "BucketTree"),
    "bvh": ("rivals.leaftrees.bvh", "BVH"),
    "ckdtree": ("rivals.peers", "CKDTreeIndex"),
    "coherent": ("rivals.coherent", "CoherentIndex"),
    "hashgrid": ("rivals.grids.hashgrid", "HashGrid"),
    "hgrid": ("rivals.grids.hgrid", "HGrid"),
    "kdtree": ("rivals.leaftrees.kdtree", "KDTree"),
    "loop32": ("loop32", "Loop32"),
    "looseoctree": ("rivals.looseoctree", "LooseOctree"),
    "octree": ("octree", "Octree"),
    "quadtree": ("rivals.quadtree", "Quadtree"),
    "rebuild": ("rivals.rebuild", "RebuildGrid"),
    "rtree": ("rivals.peers", "RTreeIndex"),
    "scan": ("scan", "LinearScan"),
    "spheretree": ("rivals.leaftrees.spheretree", "SphereTree"),
}


class _Registry(Mapping):
    """Read-only mapping of index name -> class, importing each class's module when first asked."""

    def __getitem__(self, name: str) -> type[SphereIndex]:
        module, cls = _CLASSES[name]
        return getattr(importlib.import_module(f"{__package__}.{module}"), cls)

    def __iter__(self) -> Iterator[str]:
        return iter(_CLASSES)

    def __len__(self) -> int:
        return len(_CLASSES)

    def __repr__(self) -> str:
        return f"INDEXES({', '.join(_CLASSES)})"


INDEXES: Mapping[str, type[SphereIndex]] = _Registry()
