"""`viewer bench`: the table, the CSV rows and the plots of a small run; bad flags exit 2."""

from __future__ import annotations

import csv

import pytest

from viewer.bench.report import COLUMNS
from viewer.cli import main


def test_small_bench_writes_rows_and_plots(tmp_path, capsys):
    out = tmp_path / "b"
    code = main(["bench", "--n", "1000,2000", "--scene", "uniform,clustered", "--index", "octree,kdtree",
                 "--queries", "20", "--updates", "50", "--frames", "2", "--out", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "x brute" in printed and "octree" in printed
    rows = list(csv.DictReader(open(out / "bench.csv")))
    assert [c for c, _, _ in COLUMNS] == list(rows[0].keys())
    # brute is always added as the baseline: 2 sizes x 2 scenes x 3 indexes
    assert len(rows) == 12
    assert {r["index"] for r in rows} == {"brute", "octree", "kdtree"}
    for r in rows:
        assert float(r["query_median_us"]) > 0
        if r["index"] == "brute":
            assert float(r["speedup_vs_brute"]) == 1.0
            assert float(r["candidates_per_visible"]) > 1 or float(r["mean_visible"]) == 0
        assert float(r["bytes_per_object"]) > 0
    # every index answered the same queries: the same visible counts
    for wl in {r["workload"] for r in rows}:
        assert len({r["mean_visible"] for r in rows if r["workload"] == wl}) == 1
    assert (out / "bench.png").stat().st_size > 10_000
    assert (out / "bench_scaling.png").exists()


def test_index_options_are_separate_entries(tmp_path):
    out = tmp_path / "b"
    assert main(["bench", "--n", "1000", "--scene", "uniform", "--index", "octree;octree:max_depth=8",
                 "--queries", "5", "--updates", "0", "--dynamic", "none", "--out", str(out), "--no-plots"]) == 0
    labels = [r["index"] for r in csv.DictReader(open(out / "bench.csv"))]
    assert labels == ["brute", "octree", "octree:max_depth=8"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--index", "nosuch"], "unknown index"),
        (["--scene", "nosuch"], "unknown scene generator"),
        (["--index", "octree:max_depth"], "key=value"),
        (["--index", "octree:bogus=1"], "octree"),
    ],
)
def test_bad_input_exits_2(tmp_path, capsys, args, message):
    code = main(["bench", "--n", "500", "--queries", "2", "--updates", "0", "--dynamic", "none",
                 "--out", str(tmp_path / "b"), "--no-plots", *args])
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "b" / "bench.csv").exists()


def test_bad_size_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["bench", "--n", "lots"])
    assert exc.value.code == 2
    assert "not a size" in capsys.readouterr().err
