"""`viewer bench`: the table, the CSV rows and the plots of a small run (every ratio against the scan, its
read floor, threads, first builds), scene files as workloads; bad flags and nothing measured exit 2."""

from __future__ import annotations

import csv
import json

import pytest

from viewer.bench.report import COLUMNS

from tests.support.cli import run_cli


def test_small_bench_writes_rows_and_plots(tmp_path, capsys):
    out = tmp_path / "b"
    code = run_cli("bench", "--wide", "--n", "1000,2000", "--scene", "uniform,clustered", "--index", "octree,kdtree",
                   "--queries", "20", "--updates", "50", "--frames", "2", "--out", out, "--no-first-build").returncode
    assert code == 0
    printed = capsys.readouterr().out
    where, head = printed.splitlines()[:2]
    # the machine first: its CPU (model, the target numba compiled for, caches), beside every figure
    from viewer.system.machine import cpu

    assert where.startswith("machine: ") and cpu() in where
    assert "ratios against 'scan'" in head and "thread" in head
    assert "x scan" in printed and "read us" in printed and "x read" in printed and "x brute" not in printed
    rows = list(csv.DictReader(open(out / "bench.csv")))
    assert [c for c, _, _ in COLUMNS] == list(rows[0].keys())
    # scan (the baseline) and brute (the oracle) are always added: 2 sizes x 2 scenes x 4 indexes
    assert len(rows) == 16
    assert {r["index"] for r in rows} == {"scan", "brute", "octree", "kdtree"}
    for r in rows:
        assert float(r["query_median_us"]) > 0
        # the two kinds of camera points, each with its median; the median of all lies between them
        obj, path = float(r["query_median_objects_us"]), float(r["query_median_path_us"])
        assert obj > 0 and path > 0
        assert min(obj, path) <= float(r["query_median_us"]) <= max(obj, path)
        # the scan's read floor: one figure per workload, on every row, and each row's ratio to it
        assert float(r["read_floor_us"]) > 0
        assert float(r["x_read"]) == pytest.approx(float(r["query_median_us"]) / float(r["read_floor_us"]), rel=1e-4)
        assert float(r["speedup_vs_scan"]) > 0
        assert int(r["threads"]) >= 1
        if r["index"] == "scan":
            assert float(r["speedup_vs_scan"]) == 1.0
            assert float(r["dynamic_10pct_x_scan"]) == 1.0
            assert float(r["candidates_per_visible"]) > 1 or float(r["mean_visible"]) == 0
        assert float(r["bytes_per_object"]) > 0
        assert r["build_first_s"] == "nan"  # --no-first-build
    for wl in {r["workload"] for r in rows}:
        same = [r for r in rows if r["workload"] == wl]
        # every index answered the same queries: the same visible counts; one read floor per workload
        assert len({r["mean_visible"] for r in same}) == 1
        assert len({r["read_floor_us"] for r in same}) == 1
        scan = next(r for r in same if r["index"] == "scan")
        for r in same:
            assert float(r["speedup_vs_scan"]) == pytest.approx(
                float(scan["query_median_us"]) / float(r["query_median_us"]), rel=1e-4)
    assert (out / "bench.png").stat().st_size > 10_000
    assert (out / "bench_scaling.png").exists()
    meta = json.loads((out / "bench.json").read_text())
    assert meta["machine"]["cpu"] == cpu() and meta["machine"]["cores"] >= 1 and meta["machine"]["platform"]
    assert meta["command"] and meta["date"] and meta["packages"]["numba"]


def test_first_build_in_a_fresh_process(tmp_path):
    out = tmp_path / "b"
    assert run_cli("bench", "--n", "500", "--scene", "uniform", "--index", "scan", "--queries", "5", "--updates", "0",
                   "--dynamic", "none", "--out", out, "--no-plots").returncode == 0
    rows = list(csv.DictReader(open(out / "bench.csv")))
    assert [r["index"] for r in rows] == ["scan", "brute"]
    for r in rows:
        assert float(r["build_first_s"]) > 0 and float(r["build_s"]) >= 0


def test_scene_files_and_bundled_recipes_are_workloads(tmp_path):
    from viewer.scenes import generate_scene, save_scene

    path = tmp_path / "tiny.npz"
    save_scene(generate_scene("clustered", 700, seed=3), path)
    out = tmp_path / "b"
    assert run_cli("bench", "--scene", f"{path},uniform", "--n", "300", "--index", "octree", "--queries", "8",
                   "--updates", "0", "--dynamic", "none", "--out", out, "--no-plots",
                   "--no-first-build").returncode == 0
    rows = list(csv.DictReader(open(out / "bench.csv")))
    assert {(r["workload"], r["n"]) for r in rows} == {("uniform-300", "300"), (rows[-1]["workload"], "700")}
    assert len(rows) == 6


def test_every_size_skipped_exits_2(tmp_path, capsys, monkeypatch):
    from viewer.bench import run

    monkeypatch.setattr(run, "available_bytes", lambda: 1000)
    code = run_cli("bench", "--n", "500", "--scene", "uniform", "--index", "octree", "--queries", "2", "--updates", "0",
                   "--dynamic", "none", "--out", tmp_path / "b", "--no-plots", "--no-first-build").returncode
    assert code == 2
    err = capsys.readouterr().err
    assert "nothing measured" in err and "memory" in err and "Traceback" not in err
    assert not (tmp_path / "b" / "bench.csv").exists()


def test_index_options_are_separate_entries(tmp_path):
    out = tmp_path / "b"
    assert run_cli("bench", "--n", "1000", "--scene", "uniform", "--index", "octree;octree:max_depth=8", "--queries",
                   "5", "--updates", "0", "--dynamic", "none", "--out", out, "--no-plots",
                   "--no-first-build").returncode == 0
    labels = [r["index"] for r in csv.DictReader(open(out / "bench.csv"))]
    assert labels == ["scan", "brute", "octree", "octree:max_depth=8"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--index", "nosuch"], "unknown index"),
        (["--scene", "nosuch"], "neither a scene generator"),
        (["--scene", "nosuch.npz"], "no such file"),
        (["--index", "octree:max_depth"], "key=value"),
        (["--index", "octree:bogus=1"], "octree"),
    ],
)
def test_bad_input_exits_2(tmp_path, capsys, args, message):
    code = run_cli("bench", "--n", "500", "--queries", "2", "--updates", "0", "--dynamic", "none", "--out",
                   tmp_path / "b", "--no-plots", "--no-first-build", *args).returncode
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "b" / "bench.csv").exists()


def test_bad_size_is_an_argparse_error(capsys):
    code, _, err = run_cli("bench", "--n", "lots")
    assert code == 2
    assert "not a size" in err


def _recording(path, index: str, query_ms: list[float]):
    from viewer.recording import COLUMNS as FRAME_COLUMNS

    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(FRAME_COLUMNS)
        for k, q in enumerate(query_ms):
            row = {c: 0 for c in FRAME_COLUMNS}
            row.update(frame=k, index=index, query_ms=q, frame_ms=2 * q)
            w.writerow([row[c] for c in FRAME_COLUMNS])
    return path


def test_compare_measures_against_the_scan_run_when_there_is_one(tmp_path):
    from viewer.reports.compare import compare_runs, reference_run
    from viewer.recording import read_runs

    octree = _recording(tmp_path / "octree.csv", "octree", [1.0, 1.0, 1.0])
    scan = _recording(tmp_path / "scan.csv", "scan", [4.0, 4.0, 4.0])
    brute = _recording(tmp_path / "brute.csv", "brute", [8.0, 8.0, 8.0])
    runs = read_runs([octree, scan, brute])
    assert reference_run(runs) == 1
    ratio = {r.run: r.ratios["median"] for r in compare_runs(runs, ["query_ms"])}
    assert list(ratio.values()) == [4.0, 1.0, 0.5]  # the speed-up over the scan, as bench's x scan
    # no scan run: the first run is the reference
    runs = read_runs([octree, brute])
    assert reference_run(runs) == 0
    assert [r.ratios["median"] for r in compare_runs(runs, ["query_ms"])] == [1.0, 0.125]


@pytest.mark.parametrize("k", range(1, 8))
def test_turn_orders_are_balanced(k):
    """Every index takes its turn right after every other equally often (and in every place equally
    often), so none alone pays for the caches a particular predecessor (brute force) flushes."""
    from collections import Counter

    from viewer.bench.measure import turns
    from viewer.timing.interleave import balanced_orders

    rows = balanced_orders(k)
    assert all(sorted(r) == list(range(k)) for r in rows)
    after = Counter((r[i], r[i + 1]) for r in rows for i in range(k - 1))
    assert len(after) == k * (k - 1) and len(set(after.values())) <= 1
    places = Counter((r[i], i) for r in rows for i in range(k))
    assert len(places) == k * k and len(set(places.values())) == 1
    built = {f"ix{j}": j for j in range(k)}
    assert [[v for _, v in turns(built, t)] for t in range(len(rows))] == rows


def test_rounds_time_every_point_once_a_pass_and_keep_the_means():
    """``measure_static`` with 3 passes: 3 samples a point for every index and both floors, the same
    mean visible, candidates and nodes a query as one pass (the counts do not depend on the pass)."""
    import numpy as np

    from viewer.bench.measure import measure_static
    from viewer.bench.workloads import make_workload
    from viewer.index import INDEXES

    wl = make_workload("clustered", 3000, queries=20)
    built = {}
    for name in ("scan", "brute", "octree"):
        built[name] = INDEXES[name](wl.centres, wl.radii)
        built[name]._bench_build_s = 0.0
    one, floor1, read1 = measure_static(built, wl, rounds=1)
    three, floor3, read3 = measure_static(built, wl, rounds=3)
    assert floor1.size == read1.size == 20 and floor3.size == read3.size == 60
    assert np.isfinite(read3).all() and (floor3 > 0).all()
    for name in built:
        assert one[name].query_us.shape == (1, 20) and three[name].query_us.shape == (3, 20)
        assert (three[name].query_us > 0).all()
        assert three[name].mean_visible == one[name].mean_visible > 0
        assert three[name].cand_per_visible == one[name].cand_per_visible
        assert three[name].max_per_level == one[name].max_per_level
        # each query's own output floor rides with it: x floor pairs a query with the floor of its point
        assert three[name].floor_us.shape == (3, 20) and np.array_equal(three[name].floor_us.ravel(), floor3)
        assert three[name].x_floor == pytest.approx(np.median(three[name].query_us / floor3.reshape(3, 20)))
    assert three["octree"].mean_nodes == one["octree"].mean_nodes > 1


def test_x_floor_pairs_each_query_with_its_own_floor():
    """On a world whose points differ a hundredfold in output, the ratio of the two medians compares a
    query at one point with the floor at another; ``x_floor`` is the median of the per-point ratios."""
    import numpy as np

    from viewer.bench.measure import IndexResult

    floor = np.array([[1.0, 1.0, 1.0, 100.0, 100.0]])
    query = np.array([[2.0, 2.0, 2.0, 200.0, 200.0]])  # every query exactly 2x its own floor
    r = IndexResult("ix", "w", 5, query_us=query, floor_us=floor)
    assert r.x_floor == 2.0
    assert r.median_us / float(np.median(floor)) == 2.0  # here the two agree ...
    skew = np.array([[2.0, 2.0, 200.0, 200.0, 200.0]])  # ... and here the medians fall at other points
    assert IndexResult("ix", "w", 5, query_us=skew, floor_us=floor).x_floor == 2.0
    assert float(np.median(skew)) / float(np.median(floor)) == 200.0
    assert np.isnan(IndexResult("ix", "w", 5, query_us=query).x_floor)  # no floor measured
