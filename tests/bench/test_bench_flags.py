"""Issue 31, point 7 (the bench's items): `viewer bench` flags. The seed range is the scenes' (0..2**63-1) and the
message says it; --updates / --queries take the 1e4 notation --n takes; an empty --index, a true/false option
value, an option given twice and a zero share are refused, each with one message naming the flag or the spec,
exit status 2, nothing written."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest

from tests.support.cli import with_flags

TINY = ["bench", "--n", "1e3", "--scene", "uniform", "--index", "octree", "--rounds", "1", "--dynamic", "none",
        "--no-plots", "--no-first-build"]


def _bench(args: list[str], out) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "viewer.cli", *with_flags(TINY, args), "--out", str(out)],
                          capture_output=True, text=True, timeout=180)


def test_full_seed_range_and_1e_notation_are_accepted(tmp_path):
    out = tmp_path / "b"
    done = _bench(["--seed", str(2**63 - 1), "--updates", "1e2", "--queries", "1e1"], out)
    assert done.returncode == 0, done.stderr
    config = json.loads((out / "bench.json").read_text())["config"]
    assert (config["seed"], config["updates"], config["queries"]) == (2**63 - 1, 100, 10)
    for r in csv.DictReader(open(out / "bench.csv")):
        assert 0 < int(r["moves"]) <= 100


@pytest.mark.parametrize(
    "args, words",
    [
        (["--seed", str(2**63)], ["--seed", "0..2**63-1"]),
        (["--seed", "-1"], ["--seed", "0..2**63-1"]),
        (["--updates", "1.5"], ["--updates", "whole number"]),
        (["--queries", "0"], ["--queries", "1..1e6"]),
        (["--index", ""], ["--index", "names no index"]),
        (["--index", " ; "], ["--index", "names no index"]),
        (["--index", "hashgrid:cell_size=true"], ["'hashgrid:cell_size=true'", "cell_size", "true"]),
        (["--index", "octree:max_depth=8,max_depth=9"], ["'octree:max_depth=8,max_depth=9'", "twice"]),
        (["--dynamic", "0"], ["--dynamic", "(0, 1]"]),
        (["--dynamic", "-0.1"], ["--dynamic", "(0, 1]"]),
    ],
)
def test_bad_flags_exit_2_with_one_message(tmp_path, args, words):
    out = tmp_path / "b"
    done = _bench(["--queries", "2", "--updates", "0", *args], out)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and done.stdout == ""
    error = [ln for ln in done.stderr.splitlines() if "error:" in ln]
    assert len(error) == 1 and all(w in error[0] for w in words), done.stderr
    assert not out.exists()
