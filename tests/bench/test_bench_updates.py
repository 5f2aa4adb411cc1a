"""`viewer bench`'s update figures are measured on real work. With --updates >= N the removal
phase used to empty the index, so no move ran (move/s 0) and the batch phase timed one empty call; now every
rate is the calls actually made over their seconds, and those counts are in the CSV."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys

import pytest

from tests.support.cli import run_cli

BENCH = ["bench", "--scene", "uniform", "--index", "octree", "--dynamic", "none", "--queries", "4", "--rounds", "1",
         "--no-plots", "--no-first-build"]
#: each rate column and the count and seconds it is made of
RATES = {"remove_per_s": ("removes", "remove_s"), "insert_per_s": ("inserts", "insert_s"),
         "move_per_s": ("moves", "move_s"), "move_many_per_s": ("batch_moves", "move_many_s")}


def _bench(*args: str):
    """The tiny bench with ``args``, in this process: (exit status, stdout, stderr)."""
    return run_cli(*BENCH, *args)


def _check_rates(rows: list[dict], updates: int) -> None:
    for r in rows:
        n = int(r["n"])
        for rate, (count, seconds) in RATES.items():
            c, s = int(r[count]), float(r[seconds])
            assert c > 0 and s > 0, (r["workload"], r["index"], count)
            # the rate's numerator is the count of calls made, nothing else
            assert float(r[rate]) == pytest.approx(c / s, rel=1e-4), (r["workload"], r["index"], rate)
        # never more removed than half the index (one object of a one-object index), all inserted back
        assert int(r["removes"]) <= max(1, n // 2) and int(r["inserts"]) == int(r["removes"])
        assert int(r["moves"]) <= updates and int(r["batch_moves"]) <= 10 * updates


def test_update_rates_are_real_work_when_updates_reach_n(tmp_path):
    """--updates >= N at N = 1, 2 and 1e3 (the sizes of the issue): every rate is positive and is its count
    over its seconds."""
    out = tmp_path / "b"
    done = _bench("--n", "1,2,1e3", "--updates", "2000", "--wide", "--out", str(out))  # --wide: the rate columns
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(open(out / "bench.csv")))
    assert {int(r["n"]) for r in rows} == {1, 2, 1000}
    _check_rates(rows, 2000)
    # the printed table: figures are right-aligned under their headers
    printed = [ln for ln in done.stdout.splitlines() if ln.startswith("uniform-")]
    head = next(ln for ln in done.stdout.splitlines() if ln.startswith("workload"))
    assert len(printed) == len(rows)
    for name in ("move/s", "move_many/s"):
        end = re.search(rf"(?<= ){re.escape(name)}(?= |$)", head).end()
        for ln, r in zip(printed, rows):
            shown = ln[:end].split()[-1]
            assert shown not in ("0", "-") and float(shown) == pytest.approx(float(r[name.replace("/s", "_per_s")]),
                                                                            rel=0.01)


# The bench's own loop, run through the real command, with every update call the index receives counted from
# outside: the counts the CSV reports are the calls made, and each move goes somewhere new.
_COUNTING = r"""
import json, sys
import numpy as np
import viewer.bench.measure as measure
from viewer.cli import main

seen = []
real = measure.measure_updates

def counted(ix, wl, res, *a, **k):
    c = {"n": wl.n, "index": type(ix).__name__, "removes": 0, "inserts": 0, "moves": 0, "batch_moves": 0,
         "repeated_targets": 0}
    last = {}
    rm, ins, mv, mm = ix.remove, ix.insert, ix.move, ix.move_many
    def remove(i):
        rm(i); c["removes"] += 1
    def insert(p, r):
        c["inserts"] += 1; return ins(p, r)
    def move(i, p, *rest):
        p = np.asarray(p, dtype=float)
        if i in last and np.array_equal(last[i], p):
            c["repeated_targets"] += 1
        last[i] = p.copy()
        mv(i, p, *rest); c["moves"] += 1
    def move_many(ids, ps, *rest):
        mm(ids, ps, *rest); c["batch_moves"] += len(ids)
    ix.remove, ix.insert, ix.move, ix.move_many = remove, insert, move, move_many
    real(ix, wl, res, *a, **k)
    c["label"] = res.index or None
    seen.append(c)

measure.measure_updates = counted
code = main(sys.argv[2:])
json.dump(seen, open(sys.argv[1], "w"))
sys.exit(code)
"""


def test_update_figures_are_checked_against_a_count_of_the_moves_actually_made(tmp_path):
    """The bench's update figures are checked against a count of the moves actually made: the calls each index
    received during the update phases, counted by wrappers around its methods, equal the counts in the CSV,
    every one > 0, and the rate's numerator is that count."""
    out, counts = tmp_path / "b", tmp_path / "counts.json"
    cmd = [sys.executable, "-c", _COUNTING, str(counts), *BENCH, "--n", "2,1e3", "--updates", "1500",
           "--out", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(open(out / "bench.csv")))
    seen = json.loads(counts.read_text())
    assert len(seen) == len(rows) == 6  # scan, brute, octree at two sizes, in the order measured
    _check_rates(rows, 1500)
    by_n: dict[int, list[dict]] = {}
    for c in seen:
        by_n.setdefault(c["n"], []).append(c)
    for n, made in by_n.items():
        written = [r for r in rows if int(r["n"]) == n]
        assert len(made) == len(written) == 3
        for c, r in zip(made, written):
            assert c["label"] == r["index"]
            for key in ("removes", "inserts", "moves", "batch_moves"):
                assert int(r[key]) == c[key] > 0, (n, r["index"], key)
            assert c["repeated_targets"] == 0  # a move never sends an object where its last move put it
