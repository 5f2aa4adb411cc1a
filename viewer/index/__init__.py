"""Spatial indexes over view spheres: which objects' view distance holds the camera?

``INDEXES`` maps a short name to an index class; every class follows the contract in
:mod:`viewer.index._contract` (build from arrays, ``query`` / ``query_into``, ``insert`` / ``remove`` /
``move`` / ``move_many`` by id, ``stats``, ``warm_up``). No GL here: this package imports only numpy and numba
(and the optional peer libraries).
"""

from ..domain import COORD_LIMIT, RADIUS_LIMIT
from ._contract import (ENTRY_POINTS, IdTable, QueryOverflow, QueryStats, SphereIndex, as_bool, as_centres, as_objects,
                        as_point, as_radii, as_radius, check_id, check_out, grown_until_fits, warm_scope)
from .brute import BruteForce, brute_query
from .registry import _CLASSES, INDEXES
from .specs import ENTRY_POINT_GROUP, IndexSpec, installed_plugins, make_index, parse_index_list, parse_index_spec


def __getattr__(name: str):
    if name == "conformance":  # the kit, imported when asked: no measurement needs it
        from importlib import import_module

        return import_module(f"{__name__}.conformance")
    # the index classes by their own names (`from viewer.index import Octree`), imported lazily
    for key, (_, cls) in _CLASSES.items():
        if cls == name:
            return INDEXES[key]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    # the indexes, and what a plugin author builds on (viewer/index/README.md, "Add your own index"): the base
    # class and its numeric domain, the checks a constructor or a hook may use, the errors
    "COORD_LIMIT",
    "ENTRY_POINTS",
    "ENTRY_POINT_GROUP",
    "INDEXES",
    "BruteForce",
    "BSPTree",
    "BucketTree",
    "BVH",
    "CKDTreeIndex",
    "CoherentIndex",
    "HashGrid",
    "HGrid",
    "IndexSpec",
    "IdTable",
    "KDTree",
    "LinearScan",
    "Loop32",
    "LooseOctree",
    "Octree",
    "QueryOverflow",
    "QueryStats",
    "Quadtree",
    "RebuildGrid",
    "RADIUS_LIMIT",
    "RTreeIndex",
    "SphereIndex",
    "SphereTree",
    "as_bool",
    "as_centres",
    "as_objects",
    "as_point",
    "as_radii",
    "as_radius",
    "brute_query",
    "check_id",
    "check_out",
    "conformance",
    "grown_until_fits",
    "installed_plugins",
    "make_index",
    "parse_index_list",
    "parse_index_spec",
    "warm_scope",
    "warm_up",
]


def warm_up(names=None, entry_points=None) -> None:
    """Compile (or load from numba's cache) every kernel of the named indexes (keys of :data:`INDEXES`, or any
    spec text: :func:`parse_index_spec`; default: every registered one whose libraries are installed), so no
    JIT time lands in a measurement. Each
    class's :meth:`SphereIndex.warm_up` runs once per process; later calls return at once.

    entry_points : only the build's kernels and those of these entry points (of :data:`ENTRY_POINTS`)
        with those of an enclosing :func:`warm_scope` (None: the scope's, else all). Only meaningful inside
        a :func:`warm_scope` naming at least as much: outside one, the next build warms every entry point.
    Compilations are reported under each index's name when a :func:`viewer.kernels.compile.reporting` is on."""
    from contextlib import nullcontext

    from ..kernels.compile import compile_group

    for name in INDEXES if names is None else names:
        cls = INDEXES[name] if name in INDEXES else parse_index_spec(name).cls
        # through a scope, not an argument: an index may override warm_up (the octree's runs on a thread)
        with compile_group(name), nullcontext() if entry_points is None else warm_scope(entry_points):
            cls.warm_up()
