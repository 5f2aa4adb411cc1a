"""``viewer plot`` and ``viewer compare``: images of the expected size from real recordings, numbers that
match a hand computation, and clean failures on bad input."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from viewer.reports.compare import compare_runs, format_table
from viewer.errors import UserError
from viewer.recording import COLUMNS, SCHEMA_VERSION, Recorder, build_meta, meta_path_for, read_run, read_runs

from tests.support.cli import run_cli


@pytest.fixture(scope="module")
def real_runs(tmp_path_factory):
    """Two recordings of the GL-free frame pipeline flying a generated path (brute and octree if present)."""
    from viewer.scenes import generate_scene
    from viewer.camera import FlyCamera
    from viewer.frame.pipeline import FramePipeline, warm
    from viewer.index import INDEXES
    from viewer.paths import generated_path

    d = tmp_path_factory.mktemp("runs")
    scene = generate_scene("clustered", 4000, seed=2, clusters=6)
    samples = generated_path(scene).sample(frames=120)
    warm()
    out = []
    for name in [n for n in ("brute", "octree") if n in INDEXES]:
        pipe = FramePipeline(scene, name, indexes=[name])
        cam = FlyCamera(far=float(scene.radii.max()))
        with Recorder(d / f"{name}.csv", build_meta(scene=scene, index=name, headless=True,
                                                   path={"name": "flythrough"})) as rec:
            for k in range(len(samples)):
                rec.append(pipe.step(cam, samples.dt, pose=samples.pose(k)))
        out.append(d / f"{name}.csv")
    return out


def _png_size(path):
    from PIL import Image

    with Image.open(path) as im:
        return im.size, im.format


@pytest.mark.parametrize("size", [(1600, 1500), (900, 700)])
def test_plot_writes_a_png_of_the_requested_size(real_runs, tmp_path, size):
    out = tmp_path / "fig.png"
    rc = run_cli("plot", *map(str, real_runs), "-o", out, "--width", size[0], "--height", size[1]).returncode
    assert rc == 0
    assert _png_size(out) == (size, "PNG")
    assert [f.name for f in tmp_path.iterdir()] == ["fig.png"]  # no temporary file left


def test_a_stage_at_zero_in_every_run_gets_no_panel(real_runs):
    """A still world's recordings through the GL-free pipeline: ``motion_ms`` (nothing moves), ``upload_ms``,
    ``draw_ms`` and ``gpu_ms`` (no GL) are 0 in every frame, so they are not drawn (the figure says so); every
    other stage is, in the schema's order."""
    from viewer.frame.stages import TIMED_COLUMNS
    from viewer.recording import read_runs
    from viewer.reports.plot import drawn_stages

    runs = read_runs(real_runs)
    drawn, idle = drawn_stages(runs)
    assert idle == ["motion_ms", "upload_ms", "draw_ms", "gpu_ms"]
    assert drawn == [c for c in TIMED_COLUMNS if c not in idle]
    assert "query_ms" in drawn and "update_ms" in drawn


def test_plot_of_one_run_and_of_an_svg(real_runs, tmp_path):
    from viewer.reports.plot import plot_files

    plot_files(real_runs[:1], tmp_path / "one.png", width=800, height=800)
    assert _png_size(tmp_path / "one.png") == ((800, 800), "PNG")
    plot_files(real_runs, tmp_path / "fig.svg")
    assert (tmp_path / "fig.svg").read_text().lstrip().startswith("<?xml")


# ----------------------------------------------------------------------------- compare


def _small_csv(path, query_ms, frame_ms, visible, index="brute", label=None):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(COLUMNS)
        for k, (q, fr, v) in enumerate(zip(query_ms, frame_ms, visible)):
            row = {c: 0 for c in COLUMNS}
            row.update(frame=k, index=index, query_ms=q, frame_ms=fr, visible=v)
            w.writerow([row[c] for c in COLUMNS])
    if label:
        meta_path_for(path).write_text(json.dumps({"schema": {"name": "viewer-frames", "version": SCHEMA_VERSION},
                                                   "label": label}))
    return path


def test_compare_matches_a_hand_computation(tmp_path):
    a = _small_csv(tmp_path / "a.csv", [1, 2, 3, 4, 5], [10, 20, 30, 40, 100], [0, 1, 2, 3, 4], label="A")
    b = _small_csv(tmp_path / "b.csv", [2, 4, 6, 8, 10], [5, 5, 5, 5, 5], [0, 0, 0, 0, 0], label="B")
    rows = {(r.column, r.run): r for r in compare_runs(read_runs([a, b]))}
    # query_ms of A: median 3; p95 = 4 + 0.8 * (5 - 4) = 4.8 (linear interpolation), p99 = 4 + 0.96 = 4.96; max 5
    qa = rows[("query_ms", "A")]
    assert qa.values == {"median": 3.0, "p95": pytest.approx(4.8), "p99": pytest.approx(4.96), "max": 5.0}
    assert qa.ratios == {"median": 1.0, "p95": 1.0, "p99": 1.0, "max": 1.0}
    qb = rows[("query_ms", "B")]
    assert qb.values == {"median": 6.0, "p95": pytest.approx(9.6), "p99": pytest.approx(9.92), "max": 10.0}
    # every ratio is a speed-up over the reference (A, the first run): its value over the run's
    assert qb.ratios == {"median": 0.5, "p95": pytest.approx(0.5), "p99": pytest.approx(0.5), "max": 0.5}
    # frame_ms of A: sorted 10 20 30 40 100 -> median 30, p95 = 40 + 0.8 * 60 = 88, p99 = 40 + 0.96 * 60, max 100
    fa, fb = rows[("frame_ms", "A")], rows[("frame_ms", "B")]
    assert fa.values == {"median": 30.0, "p95": pytest.approx(88.0), "p99": pytest.approx(97.6), "max": 100.0}
    assert fb.ratios == {"median": pytest.approx(30 / 5), "p95": pytest.approx(88 / 5), "p99": pytest.approx(97.6 / 5),
                         "max": 20.0}
    # visible of A: median 2, p95 = 3.8, max 4; B is all zeros: a zero in the run gives no ratio
    assert rows[("visible", "A")].values == {"median": 2.0, "p95": pytest.approx(3.8), "p99": pytest.approx(3.96),
                                             "max": 4.0}
    assert rows[("visible", "B")].ratios == {"median": None, "p95": None, "p99": None, "max": None}
    assert rows[("update_ms", "B")].ratios == {"median": None, "p95": None, "p99": None, "max": None}
    assert rows[("query_ms", "A")].frames == 5


def test_compare_cli_prints_the_table(tmp_path, capsys):
    a = _small_csv(tmp_path / "a.csv", [1, 2, 3, 4, 5], [10, 20, 30, 40, 100], [0, 1, 2, 3, 4], label="A")
    b = _small_csv(tmp_path / "b.csv", [2, 4, 6, 8, 10], [5, 5, 5, 5, 5], [0, 0, 0, 0, 0], label="B")
    assert run_cli("compare", a, b).returncode == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.startswith("query_ms") and " B " in ln)
    assert line.split()[-8:] == ["6.000", "9.600", "9.920", "10.000", "0.500", "0.500", "0.500", "0.500"]
    assert run_cli("compare", a, b, "--format", "csv", "--stages-only").returncode == 0
    rows = list(csv.DictReader(capsys.readouterr().out.splitlines()))
    from viewer.frame.stages import TIMED_COLUMNS

    assert {r["column"] for r in rows} == set(TIMED_COLUMNS) and "frame_ms" in TIMED_COLUMNS
    fb = next(r for r in rows if r["column"] == "frame_ms" and r["run"] == "B")
    assert float(fb["p95"]) == 5.0 and fb["x_faster_max"] == "20.0" and fb["x_faster_p95"] == "17.6"
    assert run_cli("compare", a, "--format", "markdown").returncode == 0
    assert capsys.readouterr().out.startswith("| column | run |")


def test_compare_labels_runs_from_metadata_and_disambiguates(real_runs, tmp_path):
    runs = read_runs([real_runs[0], real_runs[0]])
    assert runs[0].label != runs[1].label
    assert runs[0].label.startswith("brute · clustered")
    table = format_table(compare_runs(read_runs(real_runs)))
    assert "query_ms" in table and "frame_ms" in table


def test_real_runs_have_one_row_per_frame(real_runs):
    for p in real_runs:
        r = read_run(p)
        assert len(r) == 120 and np.array_equal(r["frame"], np.arange(120))
        assert (r["drawn"] <= r["visible"]).all() and (r["visible"] <= r["candidates"]).all()


def test_compare_of_nothing_is_a_user_error():
    with pytest.raises(UserError):
        compare_runs([])
