"""``viewer bench`` on a scene with visibility ranges: each index's row carries the query followed by
the range filter, the filter alone, and the mean objects in range / per LOD band / HLOD proxies at the camera
points, equal to brute force's; a scene without ranges gets no range column (its bench is unchanged)."""

from __future__ import annotations

import numpy as np
import pytest

from viewer.bench.report import RANGE_COLUMNS, columns, format_table, rows
from viewer.bench.run import BenchConfig, IndexSpec, _run_workload
from viewer.bench.workloads import scene_workload
from viewer.frame.ranges import brute_bands, brute_in_range
from viewer.index import INDEXES
from viewer.scenes.construct import scene_from_arrays
from viewer.scenes.format import save_scene

NAMES = [n for n in ("scan", "brute", "octree", "hashgrid", "bvh") if INDEXES[n].unavailable() is None]


def ranged_scene(seed: int = 3, n: int = 2000, groups: int = 40):
    """Objects in a box 1000 wide with begins, two LOD switches each (the second +inf for a quarter) and
    ``groups`` HLOD proxies (the last objects) each the parent of the objects nearest it."""
    rng = np.random.default_rng(seed)
    c = rng.uniform(-500, 500, (n, 3))
    r = rng.uniform(40, 400, n)
    b = r * rng.uniform(0, 0.6, n)
    b[rng.random(n) < 0.3] = 0.0
    lod = np.sort(r[:, None] * rng.uniform(0.1, 0.9, (n, 2)), axis=1)
    lod[rng.random(n) < 0.25, 1] = np.inf
    par = np.full(n, -1, dtype=np.int64)
    heads = np.arange(n - groups, n)
    r[heads] = 900.0
    b[heads] = 150.0
    near = np.argmin(((c[: n - groups, None, :] - c[None, heads, :]) ** 2).sum(axis=2), axis=1)
    kids = rng.random(n - groups) < 0.5
    par[: n - groups][kids] = heads[near[kids]]
    return scene_from_arrays(c, r, world=1000.0, begin=b, lod=lod, parent=par, name="ranged")


def bench_rows(wl, names=NAMES):
    cfg = BenchConfig([], [], [IndexSpec(n, n) for n in names], queries=len(wl.points), updates=0, dynamic=[],
                      frames=0, rounds=2)
    results, reads = [], {}
    _run_workload(cfg, wl, cfg.indexes, results, reads, log=lambda s: None)
    return rows(results, reads, shares=[])


def test_range_columns_equal_brute_force(tmp_path):
    sc = ranged_scene()
    wl = scene_workload(str(save_scene(sc, tmp_path / "ranged.npz")), queries=24, seed=1)
    assert wl.has_ranges
    table = bench_rows(wl)
    # brute force: in range by the rule, bands of the objects in range, proxies among them
    is_proxy = np.zeros(sc.n, dtype=bool)
    is_proxy[sc.parent[sc.parent >= 0]] = True
    inr, bands, prox = [], [], []
    for p in wl.points:
        ok = brute_in_range(sc.centres, sc.radii, sc.begin, sc.parent, p)
        bb = brute_bands(sc.centres[ok], sc.lod[ok], p)
        inr.append(ok.sum())
        bands.append([np.sum(bb == 0), np.sum(bb == 1), np.sum(bb >= 2), 0])  # two switches: bands 0..2
        prox.append(np.sum(ok & is_proxy))
    want = np.mean(bands, axis=0)
    assert np.mean(inr) > 5 and want[1] > 0 and want[2] > 0 and np.mean(prox) > 0  # the test means something
    assert [r["index"] for r in table] == ["scan", "brute", *[n for n in NAMES if n not in ("scan", "brute")]]
    for r in table:
        assert list(r) == [name for name, _, _ in columns([], ranges=True)]
        assert r["mean_in_range"] == pytest.approx(np.mean(inr), rel=0, abs=1e-9), r["index"]
        assert [r[f"mean_band{j}"] for j in range(4)] == pytest.approx(list(want), rel=0, abs=1e-9)
        assert r["mean_proxies"] == pytest.approx(np.mean(prox), rel=0, abs=1e-9)
        # the end spheres alone see more than the range filter keeps
        assert r["mean_visible"] >= r["mean_in_range"]
        assert 0 < r["range_filter_median_us"] < r["range_query_median_us"]
    assert table[0]["range_speedup_vs_scan"] == 1.0
    text = format_table(table, wide=True)
    head = text.splitlines()[0].split()
    for header in ("q+rng", "in", "band0", "band1", "band2", "band3", "proxies"):
        assert header in head


def test_scene_without_ranges_has_no_range_columns(tmp_path):
    sc = ranged_scene()
    plain = scene_from_arrays(sc.centres, sc.radii, world=1000.0, name="plain")
    wl = scene_workload(str(save_scene(plain, tmp_path / "plain.npz")), queries=12, seed=1)
    assert not wl.has_ranges
    table = bench_rows(wl, ["scan", "brute", "octree"])
    range_names = {name for name, _, _ in RANGE_COLUMNS}
    for r in table:
        assert list(r) == [name for name, _, _ in columns([])]
        assert not range_names & set(r)
    assert "band0" not in format_table(table, wide=True)


def test_mixed_workloads_share_one_header():
    """A run with a ranged and a plain workload: every row has the range columns (NaN for the plain one), so
    the CSV's one header holds every row."""
    from viewer.bench.measure import IndexResult

    a = IndexResult("scan", "ranged", 10, query_us=np.ones((1, 4)), range_query_us=np.full((1, 4), 2.0),
                    range_filter_us=np.full((1, 4), 0.5), in_range=8, band_sums=np.array([4, 2, 2, 0]), proxies=4)
    b = IndexResult("scan", "plain", 10, query_us=np.ones((1, 4)))
    t = rows([a, b], shares=[])
    assert list(t[0]) == list(t[1])
    assert t[0]["mean_in_range"] == 2.0 and t[0]["mean_band0"] == 1.0 and t[0]["mean_proxies"] == 1.0
    assert t[0]["range_query_median_us"] == 2.0 and t[0]["range_filter_median_us"] == 0.5
    assert np.isnan(t[1]["mean_in_range"]) and np.isnan(t[1]["range_query_median_us"])
