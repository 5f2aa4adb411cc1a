"""View-radius models: how far away each object can be seen (world units).

``RADIUS_MODELS`` maps a model name to a :class:`RadiusModel`; a recipe's ``[radius]`` table picks one
with ``model = "..."`` and gives its parameters. All draws go through :mod:`viewer.scenes._portable`, so a
seed gives the same radii on every machine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np

from . import _portable as P
from ._schema import Param, show, validate_table
from .errors import SceneError

__all__ = ["RADIUS_MODELS", "RadiusModel", "DEFAULT_RADIUS", "check_radius_spec", "sample_radii", "radius_upper"]


@dataclass(frozen=True)
class RadiusModel:
    """A radius model: its parameters, a sampler and the largest radius it can draw."""

    name: str
    doc: str
    params: Mapping[str, Param]
    sample: Callable[[np.random.Generator, int, dict], np.ndarray]
    upper: Callable[[dict], float]
    check: Callable[[dict, str], None] = lambda p, prefix: None


def _log_uniform(rng: np.random.Generator, m: int, lo: float, hi: float) -> np.ndarray:
    """(m,) float64 log-uniform on [lo, hi]."""
    u = rng.random(m)
    if lo == hi:
        return np.full(m, lo)
    a = float(P.log2(np.array([lo]))[0])
    b = float(P.log2(np.array([hi]))[0])
    u *= b - a
    u += a
    return P.exp2(u)


def _constant(rng, m, p):
    return np.full(m, p["value"], dtype=np.float64)


def _uniform(rng, m, p):
    u = rng.random(m)
    u *= p["max"] - p["min"]
    u += p["min"]
    return u


def _loguni(rng, m, p):
    return _log_uniform(rng, m, p["min"], p["max"])


def _heavy(rng, m, p):
    """Body log-uniform on [min, max]; a share ``tail`` from a Pareto(alpha) on [max, tail_max],
    truncated (inverse CDF): r = max * (1 - u (1 - (max/tail_max)^alpha))^(-1/alpha)."""
    r = _log_uniform(rng, m, p["min"], p["max"])
    far = rng.random(m) < p["tail"]
    k = int(np.count_nonzero(far))
    if k:
        xm, hi, a = p["max"], p["tail_max"], p["alpha"]
        cut = 1.0 - float(P.pow_(np.array([xm / hi]), a)[0])
        u = rng.random(k)
        base = 1.0 - u * cut  # in ((xm/hi)^a, 1]
        t = xm * P.pow_(base, -1.0 / a)
        r[far] = np.minimum(t, hi)  # rounding must not step past the truncation
    return r


def _log_power(rng, m, p):
    """r = min * (max/min)**(u**power), u uniform on [0, 1): power 1 is log-uniform; larger powers pile
    the radii near min and leave a long thin tail up to max."""
    u = rng.random(m)
    if p["min"] == p["max"]:
        return np.full(m, p["min"])
    a = float(P.log2(np.array([p["min"]]))[0])
    b = float(P.log2(np.array([p["max"]]))[0])
    t = P.pow_(np.maximum(u, 2.0**-53), p["power"])  # (u near 0 gives min either way)
    t *= b - a
    t += a
    return np.clip(P.exp2(t), p["min"], p["max"])  # rounding must not step past either end


def _check_min_max(p: dict, prefix: str, lo_key="min", hi_key="max") -> None:
    if p[lo_key] > p[hi_key]:
        raise SceneError(f"must be <= {hi_key} ({p[hi_key]:g}), got {p[lo_key]:g}", f"{prefix}.{lo_key}")


def _check_heavy(p: dict, prefix: str) -> None:
    _check_min_max(p, prefix)
    if p["tail_max"] < p["max"]:
        raise SceneError(f"must be >= max ({p['max']:g}), got {p['tail_max']:g}", f"{prefix}.tail_max")


def _classes(rng, m, p):
    """Three classes of object, each with its own fixed distance: a share ``medium_share`` at ``medium``, a
    share ``large_share`` at ``large``, the rest at ``small``."""
    u = rng.random(m)
    r = np.full(m, p["small"], dtype=np.float64)
    r[u < p["medium_share"] + p["large_share"]] = p["medium"]
    r[u < p["large_share"]] = p["large"]
    return r


def _check_classes(p: dict, prefix: str) -> None:
    if p["medium_share"] + p["large_share"] > 1.0:
        raise SceneError(f"medium_share + large_share must be at most 1, got {p['medium_share'] + p['large_share']:g}",
                         f"{prefix}.large_share")


_POS = dict(lo=0.0, lo_open=True)

RADIUS_MODELS: dict[str, RadiusModel] = {
    "constant": RadiusModel(
        "constant",
        "every object has the same view radius",
        {"value": Param("float", lo=0.0, doc="the radius, world units")},
        _constant,
        lambda p: p["value"],
    ),
    "uniform": RadiusModel(
        "uniform",
        "radius uniform between min and max",
        {"min": Param("float", lo=0.0, doc="world units"), "max": Param("float", lo=0.0, doc="world units")},
        _uniform,
        lambda p: p["max"],
        _check_min_max,
    ),
    "log-uniform": RadiusModel(
        "log-uniform",
        "log of the radius uniform between log(min) and log(max): as many objects per octave",
        {"min": Param("float", **_POS, doc="world units, > 0"), "max": Param("float", **_POS, doc="world units")},
        _loguni,
        lambda p: p["max"],
        _check_min_max,
    ),
    "heavy-tailed": RadiusModel(
        "heavy-tailed",
        "most objects visible only close up (log-uniform min..max), a share `tail` from far away "
        "(truncated Pareto max..tail_max with exponent alpha): the realistic case",
        {
            "min": Param("float", 5.0, **_POS, doc="smallest radius of the body, world units"),
            "max": Param("float", 30.0, **_POS, doc="largest radius of the body, world units"),
            "tail": Param("float", 0.02, lo=0.0, hi=1.0, doc="share of objects in the tail"),
            "tail_max": Param("float", 1000.0, **_POS, doc="largest radius of the tail, world units"),
            "alpha": Param("float", 1.0, **_POS, doc="Pareto exponent of the tail (smaller: heavier)"),
        },
        _heavy,
        lambda p: max(p["max"], p["tail_max"]) if p["tail"] > 0 else p["max"],
        _check_heavy,
    ),
    "classes": RadiusModel(
        "classes",
        "three classes of object, each seen from its own fixed distance (a game server's per-class net cull "
        "distances: pickups, characters, vehicles)",
        {
            "small": Param("float", 15.0, lo=0.0, doc="distance of the commonest class (pickups), world units"),
            "medium": Param("float", 150.0, lo=0.0, doc="distance of the middle class (characters), world units"),
            "large": Param("float", 500.0, lo=0.0, doc="distance of the rarest class (vehicles), world units"),
            "medium_share": Param("float", 0.3, lo=0.0, hi=1.0, doc="share of objects in the middle class"),
            "large_share": Param("float", 0.05, lo=0.0, hi=1.0, doc="share of objects in the rarest class"),
        },
        _classes,
        lambda p: max(p["small"], p["medium"] if p["medium_share"] > 0 else 0.0,
                      p["large"] if p["large_share"] > 0 else 0.0),
        _check_classes,
    ),
    "log-power": RadiusModel(
        "log-power",
        "r = min * (max/min)**(u**power), u uniform: power 1 is log-uniform, larger powers a heavier tail "
        "(the defaults: a tenth of the radii above 150, most blocks of 64 objects holding one large radius)",
        {
            "min": Param("float", 5.0, **_POS, doc="smallest radius, world units"),
            "max": Param("float", 1000.0, **_POS, doc="largest radius, world units"),
            "power": Param("float", 4.0, hi=16.0, **_POS,
                           doc="exponent of u (1: log-uniform; larger: most radii near min)"),
        },
        _log_power,
        lambda p: p["max"],
        _check_min_max,
    ),
}

DEFAULT_RADIUS: dict = {"model": "heavy-tailed"}


def check_radius_spec(spec, prefix: str = "radius") -> dict:
    """Validate a radius-model spec (``{"model": ..., params...}``); return it with defaults filled."""
    if not isinstance(spec, Mapping):
        raise SceneError(f"must be a table with a 'model' field, got {show(spec)}", prefix)
    if "model" not in spec:
        known = ["model", *dict.fromkeys(k for m in RADIUS_MODELS.values() for k in m.params)]
        for key in spec:  # a misspelt 'model' is named as the unknown field it is, not as 'model' missing
            if key not in known:
                raise SceneError(f"unknown field in {prefix} (known fields: {', '.join(known)})", f"{prefix}.{key}")
        raise SceneError(f"missing (one of {', '.join(RADIUS_MODELS)})", f"{prefix}.model")
    name = spec["model"]
    if not isinstance(name, str) or name not in RADIUS_MODELS:
        raise SceneError(f"unknown radius model {show(name)}; choose from {', '.join(RADIUS_MODELS)}", f"{prefix}.model")
    model = RADIUS_MODELS[name]
    rest = {k: v for k, v in spec.items() if k != "model"}
    p = validate_table(rest, model.params, prefix, what=f"radius model {name!r}")
    model.check(p, prefix)
    return {"model": name, **p}


def sample_radii(rng: np.random.Generator, m: int, spec: dict) -> np.ndarray:
    """(m,) float64 radii, world units, from a checked spec."""
    model = RADIUS_MODELS[spec["model"]]
    return model.sample(rng, m, {k: v for k, v in spec.items() if k != "model"})


def radius_upper(spec: dict) -> float:
    """The largest radius a checked spec can draw, world units."""
    model = RADIUS_MODELS[spec["model"]]
    return float(model.upper({k: v for k, v in spec.items() if k != "model"}))
