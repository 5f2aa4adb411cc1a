"""``viewer sweep`` refusals before any task runs: a name that is not a plain name, --n past the largest
scene, a radius parameter or an index given twice; a lock file that cannot take its pid and a CSV that fills the
disk are one message each, the whole rows kept."""

from __future__ import annotations

import os

import pytest

from tests.support.cli import refused, run_cli, small  # noqa: F401 (small: a fixture)


@pytest.mark.parametrize("name, shown", [
    ("../../elsewhere/x", "'../../elsewhere/x'"),
    ("a\\u001b[2Jb", "'a\\x1b[2Jb'"),
], ids=["slash", "escape"])
def test_a_sweep_name_that_is_not_a_plain_name_is_refused(tmp_path, name, shown):
    """Before: a sweep file's name chose its default results directory runs/sweep-NAME, so a name with '/'
    sent the results outside runs/, and an ESC sequence in it reached the terminal raw ('sweep NAME: ...')."""
    work = tmp_path / "work"
    work.mkdir()
    f = work / "s.toml"
    f.write_text(f'format = "viewer-sweep"\nversion = 1\nname = "{name}"\nindexes = ["octree"]\n'
                 '[axes]\nscene = ["uniform"]\nn = [1000]\n')
    status, out, err = run_cli("sweep", f, "--dry-run", cwd=work)
    refused(status, err, str(f), "name", "plain name", shown)
    assert out == "" and [p.name for p in work.iterdir()] == ["s.toml"]


def test_a_radius_parameter_given_twice_is_refused_in_bench_and_sweep(tmp_path):
    """'--index octree:max_depth=5,max_depth=6' and '--view-distance constant:value=1,value=2' are refused.
    Before: '--radius constant:value=1,value=2' silently measured value=2 (the workload labelled
    uniform-1k-constant2), and a sweep file's radius axis took it the same way."""
    out = tmp_path / "bench"
    status, _, err = run_cli("bench", "--n", "1e3", "--scene", "uniform", "--index", "scan", "--radius",
                            "constant:value=1,value=2", "--no-plots", "--out", out)
    refused(status, err, "--radius 'constant:value=1,value=2'", "parameter 'value' is given twice")
    assert not out.exists()
    sweep = tmp_path / "s.toml"
    sweep.write_text('format = "viewer-sweep"\nversion = 1\nname = "t"\nindexes = ["octree"]\n[axes]\n'
                     'scene = ["uniform"]\nn = [1000]\nradius = ["log-uniform:min=1,max=5,min=2"]\n')
    status, out_text, err = run_cli("sweep", sweep, "--dry-run", "-o", tmp_path / "sw")
    refused(status, err, str(sweep), "axes.radius", "parameter 'min' is given twice")
    assert out_text == "" and not (tmp_path / "sw").exists()


@pytest.mark.parametrize("argv", [
    ["bench", "--n", "6e8", "--index", "scan", "--dynamic", "none", "--updates", "0", "--no-plots"],
    ["clients", "--n", "6e8", "--scene", "uniform", "--index", "scan", "--k", "1", "--ticks", "3"],
], ids=["bench", "clients"])
def test_n_past_the_largest_scene_is_refused_as_a_flag(tmp_path, argv):
    """A scene holds at most 500,000,000 objects (viewer.scenes.MAX_N); --n took up to 1e9. Before: clients
    warmed its kernels, then died generating the workload with "field 'n': must be <= 5e+08" (naming no flag)
    and left its --out directory behind; bench skipped the workload here, and on a machine with the memory
    would have died the same way; a sweep's n axis took 1e9 too."""
    out = tmp_path / "out"
    status, _, err = run_cli(*argv, "--out", out)
    refused(status, err, "--n", "1..500,000,000", "'6e8'")
    assert not out.exists()
    sweep = tmp_path / "s.toml"
    sweep.write_text('format = "viewer-sweep"\nversion = 1\nname = "t"\nindexes = ["octree"]\n[axes]\n'
                     'scene = ["uniform"]\nn = [6e8]\n')
    status, _, err = run_cli("sweep", sweep, "--dry-run", "-o", out)
    refused(status, err, str(sweep), "axes.n", "1..5e+08")


def test_a_sweep_whose_lock_file_cannot_take_its_pid_is_one_message(tmp_path, monkeypatch):
    """The lock file is created empty, then the sweep's pid is written into it. Before: on a full file system
    that write died with 'OSError: [Errno 28] No space left on device' (a traceback, exit 1)."""
    import errno

    from viewer.sweep import lock

    def full(fd, data, offset):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(lock.os, "pwrite", full)
    out = tmp_path / "sw"
    status, _, err = run_cli("sweep", "tiny-sweep", "-o", out, "--no-plots", "-q")
    refused(status, err, f"--out {out}", "No space left on device")
    assert sorted(os.listdir(out)) == ["sweep.lock"]  # the lock file stays, as always (viewer/sweep/lock.py)


def test_a_sweep_csv_that_fills_the_disk_keeps_its_whole_rows_and_says_so(tmp_path, monkeypatch):
    """Before: a task's rows that did not fit died with 'OSError: [Errno 28] No space left on device' in the
    middle of the sweep (a traceback, exit 1, raised again by close() flushing the same buffer), leaving a
    torn row in sweep.csv. Now the file is cut back to the rows before and the error is one message."""
    from viewer.errors import UserError
    from viewer.sweep import load_sweep
    from viewer.sweep import results as res_mod
    from viewer.sweep.results import failure_rows, open_results

    task = load_sweep("tiny-sweep").tasks()[0]
    path = tmp_path / "sweep.csv"
    results = open_results(path)
    results.write(failure_rows(task, "skipped", "kept"))
    before = path.read_bytes()
    real = os.write

    def full(fd, data):
        real(fd, bytes(data[:40]))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(res_mod.os, "write", full)
    with pytest.raises(UserError, match="cannot write the sweep's results: No space left on device; the 2 rows"):
        results.write(failure_rows(task, "failed", "lost"))
    monkeypatch.undo()
    results.close()
    results.close()
    assert path.read_bytes() == before


def test_a_sweep_listing_an_index_twice_with_a_space_is_refused(tmp_path):
    """``viewer bench --index "octree; octree"`` is refused ('--index lists octree twice'), and so was a sweep
    listing "octree" twice; but the sweep compared the specs as written. Before: indexes = ["octree",
    " octree"] passed ('1 tasks, each measuring octree, octree', exit 0) and the run measured octree once.
    Now the specs are compared without their surrounding spaces, as bench labels them."""
    src = tmp_path / "twice.toml"
    src.write_text('indexes = ["octree", " octree"]\n[axes]\nscene = ["uniform"]\nn = [1000]\n')
    out = tmp_path / "out"
    status, stdout, err = run_cli("sweep", src, "--dry-run", "-o", out)
    refused(status, err, "twice.toml", "indexes", "an index spec is listed twice")
    assert stdout == "" and not out.exists()
