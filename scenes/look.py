"""How objects look: drawn size and colour, from a recipe's ``[look]`` table.

``sizes`` (N,) float32 are half-extents in world units; ``colours`` (N, 4) uint8 RGBA. Colours are
chosen by cluster (categorical palette), by view radius or height (a colour ramp), one constant
colour, or at random from the palette.

Two fields say how the viewer draws the whole scene (:data:`SCENE_LOOK_PARAMS`; a :class:`Scene` carries
them as ``style`` and ``sky``, a scene file in its ``look`` entry): ``style`` "objects" draws lit spheres or
cubes in fog, "stars" unlit round point sprites whose brightness is the star's apparent magnitude from the
camera (``shaders/stars.glsl``); ``sky`` is the background and fog colour (default :data:`DEFAULT_SKY`).
"""

from __future__ import annotations

import numpy as np

from . import _portable as P
from ._schema import Param, check_colour, show, validate_table
from .errors import SceneError

__all__ = [
    "DEFAULT_SKY", "LOOK_PARAMS", "PALETTES", "SCENE_LOOK_PARAMS", "SIZE_MODELS", "STYLES", "check_look",
    "check_scene_look", "default_look", "make_colours", "make_sizes", "sky_colour",
]

PALETTES: dict[str, list[str]] = {
    # categorical (colour_by = cluster / random)
    "bright": ["#e6194b", "#3cb44b", "#ffe119", "#4363d8", "#f58231", "#911eb4", "#46f0f0", "#f032e6",
               "#bcf60c", "#fabebe", "#008080", "#e6beff", "#9a6324", "#fffac8", "#800000", "#aaffc3"],
    "pastel": ["#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69", "#fccde5"],
    # ramps (colour_by = radius / height), low to high
    "viridis": ["#440154", "#482878", "#3e4989", "#31688e", "#26828e", "#1f9e89", "#35b779", "#6ece58", "#b5de2b", "#fde725"],
    "heat": ["#000004", "#420a68", "#932667", "#dd513a", "#fca50a", "#fcffa4"],
    "grey": ["#404040", "#f0f0f0"],
}

SIZE_MODELS: dict[str, dict[str, Param]] = {
    "constant": {"value": Param("float", lo=0.0, doc="half-extent, world units")},
    "proportional": {
        "factor": Param("float", 0.05, lo=0.0, doc="size = radius * factor, then clamped to min..max"),
        "min": Param("float", 0.25, lo=0.0, doc="world units"),
        "max": Param("float", 25.0, lo=0.0, doc="world units"),
    },
    "log-uniform": {
        "min": Param("float", lo=0.0, lo_open=True, doc="world units"),
        "max": Param("float", lo=0.0, lo_open=True, doc="world units"),
    },
}

#: How a whole scene is drawn (the values of ``[look] style``).
STYLES: tuple[str, ...] = ("objects", "stars")

#: The background (clear and fog) colour of each style when the look names no ``sky``: RGB floats 0..1.
DEFAULT_SKY: dict[str, tuple[float, float, float]] = {"objects": (0.62, 0.70, 0.80), "stars": (0.0, 0.0, 0.0)}

#: The ``[look]`` fields about the whole scene rather than each object: a scene keeps them (``Scene.style``,
#: ``Scene.sky``) and a scene file stores them (its ``look`` entry), so the viewer draws it as the recipe said.
SCENE_LOOK_PARAMS: dict[str, Param] = {
    "style": Param(
        "str", "objects", choices=STYLES,
        doc="objects: lit spheres / cubes in fog; stars: unlit point sprites coloured by the objects' colours, "
            "brightness from each star's apparent magnitude (its view distance is where it fades to the limit)",
    ),
    "sky": Param("colour", None, doc="the background and fog colour (default: grey-blue; black for stars)"),
}

LOOK_PARAMS: dict[str, Param] = {
    "size": Param("table", {"model": "proportional"}, doc="size model: {model = constant|proportional|log-uniform, ...}"),
    "colour_by": Param(
        "str", "auto", choices=("auto", "cluster", "radius", "height", "constant", "random"),
        doc="auto: cluster when the scene has clusters, else radius",
    ),
    "palette": Param("palette", "auto", choices=("auto", *PALETTES), doc="a palette name or a list of '#rrggbb'"),
    "colour": Param("colour", "#d0d0d0", doc="the colour for colour_by = constant"),
    "background": Param("colour", "#8c8c8c", doc="the colour of objects in no cluster (category -1)"),
    "alpha": Param("int", 255, lo=0, hi=255, doc="opacity 0..255"),
    **SCENE_LOOK_PARAMS,
}


def check_scene_look(look, prefix: str = "look") -> dict:
    """Validate the scene-wide look fields (:data:`SCENE_LOOK_PARAMS`: ``style``, ``sky``); return them with
    defaults filled."""
    return validate_table({} if look is None else look, SCENE_LOOK_PARAMS, prefix, what="the scene's look")


def sky_colour(style: str, sky: str | None) -> tuple[float, float, float]:
    """The background colour, RGB floats 0..1, of a scene drawn in ``style`` with ``sky`` ("#rrggbb" or
    None: the style's :data:`DEFAULT_SKY`)."""
    if sky is None:
        return DEFAULT_SKY[style]
    return tuple(c / 255.0 for c in check_colour(sky, "look.sky"))


def check_look(look, prefix: str = "look") -> dict:
    """Validate a ``[look]`` table; return it with defaults filled (``size`` fully spelled out)."""
    out = validate_table({} if look is None else look, LOOK_PARAMS, prefix, what="look")
    size = out["size"]
    model = size.get("model")
    if "model" not in size:
        known = ["model", *dict.fromkeys(k for m in SIZE_MODELS.values() for k in m)]
        for key in size:  # a misspelt 'model' is named as the unknown field it is
            if key not in known:
                raise SceneError(f"unknown field in {prefix}.size (known fields: {', '.join(known)})",
                                 f"{prefix}.size.{key}")
        raise SceneError(f"missing (one of {', '.join(SIZE_MODELS)})", f"{prefix}.size.model")
    if model not in SIZE_MODELS:
        raise SceneError(f"unknown size model {show(model)}; choose from {', '.join(SIZE_MODELS)}", f"{prefix}.size.model")
    p = validate_table({k: v for k, v in size.items() if k != "model"}, SIZE_MODELS[model], f"{prefix}.size",
                       what=f"size model {model!r}")
    if "min" in p and p["min"] > p["max"]:
        raise SceneError(f"must be <= max ({p['max']:g}), got {p['min']:g}", f"{prefix}.size.min")
    out["size"] = {"model": model, **p}
    return out


def make_sizes(rng: np.random.Generator, radii: np.ndarray, look: dict) -> np.ndarray:
    """(N,) float32 half-extents, world units, from ``radii`` (N,) float64 and a checked look."""
    s = look["size"]
    if s["model"] == "constant":
        return np.full(radii.shape, s["value"], dtype=np.float32)
    if s["model"] == "proportional":
        return np.clip(radii * s["factor"], s["min"], s["max"]).astype(np.float32)
    lo, hi = P.log2(np.array([s["min"], s["max"]]))
    return P.exp2(lo + rng.random(radii.size) * (hi - lo)).astype(np.float32)


def _palette(look: dict, categorical: bool) -> np.ndarray:
    p = look["palette"]
    if p == "auto":
        p = "bright" if categorical else "viridis"
    names = PALETTES[p] if isinstance(p, str) else p
    return np.array([check_colour(c, "look.palette") for c in names], dtype=np.float64)


def _ramp(stops: np.ndarray, t: np.ndarray) -> np.ndarray:
    """(M, 3) float64 colours: ``t`` (M,) in [0, 1] along the piecewise-linear ramp ``stops`` (S, 3)."""
    if len(stops) == 1:
        return np.repeat(stops, t.size, axis=0)
    x = t * (len(stops) - 1)
    i = np.minimum(np.floor(x).astype(np.int64), len(stops) - 2)
    f = (x - i)[:, None]
    return stops[i] * (1.0 - f) + stops[i + 1] * f


def _unit(v: np.ndarray, lo: float, hi: float) -> np.ndarray:
    if hi <= lo:
        return np.zeros(v.size)
    return np.clip((v - lo) / (hi - lo), 0.0, 1.0)


def make_colours(
    rng: np.random.Generator, centres: np.ndarray, radii: np.ndarray, category: np.ndarray, look: dict,
    chunk: int = 1 << 18,
) -> np.ndarray:
    """(N, 4) uint8 RGBA from the scene's arrays and a checked look (worked through in chunks)."""
    n = radii.size
    out = np.empty((n, 4), dtype=np.uint8)
    out[:, 3] = look["alpha"]
    by = look["colour_by"]
    if by == "auto":
        by = "cluster" if n and category.max(initial=-1) >= 0 else "radius"
    if by == "constant":
        out[:, :3] = check_colour(look["colour"], "look.colour")
        return out
    categorical = by in ("cluster", "random")
    pal = _palette(look, categorical)
    bg = np.array(check_colour(look["background"], "look.background"), dtype=np.float64)
    if by == "radius" and n:
        top = float(radii.max())
        low = float(np.min(radii, where=radii > 0, initial=top)) if top > 0 else 1.0
        lo, hi = (float(v) for v in P.log2(np.array([low, max(top, low)])))  # log2 is monotonic
    elif by == "height" and n:
        lo, hi = float(centres[:, 2].min()), float(centres[:, 2].max())
    for a in range(0, n, chunk):
        b = min(n, a + chunk)
        if by == "cluster":
            c = category[a:b]
            rgb = pal[np.maximum(c, 0) % len(pal)]
            rgb[c < 0] = bg
        elif by == "random":
            rgb = pal[rng.integers(0, len(pal), b - a)]
        elif by == "radius":
            r = np.maximum(radii[a:b], np.finfo(np.float64).tiny)
            rgb = _ramp(pal, _unit(P.log2(r), lo, hi))
        else:  # height
            rgb = _ramp(pal, _unit(centres[a:b, 2], lo, hi))
        out[a:b, :3] = np.rint(np.clip(rgb, 0.0, 255.0)).astype(np.uint8)
    return out


def default_look() -> dict:
    """The look used when a recipe or a data file gives none."""
    return check_look(None)

