"""``viewer bench`` says how long it will take and how much memory it
will need before it starts, fits its printed table to the terminal (every column with ``--wide``, all of them
always in bench.csv), and writes its plots through a temporary file, never through a symbolic link. Each case
runs the real command."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

TINY = ["bench", "--n", "2000", "--scene", "uniform", "--index", "octree", "--queries", "5", "--rounds", "1",
        "--updates", "20", "--frames", "2", "--no-first-build"]


def bench(*args, columns: int = 80) -> subprocess.CompletedProcess:
    """``viewer bench`` (a tiny run) in a fresh process whose terminal is ``columns`` wide."""
    env = {**os.environ, "COLUMNS": str(columns)}
    return subprocess.run([sys.executable, "-m", "viewer.cli", *TINY, *map(str, args)], capture_output=True,
                          text=True, timeout=300, cwd=ROOT, env=env)


def table_lines(stdout: str) -> list[str]:
    """The printed table's lines (after the machine and the baseline lines)."""
    return [ln for ln in stdout.splitlines()[2:] if ln and not ln.startswith("(")]


def test_estimate_first_a_table_that_fits_and_plots_that_replace_a_link(tmp_path):
    out = tmp_path / "b"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (out / "bench.png").symlink_to(victim)
    refused = bench("--out", out, columns=80)  # a bench's file there already (a link counts): kept, unless --force
    assert refused.returncode == 2 and "bench.png exists already" in refused.stderr, refused.stderr
    done = bench("--out", out, "--force", columns=80)
    assert done.returncode == 0, done.stderr
    guess = next(ln for ln in done.stderr.splitlines() if ln.startswith("this run: ~"))
    print(guess)
    assert " GB on this machine (" in guess and "cores)" in guess and "an estimate" in guess
    # said before the first workload starts
    assert done.stderr.index(guess) < done.stderr.index("[uniform-")
    lines = table_lines(done.stdout)
    assert lines and max(map(len, lines)) <= 80, lines
    assert "q med us" in lines[0] and "x scan" in lines[0] and "x floor" not in lines[0]
    assert "--wide prints every one" in done.stdout
    header = next(csv.reader(open(out / "bench.csv")))
    assert "x_floor" in header and "move_many_per_s" in header  # the CSV keeps every column
    # the plot replaced the link with a file of its own; the link's target is untouched; no temporary left
    assert not (out / "bench.png").is_symlink() and (out / "bench.png").read_bytes()[:4] == b"\x89PNG"
    assert victim.read_text() == "keep me"
    assert sorted(p.name for p in out.iterdir()) == ["bench.csv", "bench.json", "bench.png", "bench_samples.parquet",
                                                     "bench_shares.png"]


def test_wide_prints_every_column(tmp_path):
    done = bench("--out", tmp_path / "b", "--no-plots", "--wide", columns=80)
    assert done.returncode == 0, done.stderr
    lines = table_lines(done.stdout)
    assert max(map(len, lines)) > 80
    for head in ("x floor", "move_many/s", "read us", "dyn10% x"):
        assert head in lines[0], lines[0]
    assert "--wide prints" not in done.stdout


def test_durations_and_sizes_as_the_estimate_writes_them():
    from viewer.bench.estimate import format_duration, short_size

    assert [format_duration(s) for s in (3, 42, 59, 90, 759, 3600, 5100)] == [
        "3 s", "40 s", "60 s", "2 min", "13 min", "1 h", "1 h 25 min"]
    assert [short_size(n) for n in (100_000, 1_000_000, 250_000, 1234)] == ["1e5", "1e6", "2.5e5", "1234"]
