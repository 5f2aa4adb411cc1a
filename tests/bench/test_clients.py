"""``viewer clients``: the server-tick workload (K moving clients, single queries against one batch)."""

from __future__ import annotations

import csv

import numpy as np

from viewer.bench.clients import client_paths, measure_clients, shares_work
from viewer.index import make_index

from tests.support.cli import run_cli


def test_client_paths_stay_in_the_world_and_move(rng):
    c = rng.uniform(-100, 100, (500, 3))
    spread = client_paths(c, 16, 50, "spread", seed=1, step=7.0)
    assert spread.shape == (50, 16, 3)
    assert (spread >= c.min(0) - 1e-9).all() and (spread <= c.max(0) + 1e-9).all()
    steps = np.linalg.norm(np.diff(spread, axis=0), axis=2)
    assert steps.max() <= 7.0 + 1e-9 and np.median(steps) > 3.0  # each client moves, at most a step a tick
    hot = client_paths(c, 64, 5, "hotspots", seed=1)
    # crowded: the 64 clients start within 50 units (per axis) of at most 4 objects
    near = [np.all(np.abs(hot[0] - c[j]) <= 50.0 + 1e-9, axis=1) for j in range(len(c))]
    assert np.any(near, axis=0).all()


def test_measure_clients_times_both_ways_and_counts_what_brute_force_finds(rng):
    c = rng.uniform(-100, 100, (3000, 3))
    r = rng.uniform(5, 40, 3000)
    built = {name: make_index(name, c, r) for name in ("brute", "octree", "scan")}
    paths = client_paths(c, 8, 6, "spread", seed=2)
    res = measure_clients(built, paths)
    want = sum(len(built["brute"].query(p)) for t in range(6) for p in paths[t])
    for row in res:
        assert len(row.single_us) == len(row.batch_us) == 6
        assert row.visible == want, row.index
        assert row.shared == shares_work(built[row.index])


def test_clients_command_writes_a_row_per_index_layout_and_k(tmp_path, capsys):
    out = tmp_path / "out"
    code = run_cli("clients", "--scene", "clustered", "--n", "3000", "--k", "1,5", "--ticks", "3", "--index",
                   "octree,scan", "--out", out).returncode
    assert code == 0
    printed = capsys.readouterr().out
    assert printed.startswith("machine: ")
    rows = list(csv.DictReader(open(out / "clients.csv")))
    assert len(rows) == 2 * 2 * 2  # indexes x layouts x K
    assert {(r["index"], r["layout"], r["k"]) for r in rows} == {
        (i, lay, k) for i in ("octree", "scan") for lay in ("spread", "hotspots") for k in ("1", "5")}
    assert all(int(r["ticks"]) == 3 and float(r["batch_tick_us"]) > 0 for r in rows)
    assert "clustered-3k spread K=5: fastest" in printed

