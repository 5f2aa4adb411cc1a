"""Spatial indexes over view spheres: which objects' view distance holds the camera?

``INDEXES`` maps a short name to an index class; every class follows the contract in
:mod:`viewer.index._contract` (build from arrays, ``query`` / ``query_into``, ``insert`` / ``remove`` /
``move`` by id, ``stats``). No GL here: this package imports only numpy and numba.
"""

from ._contract import QueryOverflow, QueryStats, SphereIndex
from .brute import BruteForce, brute_query
from .buckettree import BucketTree
from .bvh import BVH
from .hashgrid import HashGrid
from .hgrid import HGrid
from .kdtree import KDTree
from .octree import Octree
from .peers import CKDTreeIndex, RTreeIndex

INDEXES: dict[str, type[SphereIndex]] = {
    "brute": BruteForce,
    "buckettree": BucketTree,
    "bvh": BVH,
    "ckdtree": CKDTreeIndex,
    "hashgrid": HashGrid,
    "hgrid": HGrid,
    "kdtree": KDTree,
    "octree": Octree,
    "rtree": RTreeIndex,
}

__all__ = [
    "INDEXES",
    "BruteForce",
    "BucketTree",
    "BVH",
    "CKDTreeIndex",
    "HashGrid",
    "HGrid",
    "KDTree",
    "Octree",
    "QueryOverflow",
    "QueryStats",
    "RTreeIndex",
    "SphereIndex",
    "brute_query",
    "make_index",
]


def make_index(name: str, centres, radii, **options) -> SphereIndex:
    """Build the index called ``name`` (a key of :data:`INDEXES`) over ``centres`` (N, 3), ``radii`` (N,)."""
    try:
        cls = INDEXES[name]
    except KeyError:
        raise KeyError(f"unknown index {name!r}; choose from {', '.join(INDEXES)}") from None
    return cls(centres, radii, **options)
