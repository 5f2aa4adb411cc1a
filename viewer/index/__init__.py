"""Spatial indexes over view spheres: which objects' view distance holds the camera?

``INDEXES`` maps a short name to an index class; every class follows the contract in
:mod:`viewer.index._contract` (build from arrays, ``query`` / ``query_into``, ``insert`` / ``remove`` /
``move`` by id, ``stats``). No GL here: this package imports only numpy and numba.
"""

from ._contract import QueryOverflow, QueryStats, SphereIndex
from .brute import BruteForce, brute_query
from .buckettree import BucketTree
from .hashgrid import HashGrid
from .hgrid import HGrid
from .octree import Octree

INDEXES: dict[str, type[SphereIndex]] = {
    "brute": BruteForce,
    "buckettree": BucketTree,
    "hashgrid": HashGrid,
    "hgrid": HGrid,
    "octree": Octree,
}

__all__ = [
    "INDEXES",
    "BruteForce",
    "BucketTree",
    "HashGrid",
    "HGrid",
    "Octree",
    "QueryOverflow",
    "QueryStats",
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
