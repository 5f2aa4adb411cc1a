"""The prefilters of the linear scan (16-bit lanes) and of the reference loop ``loop32`` (float32 lanes)
never change the answer: objects on the sphere's surface to the last bit, at every magnitude of the domain,
tiny and huge radii, and the multi-threaded path (N large enough to run on every core, hits in many
chunks) after updates. The contract suite and the state machine cover the rest of the contract."""

from __future__ import annotations

import numpy as np
import pytest

from viewer.index import QueryOverflow, brute_query
from viewer.index import loop32, scan
from viewer.index.loop32 import Loop32
from viewer.index.scan import LinearScan

LINEAR = [LinearScan, Loop32]  # both exact by a float64 recheck of what a conservative prefilter passes


def _edge_radii(centres: np.ndarray, point: np.ndarray) -> np.ndarray:
    """Radii that put ``point`` exactly on, one ulp inside and one ulp outside each sphere, as the
    float64 predicate computes it (cycling through the three)."""
    d = point - centres
    d2 = (d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]) + d[:, 2] * d[:, 2]
    r = np.sqrt(d2)
    r[0::3] = np.nextafter(r[0::3], 0.0)
    r[1::3] = np.nextafter(r[1::3], np.inf)
    return r


@pytest.mark.parametrize("cls", LINEAR)
@pytest.mark.parametrize("scale", [1e-300, 1e-150, 1e-30, 1e-6, 1.0, 1e3, 1e8, 1e15, 1e25, 2.0**98])
def test_surfaces_at_every_magnitude(scale, cls, rng):
    """One surface object in 64 (the rest hold no query point, and a radius 0 of their own octave, so the
    scan stores the surface objects in blocks of their own): a block is rechecked only if the prefilter
    passes one of them itself."""
    n = 64 * 300
    centres = rng.uniform(-1.0, 1.0, (n, 3)) * scale
    point = rng.uniform(-1.0, 1.0, 3) * scale
    radii = np.zeros(n)
    edge = np.arange(0, n, 64)
    radii[edge] = _edge_radii(centres[edge], point)
    ix = cls(centres, radii)
    want = brute_query(centres, radii, point)
    assert want.size > 0
    if scale >= 1e-150:  # (below, every squared distance underflows to 0: every object is visible)
        assert want.size < edge.size  # the surfaces split both ways
    assert np.array_equal(np.sort(ix.query(point)), want)
    for q in (point, np.nextafter(point, np.inf), np.nextafter(point, -np.inf), point * (1 + 2.0**-30)):
        assert np.array_equal(np.sort(ix.query(q)), brute_query(centres, radii, q))


@pytest.mark.parametrize("cls", LINEAR)
@pytest.mark.parametrize("scale", [1e-140, 1.0, 1e4, 1e20])
def test_every_object_on_its_surface(scale, cls, rng):
    """Every object on, one ulp inside or one ulp outside its sphere, radii over ten octaves: a block's
    largest radius (the scan's first pass) and each lane's own (its second) both meet surface lanes."""
    n = 5000
    centres = rng.uniform(-1.0, 1.0, (n, 3)) * scale * 2.0 ** rng.uniform(-10, 0, (n, 1))
    point = rng.uniform(-1.0, 1.0, 3) * scale * 2.0**-10
    radii = _edge_radii(centres, point)
    ix = cls(centres, radii)
    want = brute_query(centres, radii, point)
    assert 0 < want.size < n
    assert np.array_equal(np.sort(ix.query(point)), want)


@pytest.mark.parametrize("cls", LINEAR)
def test_small_spheres_far_from_the_origin(cls, rng):
    """Objects far from the origin with radii much smaller than their coordinates' float32 rounding (1/32)."""
    n = 4000
    centres = 1e6 + rng.uniform(0.0, 1.0, (n, 3))
    radii = rng.uniform(0.0, 0.05, n)
    ix = cls(centres, radii)
    for p in centres[:50] + rng.normal(0.0, 0.02, (50, 3)):
        assert np.array_equal(np.sort(ix.query(p)), brute_query(centres, radii, p))


@pytest.mark.parametrize("cls", LINEAR)
def test_mixed_magnitudes_and_far_points(cls, rng):
    """Centres and radii over 330 decades, points beyond every frame's reach: the exact path answers."""
    n = 500
    mags = 10.0 ** rng.uniform(-300, 30, (n, 1))
    centres = rng.uniform(-1, 1, (n, 3)) * mags
    radii = 10.0 ** rng.uniform(-300, 30, n)
    ix = cls(centres, radii)
    pts = np.concatenate([centres[:40], rng.uniform(-1, 1, (40, 3)) * 10.0 ** rng.uniform(-300, 30, (40, 1))])
    pts = np.concatenate([pts, [[2.0**99, -(2.0**99), 2.0**99], [0.0, 0.0, 0.0], [5e-324, 0.0, -5e-324]]])
    for p in pts:
        assert np.array_equal(np.sort(ix.query(p)), brute_query(centres, radii, p))


@pytest.mark.parametrize("module,cls", [(scan, LinearScan), (loop32, Loop32)])
def test_parallel_path_after_updates(module, cls, rng):
    n = module.PARALLEL_FROM + 5000
    centres = rng.uniform(-1000, 1000, (n, 3))
    radii = rng.uniform(1, 80, n)
    ix = cls(centres, radii)
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
    assert len(ix) == all_ids.size >= module.PARALLEL_FROM
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


def test_block_frames_follow_far_moves_growth_and_swaps(rng):
    """A block's 16-bit frame is refitted when one of its objects no longer fits it: a move a million
    units away, a radius grown a thousandfold, a removal that swaps a far object into the hole, inserts
    into a fresh block. Every answer stays brute force's, near the old neighbours and at the new places."""
    n = 64 * 40
    centres = rng.uniform(0.0, 100.0, (n, 3))
    radii = rng.uniform(0.5, 3.0, n)
    ix = LinearScan(centres, radii)
    c, r = centres.copy(), radii.copy()
    live = np.ones(n, dtype=bool)
    far = np.array([1e6, -2e6, 5e5])
    for k, i in enumerate(rng.choice(n, 40, replace=False)):
        c[i] = far + k
        ix.move(int(i), c[i])
    for i in rng.choice(np.flatnonzero(c[:, 0] < 1e5), 20, replace=False):
        r[i] *= 1000.0
        ix.move(int(i), c[i], r[i])
    for i in rng.choice(np.flatnonzero(c[:, 0] < 1e5), 100, replace=False):
        ix.remove(int(i))
        live[i] = False
    extra_c = np.concatenate([rng.uniform(0.0, 100.0, (70, 3)), far + rng.uniform(0, 50, (70, 3))])
    extra_r = rng.uniform(0.5, 3.0, 140)
    ids = [ix.insert(p, q) for p, q in zip(extra_c, extra_r)]
    assert ids == list(range(n, n + 140))
    c = np.concatenate([c, extra_c])
    r = np.concatenate([r, extra_r])
    live = np.concatenate([live, np.ones(140, dtype=bool)])
    keep = np.flatnonzero(live)
    pts = np.concatenate([c[keep[:: 17]] + rng.normal(0.0, 1.0, (keep[::17].size, 3)), far + rng.uniform(0, 60, (30, 3))])
    for p in pts:
        assert np.array_equal(np.sort(ix.query(p)), keep[brute_query(c[keep], r[keep], p)])


@pytest.mark.parametrize("n", [5_000, 300_000])  # one thread, and every core (PARALLEL_FROM)
def test_query_many_answers_groups_of_points_in_one_pass_as_single_queries(n, rng):
    from viewer.index import LinearScan
    from viewer.index._scan_many_kernels import GROUP

    c = rng.uniform(-1000, 1000, (n, 3))
    r = 5.0 * 200.0 ** (rng.random(n) ** 4)  # heavy-tailed: blocks of every radius octave
    ix = LinearScan(c, r)
    pts = np.concatenate([c[rng.integers(0, n, 2 * GROUP + 3)], rng.uniform(-1200, 1200, (4, 3))])
    offsets, ids = ix.query_many(pts)
    for k, p in enumerate(pts):
        assert np.array_equal(ids[offsets[k]:offsets[k + 1]], ix.query(p)), k
    small = np.empty(3, dtype=np.int64)
    with pytest.raises(QueryOverflow) as err:
        ix.query_many_into(pts, np.empty(len(pts) + 1, dtype=np.int64), small)
    assert err.value.needed == ids.size
