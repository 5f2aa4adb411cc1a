"""The ``city`` generator: buildings on a street grid, each with three LOD meshes and per-object LOD
switch distances; with a recipe's ``[hlod]`` table, a proxy per city block (:mod:`.hlod`).

A flat world (x-z plane, +y up, the ground at the world box's middle height). The box is cut into square
blocks of edge ``block`` (from its low corner) with streets ``street`` wide between them; buildings stand
inside the blocks, axis-aligned. Three kinds (the radius tells the kind, as in ``terrain``: the extents'
bands are disjoint):

=========  ======  =========================  ======================================
kind       share   extent E (largest edge)     shape (w x h x d, E the largest)
=========  ======  =========================  ======================================
house      70%     8 .. 16 (log-uniform)       E x 0.7E x aE, a pitched roof
midrise    25%     18 .. 45                    0.8E x E x 0.8aE, a set-back top floor
tower      5%      60 .. 250                   0.3E x E x 0.3aE, three tiers and a spire
=========  ======  =========================  ======================================

(a in 0.6 .. 1, drawn per building.) Houses spread over the whole city, midrises and towers gather
downtown (the block weights fall off as exp(-distance / ``downtown``) from the box centre, more steeply for
taller kinds). The view distance is ``view_factor`` x E (a minimum on-screen size), the drawn half-extent
E / 2, and the LOD switch distances ``lod1`` and ``lod2`` x the view distance (default 0.25 and 0.5: band 0 the
full mesh near, band 1 a simpler mesh, band 2 a box). Meshes: :func:`city_meshes` (3 kinds x 3 LODs);
``MeshSet.lods`` maps each kind's base mesh to its LOD meshes. Positions come from the positions stream,
kinds and extents from the radius stream, aspect ratios from the generator's own arrays stream, so a seed
gives the same city on any machine.
"""

from __future__ import annotations

import numpy as np

from . import _portable as P
from .errors import SceneError
from .meshes import MeshSet

__all__ = ["KINDS", "city_meshes", "city_arrays", "city_check", "city_radii", "city_sample", "city_setup",
           "city_colours", "kind_of"]

# name, share, extent lo, extent hi, (w, h, d) as shares of E (d also times the aspect a), downtown pull
KINDS = (
    ("house", 0.70, 8.0, 16.0, (1.0, 0.7, 1.0), 0.0),
    ("midrise", 0.25, 18.0, 45.0, (0.8, 1.0, 0.8), 1.0),
    ("tower", 0.05, 60.0, 250.0, (0.3, 1.0, 0.3), 2.0),
)
_EXT_EDGES = np.array([k[2] for k in KINDS[1:]])  # an extent below KINDS[1]'s lo is a house, ...
_RGBA = np.array([[196, 160, 122, 255], [150, 154, 166, 255], [92, 126, 170, 255]], dtype=np.uint8)
_MESHES_PER_KIND = 3


def kind_of(extent: np.ndarray) -> np.ndarray:
    """(N,) int64 kind (0 house, 1 midrise, 2 tower) of buildings of extents (N,) float64."""
    return np.searchsorted(_EXT_EDGES, extent, side="right")


# --------------------------------------------------------------------------- meshes


def _box(x0, x1, y0, y1, z0, z1) -> tuple[np.ndarray, np.ndarray]:
    """An axis-aligned box without its bottom face: 8 vertices, 10 triangles (counter-clockwise outside)."""
    v = np.array([[x, y, z] for y in (y0, y1) for z in (z0, z1) for x in (x0, x1)], np.float32)
    f = np.array([[4, 6, 7], [4, 7, 5], [0, 1, 5], [0, 5, 4], [2, 6, 7], [2, 7, 3], [0, 4, 6], [0, 6, 2],
                  [1, 3, 7], [1, 7, 5]], np.int32)
    return v, f


def _gable(x0, x1, y0, y1, z0, z1) -> tuple[np.ndarray, np.ndarray]:
    """A pitched roof over x0..x1 x z0..z1 from eave height y0 to a ridge (along z) at y1: 6 vertices, 4
    triangles (two slopes, two gable ends)."""
    xm = (x0 + x1) / 2
    v = np.array([[x0, y0, z0], [x1, y0, z0], [x0, y0, z1], [x1, y0, z1], [xm, y1, z0], [xm, y1, z1]], np.float32)
    f = np.array([[0, 4, 5], [0, 5, 2], [1, 3, 5], [1, 5, 4], [0, 1, 4], [2, 5, 3]], np.int32)
    return v, f


def _spire(x, z, r, y0, y1) -> tuple[np.ndarray, np.ndarray]:
    """A four-sided pyramid of half-width r from y0 to its tip at y1."""
    v = np.array([[x - r, y0, z - r], [x + r, y0, z - r], [x - r, y0, z + r], [x + r, y0, z + r], [x, y1, z]],
                 np.float32)
    f = np.array([[0, 1, 4], [1, 3, 4], [3, 2, 4], [2, 0, 4]], np.int32)
    return v, f


def _join(parts) -> tuple[np.ndarray, np.ndarray]:
    vs, fs, base = [], [], 0
    for v, f in parts:
        vs.append(v)
        fs.append(f + base)
        base += v.shape[0]
    return np.concatenate(vs), np.concatenate(fs)


def city_meshes() -> list[tuple[np.ndarray, np.ndarray]]:
    """The nine building meshes, kind by kind, LOD 0 (finest), 1, 2 (a box): each (vertices (v, 3)
    float32, faces (f, 3) int32) in the unit box -0.5 .. 0.5 (a building's transform scales it to w x h x d
    about its centre). Triangles per kind: house 36 / 16 / 10, midrise 40 / 20 / 10, tower 44 / 20 / 10."""
    h = 0.5
    house = [
        _join([_box(-h, h, -h, 0.1, -h, h), _gable(-h, h, 0.1, h, -h, h), _box(0.2, 0.32, 0.2, 0.45, -0.3, -0.18),
               _box(-0.08, 0.08, -h, -0.15, h, h + 0.02)]),  # body, roof, chimney, a porch
        _join([_box(-h, h, -h, 0.1, -h, h), _gable(-h, h, 0.1, h, -h, h)]),
        _box(-h, h, -h, h, -h, h),
    ]
    midrise = [
        _join([_box(-h, h, -h, 0.25, -h, h), _box(-0.35, 0.35, 0.25, 0.42, -0.35, 0.35),
               _box(-0.1, 0.1, 0.42, h, -0.1, 0.1), _box(-h, h, -0.2, -0.17, -h - 0.03, h + 0.03)]),
        _join([_box(-h, h, -h, 0.25, -h, h), _box(-0.35, 0.35, 0.25, h, -0.35, 0.35)]),
        _box(-h, h, -h, h, -h, h),
    ]
    tower = [
        _join([_box(-h, h, -h, -0.1, -h, h), _box(-0.4, 0.4, -0.1, 0.2, -0.4, 0.4),
               _box(-0.28, 0.28, 0.2, 0.38, -0.28, 0.28), _spire(0.0, 0.0, 0.12, 0.38, h),
               _box(-h - 0.02, h + 0.02, -0.14, -0.1, -h - 0.02, h + 0.02)]),
        _join([_box(-h, h, -h, -0.1, -h, h), _box(-0.4, 0.4, -0.1, h, -0.4, 0.4)]),
        _box(-h, h, -h, h, -h, h),
    ]
    return house + midrise + tower


def _mesh_table() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(vertices, faces, vertex_start, face_start, lods (9, 3) int32) of :func:`city_meshes`."""
    meshes = city_meshes()
    vs = np.cumsum([0] + [m[0].shape[0] for m in meshes]).astype(np.int64)
    fs = np.cumsum([0] + [m[1].shape[0] for m in meshes]).astype(np.int64)
    lods = np.empty((len(meshes), _MESHES_PER_KIND), dtype=np.int32)
    for m in range(len(meshes)):
        base, level = divmod(m, _MESHES_PER_KIND)
        # a kind's LOD 0 mesh steps down band by band; a coarser mesh, should an object instance it, stays
        lods[m] = [base * _MESHES_PER_KIND + max(level, b) for b in range(_MESHES_PER_KIND)]
    return (np.concatenate([m[0] for m in meshes]), np.concatenate([m[1] for m in meshes]), vs, fs, lods)


# --------------------------------------------------------------------------- the generator's steps


def city_check(p: dict, world: float, prefix: str) -> None:
    if p["street"] >= p["block"]:
        raise SceneError(f"must be < block ({p['block']:g}), got {p['street']:g}", f"{prefix}.street")
    if p["block"] > world:
        raise SceneError(f"must be <= world ({world:g}), got {p['block']:g}", f"{prefix}.block")
    if p["block"] < world / 1000:  # at most 1000 x 1000 blocks: the grid is built whole
        raise SceneError(f"must be >= world / 1000 ({world / 1000:g}), got {p['block']:g}", f"{prefix}.block")
    if not p["downtown"] >= p["block"] / 100:  # else every block's weight exp(-d / downtown) underflows to 0
        raise SceneError(f"must be >= block / 100 ({p['block'] / 100:g}), got {p['downtown']:g}", f"{prefix}.downtown")
    if not p["lod1"] < p["lod2"]:
        raise SceneError(f"must be > lod1 ({p['lod1']:g}), got {p['lod2']:g}", f"{prefix}.lod2")


def city_setup(rng, n, lo, hi, p, radius) -> tuple:
    """The block grid: (block centres (B, 3), half-edges (B,), extras, state), the fields of the
    generator's ``Layout`` (built by :mod:`.generators`, which imports this module)."""
    nb = max(1, int(float(hi[0] - lo[0]) // p["block"])), max(1, int(float(hi[2] - lo[2]) // p["block"]))
    bi, bj = np.meshgrid(np.arange(nb[0]), np.arange(nb[1]), indexing="ij")
    corner = np.stack([lo[0] + bi.ravel() * p["block"], lo[2] + bj.ravel() * p["block"]], 1)  # (B, 2) x, z
    mid = corner + p["block"] / 2
    centre = (lo + hi) / 2
    dist = np.sqrt((mid[:, 0] - centre[0]) ** 2 + (mid[:, 1] - centre[2]) ** 2)
    cums = []
    for _, _, _, _, _, pull in KINDS:  # per kind: the cumulative block weights, exp(-pull * d / downtown)
        w = P.exp2(-pull * dist / (p["downtown"] * 0.6931471805599453))
        cums.append(np.cumsum(w / w.sum()))
    centres3 = np.c_[mid[:, 0], np.full(mid.shape[0], centre[1]), mid[:, 1]]
    extras = {"city": {"blocks": [int(nb[0]), int(nb[1])], "block": p["block"], "street": p["street"],
                       "ground": float(centre[1])}}
    return (centres3, np.full(mid.shape[0], p["block"] / 2), extras,
            {"corner": corner, "cums": cums, "ground": float(centre[1])})


def city_radii(rng, m, p) -> np.ndarray:
    """(m,) view distances: a kind by its share, an extent log-uniform in the kind's band, r = view_factor E."""
    u = rng.random(m)
    cut = np.cumsum([k[1] for k in KINDS])
    kind = np.minimum(np.searchsorted(cut, u, side="right"), len(KINDS) - 1)
    lo = np.array([k[2] for k in KINDS])[kind]
    hi = np.array([k[3] for k in KINDS])[kind]
    la, lb = P.log2(lo), P.log2(hi)
    ext = P.exp2(la + rng.random(m) * (lb - la))
    return ext * p["view_factor"]


def city_sample(rng, lay, m, radii, lo, hi, p):
    ext = radii / p["view_factor"]
    kind = kind_of(ext)
    block = np.empty(m, dtype=np.int64)
    u = rng.random(m)
    for k, cum in enumerate(lay.state["cums"]):
        rows = kind == k
        block[rows] = np.minimum(np.searchsorted(cum, u[rows], side="right"), cum.size - 1)
    # inside the block's lot (the block less half a street each side), the footprint's larger edge inside it
    shape = np.array([k[4] for k in KINDS])[kind]  # (m, 3) shares of E
    foot = np.maximum(shape[:, 0], shape[:, 2]) * ext / 2
    lot = p["block"] - p["street"]
    room = np.maximum(lot / 2 - foot, 0.0)
    c = lay.state["corner"][block] + p["block"] / 2
    uv = rng.random((m, 2)) * 2.0 - 1.0
    pts = np.empty((m, 3))
    pts[:, 0] = c[:, 0] + uv[:, 0] * room
    pts[:, 2] = c[:, 1] + uv[:, 1] * room
    pts[:, 1] = lay.state["ground"] + shape[:, 1] * ext / 2  # the box's centre: half its height up
    np.clip(pts, lo, hi, out=pts)
    return pts, block.astype(np.int32)


def city_colours(rng, centres, radii, category, p) -> np.ndarray:
    return _RGBA[kind_of(radii / p["view_factor"])]


def city_arrays(rng, centres, radii, sizes, category, p) -> dict:
    """The city's own arrays, as :func:`viewer.scenes.construct.scene_from_arrays` keywords: ``meshes``
    (the nine meshes, each building an instance of its kind's LOD 0 mesh scaled to w x h x d, the LOD
    table), ``lod`` (N, 2): ``lod1`` and ``lod2`` x the view distance, and ``sizes`` (N,) float32: E / 2."""
    ext = radii / p["view_factor"]  # the radii before any radius_scale (build.py scales them after this)
    kind = kind_of(ext)
    shape = np.array([k[4] for k in KINDS])[kind]
    aspect = 0.6 + 0.4 * rng.random(radii.shape[0])
    n = radii.shape[0]
    xf = np.zeros((n, 3, 4))
    xf[:, 0, 0] = shape[:, 0] * ext
    xf[:, 1, 1] = shape[:, 1] * ext
    xf[:, 2, 2] = shape[:, 2] * ext * aspect
    xf[:, :, 3] = centres
    v, f, vs, fs, lods = _mesh_table()
    meshes = MeshSet(vertices=v, faces=f, vertex_start=vs, face_start=fs,
                     ids=(kind * _MESHES_PER_KIND).astype(np.int32), transforms=xf, lods=lods)
    lod = np.stack([radii * p["lod1"], radii * p["lod2"]], 1)
    return {"meshes": meshes, "lod": lod, "sizes": (ext / 2.0).astype(np.float32)}
