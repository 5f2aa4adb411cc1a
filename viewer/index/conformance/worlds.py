"""Seeded worlds and query points the kit's properties draw (also the project's index tests' data)."""

from __future__ import annotations

import numpy as np


def heavy_tailed_radii(rng, n, lo=5.0, hi=30.0, tail=0.02, tail_hi=1000.0) -> np.ndarray:
    """(n,) float64 radii log-uniform in [lo, hi], a share ``tail`` of them log-uniform up to ``tail_hi``."""
    r = np.exp(rng.uniform(np.log(lo), np.log(hi), n))
    far = rng.random(n) < tail
    r[far] = np.exp(rng.uniform(np.log(hi), np.log(tail_hi), far.sum()))
    return r


def uniform(rng, n, world=1000.0):
    """(centres (n, 3), radii (n,)) spread evenly over a cube of edge ``world``."""
    c = rng.uniform(-world / 2, world / 2, (n, 3))
    return c, heavy_tailed_radii(rng, n, 2.0, 20.0, 0.02, 300.0)


def clustered(rng, n, world=1000.0, k=8):
    """(centres, radii) in ``k`` Gaussian clusters of different spreads."""
    heads = rng.uniform(-world / 2, world / 2, (k, 3))
    which = rng.integers(0, k, n)
    spread = rng.uniform(5, 40, k)[which]
    c = heads[which] + rng.normal(0, 1, (n, 3)) * spread[:, None]
    return c, heavy_tailed_radii(rng, n, 1.0, 15.0, 0.02, 200.0)


def diagonal(rng, n, world=1000.0):
    """(centres, radii) along the cube's diagonal (every axis-aligned split cuts them badly)."""
    t = rng.uniform(-world / 2, world / 2, n)
    c = t[:, None] + rng.normal(0, 2.0, (n, 3))
    return c, heavy_tailed_radii(rng, n, 1.0, 20.0, 0.02, 200.0)


DISTRIBUTIONS = {"uniform": uniform, "clustered": clustered, "diagonal": diagonal}


def query_points(rng, centres, m) -> np.ndarray:
    """(m, 3) points: half near objects (inside dense regions), half anywhere in the box around them."""
    lo, hi = centres.min(0) - 50, centres.max(0) + 50
    near = centres[rng.integers(0, len(centres), m // 2)] + rng.normal(0, 10, (m // 2, 3))
    anywhere = rng.uniform(lo, hi, (m - m // 2, 3))
    return np.concatenate([near, anywhere])


def morton_order(points) -> np.ndarray:
    """Indices sorting ``points`` (K, 3) along a Z-order curve (a batch a view manager would send)."""
    lo, hi = points.min(0), points.max(0)
    q = ((points - lo) / np.maximum(hi - lo, 1e-300) * 1023).astype(np.int64)
    key = np.zeros(len(points), dtype=np.int64)
    for bit in range(10):
        for a in range(3):
            key |= ((q[:, a] >> bit) & 1) << (3 * bit + a)
    return np.argsort(key, kind="stable")
