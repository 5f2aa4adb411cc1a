"""Scene generators: where the objects are.

``GENERATORS`` maps a name to a :class:`Generator`. Each has a *layout* step (cluster centres, the
remote cluster's place, ...: drawn once, from its own random stream, so the layout does not depend on
N) and a *sample* step that places ``m`` objects at a time (called chunk by chunk, so memory stays
proportional to the chunk, not to N). Positions use only :mod:`viewer.scenes._portable` arithmetic: a seed
gives bit-identical centres on every machine.

Every centre lies inside the world box ``[lo, hi]`` (points drawn outside are drawn again).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Mapping

import numpy as np

from . import _portable as P
from ._schema import Param
from .errors import SceneError

__all__ = ["GENERATORS", "Generator", "Layout"]


@dataclass
class Layout:
    """What a generator fixes before placing objects.

    cluster_centres : (K, 3) float64, world units
    cluster_spread : (K,) float64, world units (standard deviation per axis; 0 for exact sites)
    extras : generator-specific facts, JSON-able (lists, floats, strings)
    state : anything else ``sample`` needs
    """

    cluster_centres: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    cluster_spread: np.ndarray = field(default_factory=lambda: np.zeros(0))
    extras: dict = field(default_factory=dict)
    state: dict = field(default_factory=dict)


Setup = Callable[[np.random.Generator, int, np.ndarray, np.ndarray, dict, dict], Layout]
Sample = Callable[[np.random.Generator, Layout, int, np.ndarray, np.ndarray, np.ndarray, dict], tuple]


@dataclass(frozen=True)
class Generator:
    """A named generator.

    setup(rng, n, lo, hi, params, radius_spec) -> Layout
    sample(rng, layout, m, radii, lo, hi, params) -> (centres (m, 3) float64, category (m,) int32)
    check(params, world, prefix) raises SceneError for parameter combinations that cannot work.
    default_radius(world) -> spec : the radius model when the recipe gives none (None: the global
        default, heavy-tailed).
    radii(rng, m, params) -> (m,) float64 : the generator's own view distances (drawn from the radius
        stream), replacing the radius model; a recipe for such a generator must not give ``[radius]``.
    colours(rng, centres, radii, category, params) -> (N, 4) uint8 : the generator's own colours (drawn
        from the look stream), used when the recipe's ``look.colour_by`` is ``auto``.
    default_look : look fields the generator prefers; the recipe's ``[look]`` overrides them.
    arrays(rng, centres, radii, sizes, category, params) -> dict : the generator's own further arrays,
        as :func:`viewer.scenes.construct.scene_from_arrays` keywords (``meshes``, ``lod``, ``begin``, ``sizes``), drawn
        from their own stream; called before the recipe's ``radius_scale`` (which then scales ``lod`` and
        ``begin`` with the radii)
    bytes_per_object : the peak memory generating a scene costs per object, bytes (measured at n = 4e6
        over every look: the arrays, the scene built from them and their temporaries), which
        :func:`viewer.scenes.build.estimate_bytes` weighs against what the process may use before generating.
    """

    name: str
    doc: str
    params: Mapping[str, Param]
    setup: Setup
    sample: Sample
    check: Callable[[dict, float, str], None] = lambda p, world, prefix: None
    default_radius: Callable[[float], dict] | None = None
    radii: Callable[[np.random.Generator, int, dict], np.ndarray] | None = None
    colours: Callable[..., np.ndarray] | None = None
    default_look: Mapping | None = None
    bytes_per_object: int = 88  # measured: 55 (default look) .. 80 (log-uniform sizes)
    arrays: Callable[..., dict] | None = None


# --------------------------------------------------------------------------- helpers


def _outside(pts: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return np.flatnonzero(((pts < lo) | (pts > hi)).any(axis=1))


def _keep_inside(pts: np.ndarray, lo, hi, redraw: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Draw again (``redraw(rows) -> (k, 3)``) every row outside the box until none is; a row still
    outside after 64 rounds (only for a profile mostly outside the box) is clamped onto it."""
    bad = _outside(pts, lo, hi)
    for _ in range(64):
        if bad.size == 0:
            return pts
        fresh = redraw(bad)
        pts[bad] = fresh
        bad = bad[_outside(fresh, lo, hi)]
    np.clip(pts, lo, hi, out=pts)
    return pts


def _uniform_box(rng: np.random.Generator, m: int, lo, hi) -> np.ndarray:
    u = rng.random((m, 3))
    u *= hi - lo
    u += lo
    return u


def _log_uniform(rng, k: int, a: float, b: float) -> np.ndarray:
    if a == b:
        return np.full(k, a)
    la, lb = P.log2(np.array([a, b]))
    return P.exp2(la + rng.random(k) * (lb - la))


def _gauss(rng, k: int) -> np.ndarray:
    return P.standard_normal(rng, 3 * k).reshape(k, 3)


def _gauss_ball(rng, k: int, limit: float) -> np.ndarray:
    """(k, 3) standard normal vectors, those longer than ``limit`` drawn again (a truncated profile)."""
    g = _gauss(rng, k)
    for _ in range(64):
        bad = np.flatnonzero((g * g).sum(axis=1) > limit * limit)
        if bad.size == 0:
            break
        g[bad] = _gauss(rng, bad.size)
    else:  # pragma: no cover - probability ~0.001**64
        g /= np.maximum(1.0, np.sqrt((g * g).sum(axis=1)) / limit)[:, None]
    return g


def _vec(v, default) -> np.ndarray:
    return np.asarray(default if v is None else v, dtype=np.float64)


# --------------------------------------------------------------------------- uniform


def _uniform_setup(rng, n, lo, hi, p, radius):
    return Layout()


def _uniform_sample(rng, lay, m, radii, lo, hi, p):
    return _uniform_box(rng, m, lo, hi), np.full(m, -1, dtype=np.int32)


# --------------------------------------------------------------------------- clustered


def _clustered_check(p, world, prefix):
    if p["spread_min"] > p["spread_max"]:
        raise SceneError(f"must be <= spread_max ({p['spread_max']:g})", f"{prefix}.spread_min")
    if p["spread_max"] > world / 4:
        raise SceneError(f"must be <= world / 4 ({world / 4:g}), got {p['spread_max']:g}", f"{prefix}.spread_max")


def _clustered_setup(rng, n, lo, hi, p, radius):
    k = p["clusters"]
    spread = _log_uniform(rng, k, p["spread_min"], p["spread_max"])
    margin = np.minimum(2.0 * spread, (hi - lo).min() / 4)[:, None]
    centres = lo + margin + rng.random((k, 3)) * ((hi - lo) - 2 * margin)
    weights = _log_uniform(rng, k, 1.0, p["weight_ratio"])
    share = (1.0 - p["background"]) * weights / math.fsum(weights.tolist())  # fsum: exact, machine-independent
    cum = np.cumsum(share)
    return Layout(centres, spread, {"background": p["background"]}, {"cum": cum})


def _clustered_sample(rng, lay, m, radii, lo, hi, p):
    cum = lay.state["cum"]
    which = np.searchsorted(cum, rng.random(m), side="right").astype(np.int32)
    k = cum.size
    bg = which >= k
    which[bg] = -1
    pts = np.empty((m, 3))
    nbg = int(np.count_nonzero(bg))
    pts[bg] = _uniform_box(rng, nbg, lo, hi)
    cl = np.flatnonzero(~bg)
    w = which[cl]
    pts[cl] = lay.cluster_centres[w] + lay.cluster_spread[w, None] * _gauss(rng, cl.size)

    def redraw(rows):
        w = which[rows]  # background rows never leave the box
        return lay.cluster_centres[w] + lay.cluster_spread[w, None] * _gauss(rng, rows.size)

    return _keep_inside(pts, lo, hi, redraw), which


# --------------------------------------------------------------------------- diagonal


def _diagonal_setup(rng, n, lo, hi, p, radius):
    return Layout(extras={"diagonal": {"start": lo.tolist(), "end": hi.tolist(), "jitter": p["jitter"]}})


def _diagonal_sample(rng, lay, m, radii, lo, hi, p):
    t = rng.random(m)
    base = lo + t[:, None] * (hi - lo)
    j = p["jitter"]
    pts = base + j * _gauss(rng, m)
    return _keep_inside(pts, lo, hi, lambda rows: base[rows] + j * _gauss(rng, rows.size)), np.full(
        m, -1, dtype=np.int32
    )


def _diagonal_check(p, world, prefix):
    if p["jitter"] > world / 4:
        raise SceneError(f"must be <= world / 4 ({world / 4:g}), got {p['jitter']:g}", f"{prefix}.jitter")


# --------------------------------------------------------------------------- remote-cluster


_REMOTE_LIMIT = 4.0  # the remote cluster's Gaussian is cut at this many spreads from its centre


def _remote_check(p, world, prefix):
    if p["spread"] > world / 8:
        raise SceneError(f"must be <= world / 8 ({world / 8:g}), got {p['spread']:g}", f"{prefix}.spread")


def _remote_setup(rng, n, lo, hi, p, radius):
    from .radii import radius_upper

    centre = _vec(p["position"], lo + 0.9 * (hi - lo))
    if (centre < lo).any() or (centre > hi).any():
        raise SceneError(
            f"must lie inside the world box {lo.tolist()}..{hi.tolist()}, got {centre.tolist()}",
            "params.position",
        )
    spread = float(p["spread"])
    keep_out = _REMOTE_LIMIT * spread + radius_upper(radius)
    extras = {
        "remote": {
            "centre": centre.tolist(),
            "spread": spread,
            "share": p["share"],
            # a camera farther than this from the centre sees none of the cluster's objects (their
            # profile is truncated at _REMOTE_LIMIT spreads, their radii at the model's maximum)
            "keep_out": keep_out,
        }
    }
    return Layout(centre[None, :], np.array([spread]), extras, {})


def _remote_sample(rng, lay, m, radii, lo, hi, p):
    remote = rng.random(m) < p["share"]
    cat = np.where(remote, 0, -1).astype(np.int32)
    pts = _uniform_box(rng, m, lo, hi)
    rows = np.flatnonzero(remote)
    c, s = lay.cluster_centres[0], lay.cluster_spread[0]
    pts[rows] = c + s * _gauss_ball(rng, rows.size, _REMOTE_LIMIT)
    return _keep_inside(pts, lo, hi, lambda r: c + s * _gauss_ball(rng, r.size, _REMOTE_LIMIT)), cat


# --------------------------------------------------------------------------- octaves


def _octaves_setup(rng, n, lo, hi, p, radius):
    focus = _vec(p["focus"], (lo + hi) / 2)
    if (focus < lo).any() or (focus > hi).any():
        raise SceneError(f"must lie inside the world box, got {focus.tolist()}", "params.focus")
    return Layout(extras={"focus": focus.tolist(), "reach": p["reach"], "profile": p["profile"]}, state={"focus": focus})


def _octaves_sample(rng, lay, m, radii, lo, hi, p):
    d = P.unit_vectors(rng, m)
    dist = radii * p["reach"]
    if p["profile"] == "ball":
        dist = dist * P.exp2(P.log2(np.maximum(rng.random(m), 1e-300)) / 3.0)  # radius * cbrt(u)
    pts = lay.state["focus"] + d * dist[:, None]
    np.clip(pts, lo, hi, out=pts)
    return pts, np.full(m, -1, dtype=np.int32)


# --------------------------------------------------------------------------- coincident


def _coincident_setup(rng, n, lo, hi, p, radius):
    k = p["sites"]
    return Layout(_uniform_box(rng, k, lo, hi), np.zeros(k), {"sites": k}, {})


def _coincident_sample(rng, lay, m, radii, lo, hi, p):
    which = rng.integers(0, lay.cluster_centres.shape[0], m, dtype=np.int64)
    return lay.cluster_centres[which], which.astype(np.int32)


# --------------------------------------------------------------------------- starfield


def _disc_scales(p, lo, hi) -> tuple[float, float]:
    world = float((hi - lo).min())
    h_r = p["scale_length"] if p["scale_length"] is not None else world / 16.0
    h_z = p["scale_height"] if p["scale_height"] is not None else world / 200.0
    return h_r, h_z


def _starfield_check(p, world, prefix):
    h_r = p["scale_length"] if p["scale_length"] is not None else world / 16.0
    h_z = p["scale_height"] if p["scale_height"] is not None else world / 200.0
    if h_r > world / 2 or h_z > world / 2:
        raise SceneError(f"the disc's scale length and height must be <= world / 2 ({world / 2:g})",
                         f"{prefix}.scale_length" if h_r > world / 2 else f"{prefix}.scale_height")


def _starfield_setup(rng, n, lo, hi, p, radius):
    h_r, h_z = _disc_scales(p, lo, hi)
    centre = (lo + hi) / 2
    return Layout(extras={"disc": {"centre": centre.tolist(), "scale_length": h_r, "scale_height": h_z,
                                   "m_lim": p["m_lim"]}}, state={"centre": centre, "h_r": h_r, "h_z": h_z})


def _disc_points(rng, m: int, centre, h_r: float, h_z: float) -> np.ndarray:
    """(m, 3) points of an exponential disc in the x-z plane (+y up): surface density ~ exp(-R / h_r)
    (R is Gamma(2, h_r): the sum of two exponential draws), height ~ exp(-|y| / h_z)."""
    u = np.maximum(rng.random((m, 4)), 1e-300)  # log of 0 is not defined; 1e-300 is 690 scale lengths out
    R = -(P.log2(u[:, 0]) + P.log2(u[:, 1])) * (h_r * _LN2)
    y = -P.log2(u[:, 2]) * (h_z * _LN2)
    y[u[:, 3] < 0.5] *= -1.0
    d = np.empty((m, 2))  # a uniform direction in the plane: points of the unit disc, normalised
    done = 0
    while done < m:
        v = rng.random((2 * (m - done) + 8, 2)) * 2.0 - 1.0
        n2 = v[:, 0] * v[:, 0] + v[:, 1] * v[:, 1]
        v = v[(n2 <= 1.0) & (n2 > 1e-6)][: m - done]
        d[done:done + v.shape[0]] = v / np.sqrt(v[:, 0] * v[:, 0] + v[:, 1] * v[:, 1])[:, None]
        done += v.shape[0]
    pts = np.empty((m, 3))
    pts[:, 0] = centre[0] + R * d[:, 0]
    pts[:, 1] = centre[1] + y
    pts[:, 2] = centre[2] + R * d[:, 1]
    return pts


_LN2 = 0.6931471805599453


def _starfield_sample(rng, lay, m, radii, lo, hi, p):
    st = lay.state
    pts = _disc_points(rng, m, st["centre"], st["h_r"], st["h_z"])
    pts = _keep_inside(pts, lo, hi, lambda rows: _disc_points(rng, rows.size, st["centre"], st["h_r"], st["h_z"]))
    return pts, np.full(m, -1, dtype=np.int32)


def _starfield_radii(rng, m, p):
    from .stars import absolute_magnitudes, view_distance

    return view_distance(absolute_magnitudes(rng, m, p["giants"]), p["m_lim"])


def _starfield_colours(rng, centres, radii, category, p):
    from .stars import star_colours

    return star_colours(rng, radii, p["m_lim"], p["giants"])


# --------------------------------------------------------------------------- terrain

# the flat world's kinds of object: share of all objects, view-distance band [lo, hi) (disjoint, so a
# radius tells its kind), share placed in villages and in forests (the rest scattered over the land)
_KINDS = (  # name, share, r_lo, r_hi, in villages, in forests
    ("rock", 0.30, 15.0, 60.0, 0.10, 0.30),
    ("tree", 0.55, 60.0, 250.0, 0.05, 0.80),
    ("building", 0.15, 250.0, 1200.0, 0.85, 0.0),
)
_KIND_RGBA = np.array([[128, 124, 118, 255], [46, 122, 52, 255], [170, 92, 64, 255]], dtype=np.uint8)


def _terrain_check(p, world, prefix):
    if p["height"] > world / 8:
        raise SceneError(f"must be <= world / 8 ({world / 8:g}), got {p['height']:g}", f"{prefix}.height")
    if p["hill_size"] is not None and p["hill_size"] < world / 1000:  # the noise lattices are built whole
        raise SceneError(f"must be >= world / 1000 ({world / 1000:g}), got {p['hill_size']:g}", f"{prefix}.hill_size")


def _terrain_setup(rng, n, lo, hi, p, radius):
    nv, nf = p["villages"], p["forests"]
    span = hi - lo
    margin = span * 0.05
    sites = lo + margin + rng.random((nv + nf, 3)) * (span - 2 * margin)
    # a spread is at most an eighth of the world (the defaults suit worlds of 2,400 and more; a small world
    # keeps its villages and forests inside it)
    top = float(span[0]) / 8.0
    vs, fs = min(p["village_spread"], top), min(p["forest_spread"], top)
    spread = np.concatenate([_log_uniform(rng, nv, vs / 2, vs), _log_uniform(rng, nf, fs / 2, fs)])
    hill = p["hill_size"] if p["hill_size"] is not None else float(span[0]) / 10.0
    cells = int(math.ceil(float(span.max()) / hill)) + 2
    # value noise: a lattice of heights in [-1, 1] per octave (the second 4x finer, a quarter as high)
    lattices = [rng.random((cells + 1, cells + 1)) * 2.0 - 1.0, rng.random((4 * cells + 1, 4 * cells + 1)) * 2.0 - 1.0]
    state = {"hill": hill, "lattices": lattices, "lo": lo}
    sites[:, 1] = _ground(sites[:, 0], sites[:, 2], state, p["height"]) + (lo[1] + hi[1]) / 2
    extras = {"terrain": {"villages": nv, "forests": nf, "height": p["height"], "hill_size": hill,
                          "kinds": [k[0] for k in _KINDS], "up": "y"}}
    return Layout(sites, spread, extras, state)


def _ground(x: np.ndarray, z: np.ndarray, state: dict, height: float) -> np.ndarray:
    """Terrain height (m,) at (x, z): two octaves of value noise, smoothstep-interpolated (IEEE + and *
    only, so bit-identical on every machine), at most ``height`` * 1.25 from the mean."""
    h = np.zeros(x.shape)
    for octave, (lat, amp) in enumerate(zip(state["lattices"], (1.0, 0.25))):
        step = state["hill"] / 4.0**octave
        u = (x - state["lo"][0]) / step
        v = (z - state["lo"][2]) / step
        i = np.clip(np.floor(u), 0, lat.shape[0] - 2).astype(np.int64)
        j = np.clip(np.floor(v), 0, lat.shape[1] - 2).astype(np.int64)
        fu = np.clip(u - i, 0.0, 1.0)
        fv = np.clip(v - j, 0.0, 1.0)
        su = fu * fu * (3.0 - 2.0 * fu)
        sv = fv * fv * (3.0 - 2.0 * fv)
        a = lat[i, j] + (lat[i + 1, j] - lat[i, j]) * su
        b = lat[i, j + 1] + (lat[i + 1, j + 1] - lat[i, j + 1]) * su
        h += amp * height * (a + (b - a) * sv)
    return h


def _kind_of(radii: np.ndarray) -> np.ndarray:
    """Each object's kind (index into ``_KINDS``) from its view distance."""
    return np.searchsorted(np.array([k[3] for k in _KINDS[:-1]]), radii, side="right")


def _terrain_radii(rng, m, p):
    kind = np.searchsorted(np.cumsum([k[1] for k in _KINDS])[:-1], rng.random(m), side="right")
    r = np.empty(m)
    for j, (_, _, a, b, _, _) in enumerate(_KINDS):
        rows = np.flatnonzero(kind == j)
        r[rows] = _log_uniform(rng, rows.size, a, b * (1.0 - 2.0**-40))  # strictly below the next band
    return r


def _terrain_sample(rng, lay, m, radii, lo, hi, p):
    nv = p["villages"]
    nf = p["forests"]
    kind = _kind_of(radii)
    u = rng.random(m)
    village = np.zeros(m, dtype=bool)
    forest = np.zeros(m, dtype=bool)
    for j, (_, _, _, _, in_v, in_f) in enumerate(_KINDS):
        mine = kind == j
        village |= mine & (u < in_v) & (nv > 0)
        forest |= mine & (u >= in_v) & (u < in_v + in_f) & (nf > 0)
    which = np.full(m, -1, dtype=np.int32)
    pick = rng.random(m)
    which[village] = np.minimum((pick[village] * nv).astype(np.int32), nv - 1)
    which[forest] = nv + np.minimum((pick[forest] * nf).astype(np.int32), nf - 1)
    mid = (lo[1] + hi[1]) / 2

    def draw(rows):
        # uniform over the land, or Gaussian in x and z around the row's village or forest; y on the ground
        pts = _uniform_box(rng, rows.size, lo, hi)
        g = _gauss(rng, rows.size)
        w = which[rows]
        cl = np.flatnonzero(w >= 0)
        for axis in (0, 2):
            pts[cl, axis] = lay.cluster_centres[w[cl], axis] + lay.cluster_spread[w[cl]] * g[cl, axis]
        pts[:, 1] = mid
        return pts

    pts = _keep_inside(draw(np.arange(m)), lo, hi, draw)
    pts[:, 1] = _ground(pts[:, 0], pts[:, 2], lay.state, p["height"]) + mid
    return pts, which


def _terrain_colours(rng, centres, radii, category, p):
    return _KIND_RGBA[_kind_of(radii)]


# --------------------------------------------------------------------------- city (scenes/city.py)

from . import city as _city  # noqa: E402


def _city_setup(rng, n, lo, hi, p, radius):
    return Layout(*_city.city_setup(rng, n, lo, hi, p, radius))


# --------------------------------------------------------------------------- table

GENERATORS: dict[str, Generator] = {
    "uniform": Generator(
        "uniform",
        "centres uniform in the world box",
        {},
        _uniform_setup,
        _uniform_sample,
    ),
    "clustered": Generator(
        "clustered",
        "many Gaussian clusters of varied weight and spread plus a uniform background share; "
        "inside a cluster a query meets hundreds of candidates",
        {
            "clusters": Param("int", 64, lo=1, hi=1_000_000, doc="number of clusters"),
            "background": Param("float", 0.1, lo=0.0, hi=1.0, doc="share of objects uniform over the box"),
            "spread_min": Param("float", 10.0, lo=0.0, lo_open=True, doc="smallest cluster spread (std dev), world units"),
            "spread_max": Param("float", 100.0, lo=0.0, lo_open=True, doc="largest cluster spread, world units"),
            "weight_ratio": Param(
                "float", 20.0, lo=1.0, doc="heaviest / lightest cluster weight (weights log-uniform in between)"
            ),
        },
        _clustered_setup,
        _clustered_sample,
        _clustered_check,
    ),
    "diagonal": Generator(
        "diagonal",
        "centres along the world box's main diagonal (lo corner to hi corner) with Gaussian jitter: "
        "defeats dense grids (few cells hold everything) and per-axis pruning (every axis spans the world)",
        {"jitter": Param("float", 10.0, lo=0.0, doc="standard deviation per axis, world units")},
        _diagonal_setup,
        _diagonal_sample,
        _diagonal_check,
    ),
    "remote-cluster": Generator(
        "remote-cluster",
        "a sparse uniform world plus one very dense cluster (category 0; Gaussian cut at 4 spreads) far "
        "from where cameras go; "
        "extras['remote'] says where cameras must keep out. The octree's query cost claims to be "
        "independent of such a cluster: this scene checks the claim",
        {
            "share": Param("float", 0.5, lo=0.0, hi=1.0, doc="share of objects in the remote cluster"),
            "spread": Param("float", 50.0, lo=0.0, lo_open=True, doc="the cluster's std dev per axis, world units"),
            "position": Param("vec3", None, doc="the cluster's centre (default: 90% of the way to the hi corner)"),
        },
        _remote_setup,
        _remote_sample,
        _remote_check,
    ),
    "octaves": Generator(
        "octaves",
        "objects of every size around one focus point, each within `reach` times its own radius of it, "
        "radii spanning many octaves (default log-uniform world*1e-6 .. world/4). Stresses the query "
        "bound O(max(n, log S - log s)) (S root size, s smallest sphere within twice its radius of the "
        "camera: here s is tiny, so the depth term dominates) and the at-most-2^d-nodes-per-level bound "
        "(the default focus, the box centre, lies on a node boundary at every level). With profile "
        "'shell' and reach slightly above 1 every sphere just misses the focus: many candidates, no hits",
        {
            "focus": Param("vec3", None, doc="the point every object surrounds (default: the box centre)"),
            "reach": Param("float", 2.0, lo=0.0, lo_open=True, doc="distance to the focus, in units of the object's own radius"),
            "profile": Param(
                "str", "ball", choices=("ball", "shell"), doc="'ball': anywhere within reach; 'shell': exactly at reach"
            ),
        },
        _octaves_setup,
        _octaves_sample,
        default_radius=lambda world: {"model": "log-uniform", "min": world * 1e-6, "max": world / 4},
    ),
    "coincident": Generator(
        "coincident",
        "objects stacked on a few exact sites (category = site): stresses structures whose leaves "
        "split by position (a full leaf of identical points cannot be split), against the octree's "
        "bound that an object's depth depends only on its radius, O(log S - log r), not on density",
        {"sites": Param("int", 100, lo=1, hi=1_000_000,
                        doc="number of distinct positions (each one's centre is kept in the scene, as `clustered`'s "
                            "clusters: at most a million)")},
        _coincident_setup,
        _coincident_sample,
    ),
    "starfield": Generator(
        "starfield",
        "stars in a thin exponential disc (x-z plane, +y up; parsecs as world units), absolute magnitudes "
        "from a luminosity function spanning supergiants to red dwarfs (scenes/stars.py), each star's view "
        "distance the distance at which it fades to the limiting magnitude m_lim: r = 10 * 10**((m_lim - "
        "M) / 5). Radii span four decades and thousands of stars are in view from anywhere in the disc; "
        "colours are the stars' blackbody colours, drawn sizes proportional to r; drawn in the look's style "
        "'stars' (unlit point sprites on black, brightness from apparent magnitude). The recipe's [radius] "
        "table does not apply",
        {
            "m_lim": Param("float", 6.5, lo=-30.0, hi=100.0, doc="limiting apparent magnitude (6.5: the naked eye)"),
            "giants": Param("float", 0.1, lo=0.0, hi=1.0, doc="share of giants and supergiants (M -6 .. 1)"),
            "scale_length": Param("float", None, lo=0.0, lo_open=True,
                                  doc="the disc's radial scale length, parsecs (default: world / 16)"),
            "scale_height": Param("float", None, lo=0.0, lo_open=True,
                                  doc="the disc's vertical scale height, parsecs (default: world / 200)"),
        },
        _starfield_setup,
        _starfield_sample,
        _starfield_check,
        radii=_starfield_radii,
        colours=_starfield_colours,
        # drawn half-extent = r * 0.001: a star at its view distance is ~1.2 pixels wide in a 720-pixel,
        # 60-degree view, one 5 magnitudes brighter 10 times that; drawn as stars (shaders/stars.glsl) on black
        default_look={"size": {"model": "proportional", "factor": 0.001, "min": 0.0, "max": 1e12}, "style": "stars"},
        bytes_per_object=208,  # measured: 190 (the blackbody colours' temporaries)
    ),
    "terrain": Generator(
        "terrain",
        "a flat world (x-z plane, +y up): rocks, trees and buildings on a gently rolling surface (height "
        "`height` over hills `hill_size` wide, in a world thousands wide), buildings mostly in villages, "
        "trees mostly in forests (category = village, then forest), the rest scattered over sparse land. "
        "View distances by kind: rocks 15 .. 60, trees 60 .. 250, buildings 250 .. 1200 (log-uniform; "
        "30%, 55% and 15% of the objects); colours by kind. The recipe's [radius] table does not apply",
        {
            "villages": Param("int", 40, lo=0, hi=1_000_000, doc="number of villages"),
            "forests": Param("int", 60, lo=0, hi=1_000_000, doc="number of forests"),
            "village_spread": Param("float", 80.0, lo=0.0, lo_open=True,
                                    doc="largest village spread (std dev in x and z), world units; at most world / 8"),
            "forest_spread": Param("float", 300.0, lo=0.0, lo_open=True,
                                   doc="largest forest spread (std dev in x and z), world units; at most world / 8"),
            "height": Param("float", 30.0, lo=0.0, doc="hill height (the surface stays within 1.25x of it)"),
            "hill_size": Param("float", None, lo=0.0, lo_open=True,
                               doc="hill width, world units (default: world / 10; at least world / 1000)"),
        },
        _terrain_setup,
        _terrain_sample,
        _terrain_check,
        radii=_terrain_radii,
        colours=_terrain_colours,
        default_look={"size": {"model": "proportional", "factor": 0.02, "min": 0.3, "max": 25.0}},
    ),
    "city": Generator(
        "city",
        "buildings on a street grid (x-z plane, +y up): houses (70%, extent 8 .. 16), midrises (25%, 18 .. 45) "
        "and towers (5%, 60 .. 250), the taller gathering downtown; each building an instance of its kind's "
        "LOD 0 mesh with three LOD meshes (full, simpler, a box), LOD switch distances lod1, lod2 x its view "
        "distance (view_factor x its extent), category = its block. With an [hlod] table, one proxy per "
        "block (scenes/hlod.py). The recipe's [radius] table does not apply (scenes/city.py)",
        {
            "block": Param("float", 120.0, lo=0.0, lo_open=True, doc="edge of a city block, street included, world units "
                           "(world / 1000 .. world)"),
            "street": Param("float", 20.0, lo=0.0, doc="street width between blocks, world units"),
            "downtown": Param("float", 1500.0, lo=0.0, lo_open=True,
                              doc="midrises and towers fall off as exp(-distance / downtown) from the centre "
                              "(at least block / 100)"),
            "view_factor": Param("float", 30.0, lo=0.0, lo_open=True, hi=1e6,
                                 doc="view distance = view_factor x the building's extent (largest edge)"),
            "lod1": Param("float", 0.25, lo=0.0, lo_open=True, hi=1.0,
                          doc="LOD 0 -> 1 switch distance, a share of the view distance"),
            "lod2": Param("float", 0.5, lo=0.0, lo_open=True, hi=1.0,
                          doc="LOD 1 -> 2 switch distance, a share of the view distance (> lod1)"),
        },
        _city_setup,
        _city.city_sample,
        _city.city_check,
        radii=_city.city_radii,
        colours=_city.city_colours,
        # the look's sizes are replaced by the buildings' own (E / 2, from city_arrays)
        bytes_per_object=400,  # measured: 488 MB peak RSS generating and writing city-1m (1.02e6 objects)
        arrays=_city.city_arrays,
    ),
}
