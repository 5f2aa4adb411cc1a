"""Every share of `viewer bench --dynamic` has its figures in the printed table, bench.csv and
bench.json (the 5%, 50% and 100% asked for used to be measured and then dropped: only 1% / 10% columns existed)."""

from __future__ import annotations

import csv
import json
import re

import pytest

from tests.support.cli import run_cli


def test_every_requested_share_has_its_columns_in_table_csv_and_json(tmp_path):
    out = tmp_path / "b"
    shares = ["0.05", "0.5", "1.0"]
    done = run_cli("bench", "--n", "1e3", "--scene", "uniform", "--index", "octree", "--queries", "4", "--rounds", "1",
                   "--updates", "0", "--frames", "2", "--dynamic", ",".join(shares), "--no-plots", "--no-first-build",
                   "--wide", "--out", out)  # --wide: every share printed
    assert done.returncode == 0, done.stderr
    labels = [f"{float(s) * 100:g}" for s in shares]  # 5, 50, 100
    assert "5%, 50%, 100% of objects moving" in done.stderr

    rows = list(csv.DictReader(open(out / "bench.csv")))
    meta = json.loads((out / "bench.json").read_text())
    assert meta["config"]["dynamic"] == [float(s) for s in shares]
    assert meta["columns"] == list(rows[0])
    assert len(meta["rows"]) == len(rows) == 3
    # the columns asked for, and no others
    assert sorted(re.findall(r"dynamic_([^,]+?)pct_ms", ",".join(rows[0]))) == sorted(labels)
    scan = next(r for r in rows if r["index"] == "scan")
    for r, j in zip(rows, meta["rows"]):
        assert j["index"] == r["index"]
        for p in labels:
            ms, x = f"dynamic_{p}pct_ms", f"dynamic_{p}pct_x_scan"
            assert float(r[ms]) > 0 and j[ms] == pytest.approx(float(r[ms]), rel=1e-5)
            p99, worst = float(r[f"dynamic_{p}pct_p99_ms"]), float(r[f"dynamic_{p}pct_max_ms"])
            assert float(r[ms]) <= p99 <= worst and j[f"dynamic_{p}pct_max_ms"] == pytest.approx(worst, rel=1e-5)
            assert float(r[x]) == pytest.approx(float(scan[ms]) / float(r[ms]), rel=1e-4)
            assert j[x] == pytest.approx(float(r[x]), rel=1e-4)
            # move_many alone within the frame, beside the workload's update floors measured in the same frames
            move, floor = float(r[f"dynamic_{p}pct_move_ms"]), float(r[f"dynamic_{p}pct_scatter_floor_ms"])
            assert 0 < move <= float(r[f"dynamic_{p}pct_move_p99_ms"]) and move <= worst
            assert floor > 0 and float(r[f"dynamic_{p}pct_contiguous_floor_ms"]) > 0
            assert floor == float(scan[f"dynamic_{p}pct_scatter_floor_ms"])  # the workload's, in every row
            assert float(r[f"dynamic_{p}pct_move_x_floor"]) == pytest.approx(move / floor, rel=1e-4)

    # the printed table: a column per share, a figure (not "-") in every row, right-aligned under its header
    head = next(ln for ln in done.stdout.splitlines() if ln.startswith("workload"))
    printed = [ln for ln in done.stdout.splitlines() if ln.startswith("uniform-")]
    assert len(printed) == 3
    floors = [ln for ln in done.stdout.splitlines() if ln.startswith("update floors, uniform-1k at ")]
    assert [ln.split(" at ")[1].split("%")[0] for ln in floors] == labels
    for p in labels:
        end = re.search(rf"(?<= )dyn{re.escape(p)}% ms(?= |$)", head).end()
        for ln, r in zip(printed, rows):
            shown = ln[:end].split()[-1]
            assert shown != "-" and float(shown) == pytest.approx(float(r[f"dynamic_{p}pct_ms"]), abs=0.006)


def test_dynamic_columns_are_the_median_p99_and_max_of_the_frames():
    """Each share's columns summarise every frame measured: the median, p99 (numpy's linear interpolation) and the
    worst frame, and the scan's median over the index's."""
    import numpy as np

    from viewer.bench.measure import IndexResult
    from viewer.bench.report import rows

    frames = np.arange(1.0, 101.0)  # 1..100 ms
    idx = IndexResult("octree", "w", 10, dynamic_frames_ms={0.1: frames})
    scan = IndexResult("scan", "w", 10, dynamic_frames_ms={0.1: 2 * frames})
    got = {r["index"]: r for r in rows([scan, idx], shares=[0.1])}["octree"]
    assert got["dynamic_10pct_ms"] == pytest.approx(50.5)
    assert got["dynamic_10pct_p99_ms"] == pytest.approx(99.01)
    assert got["dynamic_10pct_max_ms"] == 100.0
    assert got["dynamic_10pct_x_scan"] == pytest.approx(2.0)
    assert list(got).index("dynamic_10pct_ms") < list(got).index("dynamic_10pct_p99_ms") < list(got).index(
        "dynamic_10pct_max_ms") < list(got).index("dynamic_10pct_x_scan")


def test_several_shares_draw_the_moving_frame_against_the_share_with_the_floor(tmp_path):
    """Two shares moving or more: bench_shares.png, one line per index and the update's floor, beside bench.png;
    the movers' drift a frame (--drift) is recorded in bench.json."""
    import numpy as np
    from PIL import Image

    out = tmp_path / "b"
    done = run_cli("bench", "--n", "1e3", "--scene", "uniform", "--index", "octree", "--queries", "4", "--rounds", "1",
                   "--updates", "0", "--frames", "2", "--dynamic", "0.1,1", "--drift", "0.33", "--no-first-build",
                   "--out", out)
    assert done.returncode == 0, done.stderr
    assert json.loads((out / "bench.json").read_text())["config"]["drift"] == 0.33
    assert f"wrote {out / 'bench_shares.png'}" in done.stderr
    img = np.asarray(Image.open(out / "bench_shares.png").convert("L"))
    assert img.shape[0] > 300 and img.std() > 10  # drawn, not blank
    one = tmp_path / "one"
    assert run_cli("bench", "--n", "1e3", "--scene", "uniform", "--index", "octree", "--queries", "4", "--rounds", "1",
                   "--updates", "0", "--frames", "2", "--dynamic", "0.1", "--no-first-build", "--out",
                   one).returncode == 0
    assert (one / "bench.png").exists() and not (one / "bench_shares.png").exists()


@pytest.mark.parametrize("drift", [0.33, 200.0], ids=["small-steps", "long-jumps"])
def test_after_the_moving_frames_of_every_share_each_index_answers_as_brute_force(drift):
    """The bench's moving workload hands every index the same batches (each share's movers, frame after frame);
    afterwards each index's answers at the workload's camera points and at movers' new places equal brute force's
    over where its objects are now: no move lost, none misfiled, whether movers stay in their node or jump."""
    import numpy as np

    from viewer.bench.measure import measure_dynamic
    from viewer.bench.workloads import make_workload
    from viewer.index import brute_query, make_index

    wl = make_workload("clustered", 20_000, seed=4, queries=20, world=2000.0)
    built = {name: make_index(name, wl.centres, wl.radii) for name in ("octree", "rebuild", "coherent", "hgrid")}
    _, where = measure_dynamic(built, wl, [0.01, 0.5, 1.0], frames=4, seed=4, drift=drift)
    for name, ix in built.items():
        probes = np.concatenate([wl.points[:10], where[name][:: 2000]])
        for p in probes:
            assert np.array_equal(np.sort(ix.query(p)), brute_query(where[name], wl.radii, p)), (name, p)
