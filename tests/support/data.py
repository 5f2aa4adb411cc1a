"""Small seeded point sets for the index tests (the scene generators are tested on their own)."""

from __future__ import annotations

import numpy as np


def heavy_tailed_radii(rng, n, lo=5.0, hi=30.0, tail=0.02, tail_hi=1000.0):
    r = np.exp(rng.uniform(np.log(lo), np.log(hi), n))
    far = rng.random(n) < tail
    r[far] = np.exp(rng.uniform(np.log(hi), np.log(tail_hi), far.sum()))
    return r


def uniform(rng, n, world=1000.0):
    c = rng.uniform(-world / 2, world / 2, (n, 3))
    return c, heavy_tailed_radii(rng, n, 2.0, 20.0, 0.02, 300.0)


def clustered(rng, n, world=1000.0, k=8):
    heads = rng.uniform(-world / 2, world / 2, (k, 3))
    which = rng.integers(0, k, n)
    spread = rng.uniform(5, 40, k)[which]
    c = heads[which] + rng.normal(0, 1, (n, 3)) * spread[:, None]
    return c, heavy_tailed_radii(rng, n, 1.0, 15.0, 0.02, 200.0)


def diagonal(rng, n, world=1000.0):
    t = rng.uniform(-world / 2, world / 2, n)
    c = t[:, None] + rng.normal(0, 2.0, (n, 3))
    return c, heavy_tailed_radii(rng, n, 1.0, 20.0, 0.02, 200.0)


DISTRIBUTIONS = {"uniform": uniform, "clustered": clustered, "diagonal": diagonal}


def query_points(rng, centres, m):
    """Half the points near objects (inside dense regions), half anywhere in the box."""
    lo, hi = centres.min(0) - 50, centres.max(0) + 50
    near = centres[rng.integers(0, len(centres), m // 2)] + rng.normal(0, 10, (m // 2, 3))
    anywhere = rng.uniform(lo, hi, (m - m // 2, 3))
    return np.concatenate([near, anywhere])
