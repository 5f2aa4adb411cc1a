"""viewer sweep: sweep files, a real two-worker Dask cluster, resuming, failures, memory skips, the CLI."""

from __future__ import annotations

import csv
import math
import signal
import textwrap
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed")

from viewer.sweep import bundled_sweeps, columns, load_sweep, run_sweep  # noqa: E402
from viewer.sweep.plots import speedup_column  # noqa: E402

from tests.support.cli import run_cli, start_process
from tests.support.cluster import local_cluster

ROOT = Path(__file__).resolve().parents[2]


def _sweep_file(tmp_path: Path, scenes=("uniform", "clustered"), sizes=(1500, 3000), name="t", extra="") -> Path:
    p = tmp_path / f"{name}.toml"
    p.write_text(textwrap.dedent(f"""\
        format = "viewer-sweep"
        version = 1
        name = "{name}"
        indexes = ["octree", "hashgrid"]
        [axes]
        scene = {list(scenes)!r}
        n = {list(sizes)!r}
        queries = [20]
        dynamic = ["none"]
        updates = [20]
        {extra}
        """).replace("'", '"'))
    return p


def _rows(path: Path) -> list[dict]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))




# ----------------------------------------------------------------------------- files


def test_bundled_sweeps_load_and_multiply_their_axes():
    assert {"tiny-sweep", "scaling-sweep", "radii-sweep"} <= set(bundled_sweeps())
    for name in bundled_sweeps():
        sw = load_sweep(name)
        expected = math.prod(len(v) for v in sw.axes.values())
        tasks = sw.tasks()
        assert len(tasks) == expected and len({t.key for t in tasks}) == expected
        assert all(t.indexes == sw.indexes for t in tasks)


def test_dry_run_lists_tasks_with_memory_estimates_and_runs_nothing(tmp_path):
    p = _sweep_file(tmp_path)
    out = tmp_path / "out"
    r = run_cli("sweep", p, "-o", out, "--dry-run")
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stdout.splitlines() if "GiB" in ln and "to run" in ln]
    assert len(lines) == 4
    assert not (out / "sweep.csv").exists()


# ----------------------------------------------------------------------------- running


def _assert_bench_ratios(rows: list[dict]) -> None:
    """Every ratio in a row is the bench's own: computed from the timings of the same task's rows."""
    col = speedup_column()
    base = col.removeprefix("speedup_vs_")
    for key in {r["task"] for r in rows}:
        task = [r for r in rows if r["task"] == key]
        assert len({(r["host"], r["cpu"], r["threads"]) for r in task}) == 1
        ref = [r for r in task if r["index"] == base]
        assert len(ref) == 1, "the baseline runs in every task"
        b = float(ref[0]["query_median_us"])
        for r in task:
            assert float(r[col]) == b / float(r["query_median_us"])
            # the median of each query's own ratio (tests/test_bench.py derives it): not a ratio of two columns
            assert float(r["x_floor"]) > 0 and float(r["floor_median_us"]) > 0


def test_two_worker_cluster_runs_every_task_with_same_run_ratios(tmp_path):
    sw = load_sweep(str(_sweep_file(tmp_path)))
    res = run_sweep(sw, tmp_path / "out", workers=2, plots=True, progress=False, log=lambda s: None)
    assert (res.total, res.ok, res.failed, res.skipped, res.already) == (4, 4, 0, 0, 0)
    rows = _rows(tmp_path / "out" / "sweep.csv")
    assert list(rows[0]) == columns()
    tasks = {(r["scene"], r["n"]) for r in rows}
    assert tasks == {(s, n) for s in ("uniform", "clustered") for n in ("1500", "3000")}
    for key in {r["task"] for r in rows}:
        assert {"octree", "hashgrid"} <= {r["index"] for r in rows if r["task"] == key}
    assert all(r["status"] == "ok" and r["host"] and r["cpu"] and int(r["threads"]) >= 1 for r in rows)
    _assert_bench_ratios(rows)
    assert (tmp_path / "out" / "summary.png").stat().st_size > 0
    assert len(list((tmp_path / "out" / "tasks").glob("*/bench.png"))) == 4


def test_a_worker_process_resolves_an_index_spec_from_its_text(tmp_path):
    """A sweep file's index given as path/to/file.py:Class with options reaches a Dask worker process as its
    text and is resolved there: its rows are measured beside the registered index's."""
    from tests.support.hostile_index import spec

    fine = spec("Fine", "leaf=4")
    src = _sweep_file(tmp_path, scenes=("uniform",), sizes=(1500,))
    src.write_text(src.read_text().replace('indexes = ["octree", "hashgrid"]', f'indexes = ["octree", "{fine}"]'))
    res = run_sweep(load_sweep(str(src)), tmp_path / "out", workers=1, plots=False, progress=False,
                    log=lambda s: None)
    assert (res.total, res.ok, res.failed) == (1, 1, 0)
    rows = {r["index"]: r for r in _rows(tmp_path / "out" / "sweep.csv")}
    assert {"octree", fine} <= set(rows) and rows[fine]["status"] == "ok"
    assert rows[fine]["mean_visible"] == rows["octree"]["mean_visible"]


def test_resume_skips_finished_tasks_and_reruns_torn_ones(tmp_path, monkeypatch):
    local_cluster(monkeypatch, processes=False)
    out = tmp_path / "out"
    first = run_sweep(load_sweep(str(_sweep_file(tmp_path, scenes=("uniform",)))), out, plots=False,
                      progress=False, log=lambda s: None)
    assert first.ok == 2
    before = _rows(out / "sweep.csv")
    sw = load_sweep(str(_sweep_file(tmp_path, scenes=("uniform", "clustered"))))
    # a torn last row of a task not yet written, as a kill in the middle of its write would leave (a row that
    # does not parse makes its own task not done: tests/test_sweep_hostile.py)
    fresh = next(t for t in sw.tasks() if t.key not in {r["task"] for r in before})
    with open(out / "sweep.csv", "a") as fh:
        fh.write(fresh.key + ",clustered,150")
    second = run_sweep(sw, out, plots=False, progress=False, log=lambda s: None)
    assert (second.already, second.ok) == (2, 2)
    after = _rows(out / "sweep.csv")
    assert after[: len(before)] == before  # finished tasks untouched, not measured again
    assert {r["scene"] for r in after} == {"uniform", "clustered"} and len(after) == 2 * len(before)
    third = run_sweep(sw, out, plots=False, progress=False, log=lambda s: None)
    assert (third.already, third.ok) == (4, 0)
    # sweep.json says what the directory is and notes each run into it, with where it came from
    from viewer.results import load

    res = load(out)
    assert (res.kind, res.format, res.version) == ("sweep", "viewdist-sweep", 1) and len(res.rows) == len(after)
    assert [r["tasks"] for r in res.meta["runs"]] == [2, 4, 4] and res.provenance["commit"]
    from tests.results.test_load import validate

    validate(res.meta, "viewer.sweep", "sweep.schema.json")


def test_a_resume_after_the_sweep_file_changed_keeps_old_rows_and_summarises_this_sweep(tmp_path, monkeypatch):
    local_cluster(monkeypatch, processes=False)
    import viewer.sweep.plots as plots_mod
    import viewer.sweep.run as run_mod

    out = tmp_path / "out"
    run_sweep(load_sweep(str(_sweep_file(tmp_path, scenes=("uniform",)))), out, plots=False, progress=False,
              log=lambda s: None)
    before = _rows(out / "sweep.csv")
    summarised = []
    monkeypatch.setattr(plots_mod, "plot_summary", lambda rows, path: summarised.append(rows))
    monkeypatch.setattr(run_mod, "_task_plots", lambda rows, where: None)
    said = []
    res = run_sweep(load_sweep(str(_sweep_file(tmp_path, scenes=("clustered",)))), out, plots=True, progress=False,
                    log=said.append)
    assert (res.already, res.ok) == (0, 2)
    after = _rows(out / "sweep.csv")
    assert after[: len(before)] == before  # nothing measured is lost
    assert any("2 tasks" in s and "not in this sweep" in s and "left out of the summary" in s for s in said), said
    (shown,) = summarised
    assert shown and {r["scene"] for r in shown} == {"clustered"}


def test_a_failing_task_is_recorded_and_the_rest_complete(tmp_path, monkeypatch):
    local_cluster(monkeypatch, processes=False)
    import viewer.bench.run as bench_run

    real = bench_run.run_bench

    def flaky(cfg, log=print):
        if cfg.scenes == ["clustered"] and cfg.sizes == [3000]:
            raise MemoryError("Unable to allocate 26.6 GiB")
        return real(cfg, log=log)

    monkeypatch.setattr(bench_run, "run_bench", flaky)
    sw = load_sweep(str(_sweep_file(tmp_path)))
    res = run_sweep(sw, tmp_path / "out", plots=False, progress=False, log=lambda s: None)
    assert (res.ok, res.failed) == (3, 1)
    rows = _rows(tmp_path / "out" / "sweep.csv")
    bad = [r for r in rows if r["status"] == "failed"]
    assert {r["index"] for r in bad} == {"octree", "hashgrid"}
    assert all(r["scene"] == "clustered" and r["n"] == "3000" and "MemoryError" in r["reason"] for r in bad)
    _assert_bench_ratios([r for r in rows if r["status"] == "ok"])
    # run again: the failed task is tried again, the others are not
    monkeypatch.setattr(bench_run, "run_bench", real)
    again = run_sweep(sw, tmp_path / "out", plots=False, progress=False, log=lambda s: None)
    assert (again.already, again.ok, again.failed) == (3, 1, 0)
    assert all(r["status"] == "ok" for r in _rows(tmp_path / "out" / "sweep.csv"))


def test_tasks_that_would_not_fit_a_worker_are_skipped_with_a_message(tmp_path, monkeypatch):
    local_cluster(monkeypatch, processes=False)
    import viewer.sweep.run as run_mod

    monkeypatch.setattr(run_mod, "_worker_memory", lambda client: 200_000_000)
    sw = load_sweep(str(_sweep_file(tmp_path, scenes=("uniform",), sizes=(1500, 2_000_000))))
    said = []
    res = run_sweep(sw, tmp_path / "out", plots=False, progress=False, log=said.append)
    assert (res.ok, res.skipped, res.failed) == (1, 1, 0)
    assert any("skipped" in s and "does not fit" in s for s in said)
    skipped = [r for r in _rows(tmp_path / "out" / "sweep.csv") if r["status"] == "skipped"]
    assert skipped and all(r["n"] == "2000000" and "does not fit" in r["reason"] for r in skipped)


def test_an_interrupted_sweep_keeps_finished_tasks_and_resumes(tmp_path, monkeypatch):
    """SIGINT to a real `viewer sweep` (a local cluster of one worker process), then the same sweep again."""
    p = _sweep_file(tmp_path, sizes=(1500, 3000, 6000))
    out = tmp_path / "out"
    proc = start_process("sweep", p, "-o", out, "--no-plots", "-q", cwd=tmp_path)
    csv_path = out / "sweep.csv"
    end = time.monotonic() + 240
    while time.monotonic() < end:
        if csv_path.exists() and len(_rows(csv_path)) >= 2 or proc.poll() is not None:
            break
        time.sleep(0.2)
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    proc.wait(timeout=60)
    assert proc.returncode in (0, 130), proc.stderr.read()[-2000:]
    done = {r["task"] for r in _rows(csv_path)}
    assert done
    local_cluster(monkeypatch, processes=False)
    res = run_sweep(load_sweep(str(p)), out, plots=False, progress=False, log=lambda s: None)
    assert (res.already, res.ok, res.failed) == (len(done), 6 - len(done), 0)
    rows = _rows(csv_path)
    assert len({row["task"] for row in rows}) == 6 and all(row["status"] == "ok" for row in rows)
