"""glTF levels of detail and visibility parents (issue 24), read from the JSON :mod:`.gltf` parsed.

**MSFT_lod** (node LODs): a node with a mesh and ``extensions.MSFT_lod.ids`` = [n1, n2, ...] is one
object drawn with its own mesh in band 0 and the mesh of node n_k in band k (the LOD nodes place no
objects of their own; their transforms are not read: the LOD 0 node's places every level, as glTF viewers
do). Its switch distances, world units, come from the node's ``extras``:

- ``lod_distances``: a list of len(ids) distances, ascending (this importer's own hint: used when present);
- else ``MSFT_screencoverage``: len(ids) (or len(ids) + 1: the last, the coverage below which nothing is
  drawn, is not used: the end of the range is the view-distance rule's, as for every import) shares of the
  view, 1 .. 0, not increasing. **Coverage is converted to distance** as the share of
  the view's height the object's bounding sphere spans: c = R / (d tan(fov / 2)), so the switch from LOD
  k-1 to LOD k is at ``d_k = R / (c_k tan(fov / 2))``, R half the diagonal of the object's world box, fov the
  viewer's 60-degree vertical field of view (:data:`FOV_DEGREES`); a coverage of 0 is no switch;
- else the default coverages 0.5, 0.25, 0.125, ... (:func:`default_coverage`).

Objects of one mesh with different LOD chains get separate base meshes; ``MeshSet.lods`` maps each base
mesh to the mesh of every band (padded with its coarsest). Material LODs are not read.

**Visibility parents**: a mesh node whose parent node has a mesh (and places one object, not instances)
is that node's child: the parent is its HLOD proxy (``parent`` = the parent's object row). The proxy's
begin (its switch distance) comes from its ``extras.visibility_range_begin`` (Godot's name, world units)
when given, else from the rule of :mod:`viewer.scenes.hlod` (``switch`` 4 x the covering radius of its
children); once the view distances are known, :func:`viewer.scenes.hlod.fit_parents` raises the children's
and the proxy's ends so that there is no hole and no double outside the cross-fade window.

Every hint is read by :mod:`.gltf_numbers`, in its domain: a distance 0..2**100 world units (the numeric domain of
:mod:`viewer.domain`), a coverage 0..1 whose switch distance must fall in that domain too. A hint outside is
refused naming the node's own field and the value given (``nodes[3].extras.lod_distances[1]: 1e+31 is
outside ...``), never the scene arrays made from it.
"""

from __future__ import annotations

import math

import numpy as np

from ..construct import MAX_LOD_SWITCHES
from ..errors import SceneError
from .gltf_numbers import DISTANCE, SHARE, number, numbers, show

__all__ = ["EXT", "FOV_DEGREES", "default_coverage", "lod_chains", "mesh_lod_table", "switch_distances",
           "visibility_parents"]

EXT = "MSFT_lod"
#: the vertical field of view screen coverage is measured in (the viewer's camera's default)
FOV_DEGREES = 60.0
_TAN = math.tan(math.radians(FOV_DEGREES) / 2)


def default_coverage(levels: int) -> list[float]:
    """The switch coverages of a node without hints: 0.5, 0.25, ... (``levels`` values)."""
    return [0.5 ** (k + 1) for k in range(levels)]


def lod_chains(doc) -> dict[int, tuple[tuple[int, ...], tuple[int, ...]]]:
    """{node index: (its LOD nodes, their meshes)} for every node with ``MSFT_lod``, checked (a node with a
    mesh, ids a non-empty list of at most 7 other nodes with meshes)."""
    out = {}
    for k in range(len(doc.nodes)):
        node = doc.item(doc.nodes, k, "nodes")
        ext = node.get("extensions")
        if not isinstance(ext, dict) or EXT not in ext:
            continue
        where = f"nodes[{k}].extensions.{EXT}"
        e = ext[EXT]
        ids = e.get("ids") if isinstance(e, dict) else None
        if not isinstance(ids, list) or not ids:
            raise SceneError(f"{where}.ids: must be a non-empty list of node indices, got {show(ids)}")
        if len(ids) > MAX_LOD_SWITCHES:
            raise SceneError(f"{where}.ids: {len(ids)} LOD levels; at most {MAX_LOD_SWITCHES} are read")
        if node.get("mesh") is None:
            raise SceneError(f"nodes[{k}]: has {EXT} but no mesh (a node LOD's LOD 0 is the node's own mesh)")
        nodes, meshes = [], []
        for j, v in enumerate(ids):
            t = doc.ref(v, doc.nodes, "nodes", f"{where}.ids[{j}]")
            if t == k:
                raise SceneError(f"{where}.ids[{j}]: is the node itself")
            tn = doc.item(doc.nodes, t, "nodes")
            if tn.get("mesh") is None:
                raise SceneError(f"{where}.ids[{j}]: nodes[{t}] has no mesh (a node LOD is a mesh)")
            nodes.append(t)
            meshes.append(doc.ref(tn["mesh"], doc.meshes, "meshes", f"nodes[{t}].mesh"))
        out[k] = (tuple(nodes), tuple(meshes))
    return out


def mesh_lod_table(keys: list[tuple[int, tuple]], slot: dict[int, int], k: int) -> np.ndarray:
    """(K, B) int32 ``MeshSet.lods``: row j (the base mesh of ``keys[j]`` = (mesh, LOD meshes)) is
    [j, slot of LOD 1's mesh, ...], padded with its last; every other mesh draws itself in every band."""
    b = 1 + max(len(key[1]) for key in keys)
    lods = np.repeat(np.arange(k, dtype=np.int32)[:, None], b, axis=1)
    for j, (_, chain) in enumerate(keys):
        row = [j] + [slot[m] for m in chain]
        lods[j] = row + [row[-1]] * (b - len(row))
    return lods


def _coverage_distance(radius: np.ndarray, c: float, where: str) -> np.ndarray:
    """The switch distances (world units) of objects of bounding radius ``radius`` (M,) float64 at the screen
    coverage ``c`` (0..1; 0: no switch, +inf), refused naming ``where`` (the coverage's field) when one falls
    outside the numeric domain (a coverage of 1e-35 puts a switch 1e35 radii away)."""
    if c == 0:
        return np.full(radius.shape, np.inf)
    d = radius / (c * _TAN)
    # an object itself outside the domain (R > the limit: its size is too) is refused by the import's size check
    bad = np.flatnonzero(~(d <= DISTANCE.hi) & (radius <= DISTANCE.hi))
    if bad.size:
        i = int(bad[0])
        at = f"{d[i]:.4g} world units" if np.isfinite(d[i]) else "a distance past what a float64 holds"
        raise SceneError(f"{where}: a coverage of {show(c)} puts the switch at {at} for an object of radius "
                         f"{radius[i]:.4g} (d = R / (c tan({FOV_DEGREES:g} deg / 2))), outside {DISTANCE.text}")
    return d


def _rows_by_node(node_of: np.ndarray) -> dict[int, np.ndarray]:
    order = np.argsort(node_of, kind="stable")
    nodes, starts = np.unique(node_of[order], return_index=True)
    return {int(k): rows for k, rows in zip(nodes, np.split(order, starts[1:]))}


def switch_distances(doc, chains: dict, node_of: np.ndarray, box: np.ndarray) -> dict:
    """``{"lod": (N, L) float64, "lod_hints": {...}}`` for the objects of nodes with ``MSFT_lod`` (see the
    module docstring; +inf: no switch), or {} when no object has LODs. node_of : (N,) int64 the node
    each object comes from; box : (N, 3) float64 the edges of each object's world box."""
    present = set(np.unique(node_of).tolist()) if chains else set()
    placed = [k for k in chains if k in present]
    if not placed:
        return {}
    n = node_of.shape[0]
    levels = max(len(chains[k][0]) for k in placed)
    lod = np.full((n, levels), np.inf)
    radius = 0.5 * np.sqrt((box[:, 0] * box[:, 0] + box[:, 1] * box[:, 1]) + box[:, 2] * box[:, 2])
    rows = _rows_by_node(node_of)
    source = {"lod_distances": 0, "MSFT_screencoverage": 0, "default coverage": 0}
    for k in placed:
        m = len(chains[k][0])
        extras = doc.nodes[k].get("extras")
        extras = extras if isinstance(extras, dict) else {}
        r = rows[k]
        if "lod_distances" in extras:
            d = numbers(extras["lod_distances"], f"nodes[{k}].extras.lod_distances", (m,), DISTANCE)
            if any(b < a for a, b in zip(d, d[1:])):
                raise SceneError(f"nodes[{k}].extras.lod_distances: must ascend, got {show(extras['lod_distances'])}")
            lod[np.ix_(r, np.arange(m))] = d
            source["lod_distances"] += 1
            continue
        if "MSFT_screencoverage" in extras:
            where = f"nodes[{k}].extras.MSFT_screencoverage"
            cov = numbers(extras["MSFT_screencoverage"], where, (m, m + 1), SHARE)
            named = [f"{where}[{j}]" for j in range(m)]
            if any(b > a for a, b in zip(cov, cov[1:])):
                raise SceneError(f"nodes[{k}].extras.MSFT_screencoverage: must not increase (LOD 0 covers the most "
                                 f"of the view), got {show(extras['MSFT_screencoverage'])}")
            cov = cov[:m]
            source["MSFT_screencoverage"] += 1
        else:
            cov = default_coverage(m)
            named = [f"nodes[{k}].extensions.{EXT}.ids[{j}] (no switch hint: the default coverage)" for j in range(m)]
            source["default coverage"] += 1
        for j, c in enumerate(cov):
            lod[r, j] = _coverage_distance(radius[r], c, named[j])
    hints = {"nodes": len(placed), "switches from": {k: v for k, v in source.items() if v},
             "coverage rule": f"d = R / (c tan({FOV_DEGREES:g} deg / 2)), R half the object's box diagonal"}
    return {"lod": lod, "lod_hints": hints}


def visibility_parents(doc, parents: dict[int, int], node_of: np.ndarray, n: int) -> dict:
    """``{"parent": (N,) int64, "begin": (N,) float64, "begin_rule": (N,) bool}`` for the objects of mesh
    nodes under a mesh node that places one object (see the module docstring), or {} when there are none.
    ``begin`` holds the proxies' ``extras.visibility_range_begin`` hints; ``begin_rule`` marks the proxies
    without one (their begin comes from :func:`viewer.scenes.hlod.fit_parents`)."""
    rows = _rows_by_node(node_of)
    single = {k: int(r[0]) for k, r in rows.items() if r.size == 1}
    parent = np.full(n, -1, dtype=np.int64)
    for k, r in rows.items():
        p = parents.get(k, -1)
        if p >= 0 and p in single:
            parent[r] = single[p]
    if not (parent >= 0).any():
        return {}
    begin = np.zeros(n)
    rule = np.zeros(n, dtype=bool)
    node_at = {row: k for k, row in single.items()}
    for p in np.unique(parent[parent >= 0]):
        node = node_at[int(p)]
        extras = doc.nodes[node].get("extras")
        hint = extras.get("visibility_range_begin") if isinstance(extras, dict) else None
        if hint is None:
            rule[p] = True
        else:
            begin[p] = number(hint, f"nodes[{node}].extras.visibility_range_begin", DISTANCE)
    return {"parent": parent, "begin": begin, "begin_rule": rule}
