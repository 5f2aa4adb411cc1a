"""The bounds every scene obeys, whatever built it (a recipe, a ``.npz`` file, an importer), and the
world box: :func:`check_box` (a box is finite, not empty, inside the numeric domain) and :func:`fit_box`
(the one box fitter).

The lowest layer of the scene rules: :mod:`.recipe` (recipe tables) and :mod:`.construct` (arrays)
both read their limits here, so neither has to import the other's module for a number.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

from viewer.domain import COORD_LIMIT
from viewer.terminal.text import clip

from .errors import SceneError

__all__ = ["MAX_N", "MAX_PERIOD", "MAX_SPEED", "MAX_WORLD", "MIN_ORBIT", "MIN_PERIOD", "MIN_WORLD", "SEED_LIMIT",
           "check_box", "check_name", "fit_box", "stem_name"]

MAX_N = 500_000_000  # objects in one scene
MAX_SPEED = 1.5e12  # world units per second: a mover's speed (a recipe's [motion] speed <= 1e12, times 1.5)
MIN_ORBIT = 1e-6  # world units: a smaller orbit would turn faster than float64 can follow
MIN_PERIOD = 1e-6  # seconds: a movers' radius period; 2 pi t / period stays finite for any t up to 1e290 s
MAX_PERIOD = 1e9  # seconds: the longest radius period
MIN_WORLD = 1e-6  # world units: the smallest world box (camera paths and steps are fractions of it)
MAX_WORLD = 1e15  # world units: the largest world box a recipe asks for (a file's may reach the domain's edge)
SEED_LIMIT = 2**63  # a motion seed is stored as a 64-bit integer and fed to 64-bit streams


def check_box(origin: np.ndarray, world: float, field: str = "world") -> None:
    """The world box (``origin`` (3,) float64, edge ``world``, world units) is finite, non-empty and inside
    the numeric domain (a moving object or a camera anywhere in it stays answerable); :class:`SceneError`
    naming ``field`` otherwise."""
    if not (math.isfinite(world) and world >= MIN_WORLD):
        raise SceneError(f"must be finite and >= {MIN_WORLD:g} world units, got {world!r}", field)
    reach = float(np.max(np.abs(origin))) + world / 2.0
    if not reach <= COORD_LIMIT:
        raise SceneError(
            f"the world box (edge {world:.6g} around {np.asarray(origin).tolist()}) reaches {reach:.4g} from 0, "
            f"outside the numeric domain (|coordinate| <= 2**100 = {COORD_LIMIT:.4g})", field)


def check_name(name: str, field: str = "name") -> None:
    """A scene's name (a ``str``) holds no control characters: every command prints it, so a line break, an
    ESC sequence or a NUL in it would split or drive the terminal; :class:`SceneError` naming ``field``."""
    if not name.isprintable():
        raise SceneError(f"must hold no control characters (line breaks, ESC, NUL, ...), got {clip(name, 60)!r}", field)


def stem_name(path) -> str:
    """The default name of a scene read from ``path``: the file's stem, with each byte that is not UTF-8 and
    each control character as U+FFFD, so that a file may be named anything its file system allows (the
    name is not the user's to fix: :func:`check_name` would refuse it)."""
    stem = os.fsencode(Path(path).stem).decode("utf-8", "replace")
    return "".join(ch if ch.isprintable() else "\ufffd" for ch in stem)


def fit_box(centres: np.ndarray, radii: np.ndarray | None = None,
            origin: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """The smallest cube (``origin`` (3,) float64, edge ``world``, world units) around ``centres`` ((N, 3)
    float64, finite, N >= 1) whose corners ``origin -+ world / 2``, computed as :attr:`Scene.bounds`
    computes them, hold every centre exactly: the edge is rounded up, never down, so no edge point is
    lost to rounding. ``origin`` given: the box is centred there; None: halfway between the extremes.
    Coincident centres get a box of edge ``max(1, 2 * max(radii))`` (``radii`` (N,) float64, or None:
    edge 1); no box is smaller than :data:`MIN_WORLD`."""
    lo, hi = centres.min(axis=0), centres.max(axis=0)
    if origin is None:
        origin = lo / 2 + hi / 2  # halves first: no overflow, and lo <= origin <= hi
    world = 2.0 * float(max(np.max(hi - origin), np.max(origin - lo)))
    if world == 0.0:
        r = 0.0 if radii is None or radii.size == 0 else float(radii.max())
        world = max(1.0, 2.0 * r)
    world = max(world, MIN_WORLD)
    step = world * 2.0**-52
    while True:
        h = world / 2.0
        if ((origin - h) <= lo).all() and ((origin + h) >= hi).all():
            return origin, world
        world += step  # a few ulps at most; each miss doubles the step
        step *= 2.0
