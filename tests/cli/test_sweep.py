"""``viewer sweep``'s hostile inputs, one table: sweep files whose name, axes, indexes or fields are bad (a name
that is not a plain name, --n past the largest scene, a radius parameter or an index given twice, TOML nested
too deeply, index options no task could build), a scheduler address of another scheme, a results file that is a
symbolic link, each refused with one line before any task runs. Apart from the table: a lock file that cannot take
its pid and a CSV that fills the disk are one message each, the whole rows kept."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.cli import refused, run_cli
from tests.support.hostile_index import spec as plugin_spec

pytest.importorskip("distributed")

HEAD = 'format = "viewer-sweep"\nversion = 1\n'
#: a sweep of one small task, sound but for what a row adds or changes
TASK = ('name = "h"\nindexes = ["octree"]\n[axes]\nscene = ["uniform"]\nn = [1500]\nqueries = [20]\n'
        'dynamic = ["none"]\nupdates = [20]\n')


def _named(name: str) -> str:
    return f'{HEAD}name = "{name}"\nindexes = ["octree"]\n[axes]\nscene = ["uniform"]\nn = [1000]\n'


def _axes(extra: str, indexes: str = '["octree"]') -> str:
    """A sweep file's indexes and axes: the uniform scene, then ``extra``."""
    return f'indexes = {indexes}\n[axes]\nscene = ["uniform"]\n{extra}'


def _symlinked_results(work: Path) -> None:
    """OUT/sweep.csv a symbolic link to a file the sweep has no business writing."""
    (work / "out").mkdir()
    (work / "victim.csv").write_text("precious\n")
    (work / "out" / "sweep.csv").symlink_to(work / "victim.csv")


DRY = ["--dry-run", "-o", "out"]
RUN = ["--no-plots", "-o", "out"]

#: every hostile input of ``viewer sweep``: (the sweep file's text, flags after it, words its one error line holds
#: ({file} is the sweep file, which runs in its own directory), exit status, setup). ``setup`` (or None) prepares
#: the directory it runs in. A sweep file's name chose its default results directory runs/sweep-NAME (a '/' sent
#: the results outside runs/, an ESC sequence reached the terminal raw); --n took up to 1e9 (a scene holds at most
#: 5e8); a radius parameter given twice silently took the last; "octree" and " octree" passed as two indexes and
#: the run measured one.
REFUSED = [
    pytest.param(_named("../../elsewhere/x"), ["--dry-run"], ["{file}", "name", "plain name", "'../../elsewhere/x'"],
                 2, None, id="name-slash"),
    pytest.param(_named("a\\u001b[2Jb"), ["--dry-run"], ["{file}", "name", "plain name", "'a\\x1b[2Jb'"], 2, None,
                 id="name-escape"),
    pytest.param(HEAD + 'name = "t"\n' + _axes('n = [1000]\nradius = ["log-uniform:min=1,max=5,min=2"]\n'), DRY,
                 ["{file}", "axes.radius", "parameter 'min' is given twice"], 2, None, id="radius-parameter-twice"),
    pytest.param(HEAD + 'name = "t"\n' + _axes("n = [6e8]\n"), DRY, ["{file}", "axes.n", "1..5e+08"], 2, None,
                 id="n-past-the-largest-scene"),
    pytest.param(_axes("n = [1000]\n", '["octree", " octree"]'), DRY,
                 ["{file}", "indexes", "an index spec is listed twice"], 2, None, id="index-twice-with-a-space"),
    pytest.param(_axes("n = [10]\n").replace("uniform", "nowhere"), DRY,
                 ["{file}", "axes.scene"], 2, None, id="scene-unknown"),
    pytest.param(_axes("n = [1.5]\n"), DRY, ["{file}", "axes.n"], 2, None, id="n-not-whole"),
    pytest.param(_axes("n = [0]\n"), ["-o", "out"], ["{file}", "axes.n"], 2, None, id="n-0"),
    pytest.param(_axes("n = [10]\nwidth = [3]\n"), DRY, ["{file}", "axes.width"], 2, None, id="axis-unknown"),
    pytest.param(_axes("n = [10]\n", '["nope"]'), DRY, ["{file}", "indexes"], 2, None, id="index-unknown"),
    pytest.param(_axes("n = [10]\n", f'["octree", "{plugin_spec("Raises")}"]'), DRY,
                 ["{file}", "indexes", "hostile_index.py:Raises'", "RuntimeError"], 2, None,
                 id="index-constructor-raises"),
    pytest.param(_axes("n = [10]\n", '["coherent:relative=maybe"]'), DRY,
                 ["{file}", "indexes", "'coherent:relative=maybe'", "true or false"], 2, None, id="bool-option-maybe"),
    pytest.param(_axes(""), DRY, ["{file}", "axes.n"], 2, None, id="n-missing"),
    pytest.param(_axes('n = [10]\ndynamic = ["2"]\n'), DRY, ["{file}", "axes.dynamic"], 2, None, id="dynamic-2"),
    pytest.param(HEAD + TASK.replace('dynamic = ["none"]', 'dynamic = ["0"]\nframes = [2]'),
                 ["-o", "out0"], ["{file}", "axes.dynamic", "(0, 1]"], 2, None, id="dynamic-0"),
    pytest.param(_axes('n = [10]\nradius = ["wobbly"]\n'), DRY, ["{file}", "axes.radius"], 2, None,
                 id="radius-unknown"),
    pytest.param(_axes("n = [10]\nseed = [-1]\n"), DRY, ["{file}", "axes.seed"], 2, None, id="seed-negative"),
    pytest.param(_axes("n = [10]\n", '"octree"'), DRY, ["{file}", "indexes"], 2, None, id="indexes-not-a-list"),
    pytest.param('indexes = ["octree"\n', DRY, ["{file}", "not valid TOML"], 2, None, id="not-toml"),
    pytest.param(_axes("n = " + "[" * 3000 + "]" * 3000 + "\n"), RUN, ["{file}", "nested too deeply"], 2, None,
                 id="toml-nested-too-deeply"),
    pytest.param(_axes("n = [1500]\n", '["octree:max_depth=0"]'), RUN,
                 ["{file}", "indexes", "octree:max_depth=0", "max_depth"], 2, None, id="octree-max-depth-0"),
    pytest.param(_axes("n = [1500]\n", '["octree", "hashgrid:cell_size=-5"]'), RUN,
                 ["{file}", "indexes", "hashgrid:cell_size=-5", "cell_size"], 2, None,
                 id="hashgrid-cell-size-negative"),
    pytest.param("description = [1, 2]\n" + _axes("n = [1500]\n"), RUN, ["{file}", "description", "must be a string"],
                 2, None, id="description-not-text"),
    *(pytest.param(HEAD + TASK, ["-o", "out", "--scheduler", address], ["--scheduler", scheme], 2, None,
                   id=f"scheduler-{address or 'empty'}")
      for address, scheme in [("tls://127.0.0.1:8786", "tls://"), ("ucx://127.0.0.1:8786", "ucx://"),
                              ("tcp://127.0.0.1", "tcp://"), ("", "--scheduler")]),
    pytest.param(HEAD + TASK, ["--no-plots", "-q", "-o", "out"], ["out/sweep.csv", "symbolic link"], 2,
                 _symlinked_results, id="results-a-symbolic-link"),
]


def _snapshot(d: Path) -> dict:
    """Every path under ``d`` with its bytes (a link's: its target's)."""
    return {str(p.relative_to(d)): p.read_bytes() if p.is_file() else None for p in sorted(d.rglob("*"))}


@pytest.mark.parametrize("text, flags, words, status, setup", REFUSED)
def test_a_hostile_sweep_is_refused_with_one_line_before_any_task(tmp_path, text, flags, words, status, setup):
    """Exit status 2, one line on stderr naming the file and field (or the flag), nothing on stdout, and nothing
    written in the directory the sweep runs in (no results directory; a file a link points at unchanged) but the
    lock file a sweep that got as far as its output directory keeps."""
    work = tmp_path / "work"
    work.mkdir()
    src = work / "s.toml"
    src.write_text(text)
    if setup:
        setup(work)
    before = _snapshot(work)
    code, stdout, err = run_cli("sweep", src, *flags, cwd=work)
    assert code == status, err
    refused(code, err, *(w.replace("{file}", str(src)) for w in words))
    assert stdout == "" and len(err.strip().splitlines()) == 1, err
    after = _snapshot(work)
    after.pop("out/sweep.lock", None)  # the lock file stays, as always (viewer/sweep/lock.py)
    assert after == before


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


#: bench's halves of two refusals the sweep shares (a radius parameter given twice, --n past the largest scene)
@pytest.mark.parametrize("args, words", [
    (["--radius", "constant:value=1,value=2"],
     ["--radius 'constant:value=1,value=2'", "parameter 'value' is given twice"]),
    (["--n", "6e8", "--dynamic", "none", "--updates", "0"], ["--n", "1..500,000,000", "'6e8'"]),
], ids=["radius-parameter-twice", "n-past-the-largest-scene"])
def test_bench_refuses_what_a_sweep_file_refuses(tmp_path, args, words):
    """Before: '--radius constant:value=1,value=2' silently measured value=2 (the workload labelled
    uniform-1k-constant2); bench skipped a workload of --n 6e8 here, and on a machine with the memory would
    have died generating it ("field 'n': must be <= 5e+08", naming no flag)."""
    out = tmp_path / "bench"
    status, _, err = run_cli("bench", "--n", "1e3", "--scene", "uniform", "--index", "scan", *args, "--no-plots",
                             "--out", out)
    refused(status, err, *words)
    assert not out.exists()
