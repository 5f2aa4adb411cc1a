"""The linear scan's float32 prefilter never changes the answer: objects on the sphere's surface to the
last bit, at every magnitude of the domain, tiny and huge radii, and the multi-threaded path (N large
enough to run on every core, hits in many chunks) after updates. The contract suite and the state
machine cover the rest of the contract."""

from __future__ import annotations

import numpy as np
import pytest

from viewer.index import brute_query
from viewer.index.scan import PARALLEL_FROM, LinearScan


def _edge_radii(centres: np.ndarray, point: np.ndarray) -> np.ndarray:
    """Radii that put ``point`` exactly on, one ulp inside and one ulp outside each sphere, as the
    float64 predicate computes it (cycling through the three)."""
    d = point - centres
    d2 = (d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]) + d[:, 2] * d[:, 2]
    r = np.sqrt(d2)
    r[0::3] = np.nextafter(r[0::3], 0.0)
    r[1::3] = np.nextafter(r[1::3], np.inf)
    return r


@pytest.mark.parametrize("scale", [1e-300, 1e-150, 1e-30, 1e-6, 1.0, 1e3, 1e8, 1e15, 1e25, 2.0**98])
def test_surfaces_at_every_magnitude(scale, rng):
    """One surface object per block of 64 (the rest hold no query point), so a block is rechecked only
    if the prefilter passes that object itself."""
    n = 64 * 300
    centres = rng.uniform(-1.0, 1.0, (n, 3)) * scale
    point = rng.uniform(-1.0, 1.0, 3) * scale
    radii = np.zeros(n)
    edge = np.arange(0, n, 64)
    radii[edge] = _edge_radii(centres[edge], point)
    ix = LinearScan(centres, radii)
    want = brute_query(centres, radii, point)
    assert want.size > 0
    if scale >= 1e-150:  # (below, every squared distance underflows to 0: every object is visible)
        assert want.size < edge.size  # the surfaces split both ways
    assert np.array_equal(np.sort(ix.query(point)), want)
    for q in (point, np.nextafter(point, np.inf), np.nextafter(point, -np.inf), point * (1 + 2.0**-30)):
        assert np.array_equal(np.sort(ix.query(q)), brute_query(centres, radii, q))


def test_small_spheres_far_from_the_origin(rng):
    """float32 rounds a coordinate near 1e6 by up to 1/32: more than the radii here."""
    n = 4000
    centres = 1e6 + rng.uniform(0.0, 1.0, (n, 3))
    radii = rng.uniform(0.0, 0.05, n)
    ix = LinearScan(centres, radii)
    for p in centres[:50] + rng.normal(0.0, 0.02, (50, 3)):
        assert np.array_equal(np.sort(ix.query(p)), brute_query(centres, radii, p))


def test_mixed_magnitudes_and_far_points(rng):
    """Objects and points beyond the prefilter's float32 range are answered by the exact path."""
    n = 500
    mags = 10.0 ** rng.uniform(-300, 30, (n, 1))
    centres = rng.uniform(-1, 1, (n, 3)) * mags
    radii = 10.0 ** rng.uniform(-300, 30, n)
    ix = LinearScan(centres, radii)
    pts = np.concatenate([centres[:40], rng.uniform(-1, 1, (40, 3)) * 10.0 ** rng.uniform(-300, 30, (40, 1))])
    pts = np.concatenate([pts, [[2.0**99, -(2.0**99), 2.0**99], [0.0, 0.0, 0.0], [5e-324, 0.0, -5e-324]]])
    for p in pts:
        assert np.array_equal(np.sort(ix.query(p)), brute_query(centres, radii, p))


def test_parallel_path_after_updates(rng):
    n = PARALLEL_FROM + 5000
    centres = rng.uniform(-1000, 1000, (n, 3))
    radii = rng.uniform(1, 80, n)
    ix = LinearScan(centres, radii)
    assert ix.threads >= 1
    ids = np.arange(n)
    live = np.ones(n, dtype=bool)
    for i in rng.choice(n, 3000, replace=False):
        ix.remove(int(i))
        live[i] = False
    movers = rng.choice(np.flatnonzero(live), 20_000, replace=False)
    centres[movers] += rng.normal(0, 30, (movers.size, 3))
    radii[movers] = rng.uniform(1, 200, movers.size)
    ix.move_many(movers, centres[movers], radii[movers])
    extra_c = rng.uniform(-1000, 1000, (4000, 3))
    extra_r = rng.uniform(1, 80, 4000)
    new = [ix.insert(c, r) for c, r in zip(extra_c, extra_r)]
    all_c = np.concatenate([centres[live], extra_c])
    all_r = np.concatenate([radii[live], extra_r])
    all_ids = np.concatenate([ids[live], new])
    assert len(ix) == all_ids.size >= PARALLEL_FROM
    out = np.empty(3, dtype=np.int64)
    for p in np.concatenate([all_c[:30], rng.uniform(-1000, 1000, (30, 3))]):
        want = np.sort(all_ids[brute_query(all_c, all_r, p)])
        assert np.array_equal(np.sort(ix.query(p)), want)
        assert ix.stats.visible == want.size and ix.stats.candidates == len(ix)
        if want.size > out.size:  # query_into never truncates silently
            with pytest.raises(ValueError) as exc:
                ix.query_into(p, out)
            assert exc.value.needed == want.size


def test_read_floor_reads_every_live_slot():
    ix = LinearScan(np.ones((1000, 3)), np.full(1000, 2.0))
    assert np.isfinite(ix.read_floor())
    assert LinearScan(np.zeros((0, 3)), np.zeros(0)).read_floor() == 0.0
