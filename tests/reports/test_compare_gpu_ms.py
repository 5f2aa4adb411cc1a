"""``viewer compare`` and ``viewer plot`` with the ``gpu_ms`` column (schema version 8): its rows for recordings
that have it, none (and no error) beside a recording of an older version, which lacks it."""

from __future__ import annotations

from viewer.frame.stages import GPU_COLUMN
from viewer.recording.reader import read_runs
from viewer.reports.compare import compare_runs

from tests.reports.test_compare_bands import parse_text, write_run
from tests.support.cli import run_cli


def test_gpu_ms_is_compared_where_every_run_has_it(tmp_path, capsys):
    a = write_run(tmp_path / "scan.csv", 8, "scan", seed=1)
    b = write_run(tmp_path / "gpu.csv", 8, "gpu", seed=2)
    assert {r.column for r in compare_runs(read_runs([a, b]), warn=None)} >= {GPU_COLUMN, "frame_ms"}
    assert run_cli("compare", a, b).returncode == 0
    rows = parse_text(capsys.readouterr().out)
    assert (GPU_COLUMN, "scan") in rows and (GPU_COLUMN, "gpu") in rows


def test_a_recording_without_gpu_ms_compares_and_plots_beside_one_with_it(tmp_path, capsys):
    old = write_run(tmp_path / "scan.csv", 7, "scan", seed=1)
    new = write_run(tmp_path / "gpu.csv", 8, "gpu", seed=2)
    runs = read_runs([old, new])
    assert GPU_COLUMN not in runs[0].columns and GPU_COLUMN in runs[1].columns
    assert GPU_COLUMN not in {r.column for r in compare_runs(runs, warn=None)}
    assert run_cli("compare", old, new).returncode == 0
    out = capsys.readouterr().out
    assert "query_ms" in out and GPU_COLUMN not in out
    assert run_cli("plot", old, new, "-o", tmp_path / "fig.png").returncode == 0
    assert (tmp_path / "fig.png").stat().st_size > 0
