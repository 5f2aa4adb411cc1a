"""Benchmark workloads: a generated scene plus the camera points the queries are made from."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Workload", "make_workload", "camera_points"]


@dataclass
class Workload:
    """One scene to measure on.

    name : "<scene>-<N>" label
    centres : (N, 3) float64, world units
    radii : (N,) float64, world units
    points : (Q, 3) float64 camera positions, half in dense regions, half along a fly path
    world : edge of the world box, world units
    """

    name: str
    scene: str
    n: int
    centres: np.ndarray
    radii: np.ndarray
    points: np.ndarray
    world: float


def camera_points(centres: np.ndarray, world: float, q: int, seed: int) -> np.ndarray:
    """(q, 3) float64 camera positions: half at objects' positions (so density-weighted, i.e. through
    the dense regions) jittered by a few units, half along a smooth random fly path across the world."""
    rng = np.random.default_rng(seed + 7919)
    half = q // 2
    if len(centres):
        dense = centres[rng.integers(0, len(centres), half)] + rng.normal(0.0, 5.0, (half, 3))
    else:
        dense = rng.uniform(-world / 2, world / 2, (half, 3))
    m = q - half
    keys = rng.uniform(-0.45 * world, 0.45 * world, (6, 3))
    t = np.linspace(0.0, len(keys) - 1.0, m)
    i = np.minimum(t.astype(int), len(keys) - 2)
    f = (t - i)[:, None]
    s = f * f * (3 - 2 * f)  # smoothstep between keyframes
    path = keys[i] * (1 - s) + keys[i + 1] * s
    return np.ascontiguousarray(np.concatenate([dense, path]))


def make_workload(scene: str, n: int, seed: int = 0, queries: int = 300, world: float = 10_000.0) -> Workload:
    """Generate ``scene`` (a generator name from :data:`scenes.GENERATORS`) with ``n`` objects and the
    default heavy-tailed radii (most 5..30, a few up to 1000) in a world ``world`` wide."""
    from scenes import generate_scene

    sc = generate_scene(scene, n, seed=seed, world=world)
    pts = camera_points(sc.centres, world, queries, seed)
    return Workload(f"{scene}-{_short(n)}", scene, n, sc.centres, sc.radii, pts, world)


def _short(n: int) -> str:
    for div, suffix in ((1_000_000, "m"), (1_000, "k")):
        if n >= div and n % div == 0:
            return f"{n // div}{suffix}"
    return str(n)
