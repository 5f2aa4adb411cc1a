"""The per-frame CSV: schema, the recorder (buffering, metadata, surviving SIGTERM / crashes), the reader."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from viewer.errors import UserError
from viewer.recording import (
    COLUMNS,
    SCHEMA_VERSION,
    SCHEMAS,
    STAGES,
    Recorder,
    build_meta,
    meta_path_for,
    read_meta,
    read_run,
)
from viewer.recording.schema import version_of_header

REQUIRED = (
    "frame, t, dt, cam_x, cam_y, cam_z, yaw, pitch, index, objects, candidates, visible, drawn, nodes_visited, "
    "max_nodes_per_level, moved, update_ms, query_ms, cull_ms, gather_ms, upload_ms, draw_ms, frame_ms"
).split(", ")

ROOT = Path(__file__).resolve().parents[1]


def fake_row(k: int) -> dict:
    """A row with every column, values derived from k (exactly representable where it matters)."""
    row = {c: k for c in COLUMNS}
    row.update(t=k / 60, dt=1 / 60, cam_x=k * 0.1, cam_y=-k * 1e-7, cam_z=1e6 + k / 3, yaw=k * 1.5 - 180,
               pitch=-k * 0.01, index="brute")
    for s in STAGES:
        row[s] = 0.25 * k
    row.pop("record_ms")
    return row


# ----------------------------------------------------------------------------- schema


def test_schema_has_the_documented_columns_in_order():
    assert COLUMNS[: len(REQUIRED)] == tuple(REQUIRED)
    assert len(set(COLUMNS)) == len(COLUMNS)
    assert SCHEMA_VERSION == max(SCHEMAS)
    assert version_of_header(list(COLUMNS)) == SCHEMA_VERSION
    assert version_of_header(list(COLUMNS[:-1])) is None
    assert set(STAGES) <= set(COLUMNS)


def test_frame_stats_fields_are_csv_columns():
    from viewer.frame import FrameStats

    names = [f for f in FrameStats.__dataclass_fields__]
    assert all(n in COLUMNS for n in names)


# ----------------------------------------------------------------------------- writer


def test_rows_round_trip_exactly(tmp_path):
    p = tmp_path / "a.csv"
    with Recorder(p, build_meta(index="brute", headless=True)) as rec:
        for k in range(1000):
            rec.append(fake_row(k))
    run = read_run(p)
    assert len(run) == 1000
    k = np.arange(1000)
    assert np.array_equal(run["frame"], k)
    assert np.array_equal(run["t"], k / 60)  # positions and times are written exactly
    assert np.array_equal(run["cam_z"], 1e6 + k / 3)
    assert np.array_equal(run["cam_y"], -k * 1e-7)
    assert np.array_equal(run["query_ms"], 0.25 * k)
    assert (run["index"] == "brute").all()
    assert (run["record_ms"] >= 0).all()
    meta = read_meta(p)
    assert meta["frames"] == 1000 and meta["complete"] is True and meta["ended"] == "closed"
    assert meta["schema"]["version"] == SCHEMA_VERSION and meta["schema"]["columns"] == list(COLUMNS)
    assert meta["index"]["name"] == "brute" and meta["window"]["headless"] is True
    assert meta["packages"]["numpy"] == np.__version__
    with open(p, newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == list(COLUMNS) and all(len(r) == len(COLUMNS) for r in rows)


def test_append_takes_frame_stats_and_overrides():
    from viewer.frame import FrameStats

    import tempfile

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "b.csv"
        rec = Recorder(p)
        rec.append(FrameStats(frame=7, index="octree", visible=3, query_ms=1.5))
        rec.append(FrameStats(frame=8, index="octree"), visible=9)
        rec.close()
        run = read_run(p)
        assert list(run["frame"]) == [7, 8] and list(run["visible"]) == [3, 9]
        assert run["query_ms"][0] == 1.5


def test_rows_are_buffered_off_the_hot_path(tmp_path):
    p = tmp_path / "c.csv"
    rec = Recorder(p, flush_rows=100, flush_seconds=3600)
    for k in range(99):
        rec.append(fake_row(k))
    assert p.read_text().count("\n") == 1  # header only: nothing written during those frames
    rec.append(fake_row(99))
    rec.append(fake_row(100))  # the 101st append flushes the first 100
    assert p.read_text().count("\n") == 101
    rec.flush()
    assert p.read_text().count("\n") == 102
    rec.close()
    rec.close()  # idempotent
    assert len(read_run(p)) == 101


def test_missing_field_is_named(tmp_path):
    rec = Recorder(tmp_path / "d.csv")
    row = fake_row(0)
    del row["drawn"]
    with pytest.raises(ValueError, match="drawn"):
        rec.append(row)
    rec.close()


def test_unwritable_destination_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        Recorder(tmp_path / "nope" / "a.csv")
    with pytest.raises(UserError, match="is a directory"):
        Recorder(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(UserError):
        Recorder(blocker / "a.csv")
    assert sorted(os.listdir(tmp_path)) == ["file"]


def test_meta_path_naming(tmp_path):
    assert meta_path_for(tmp_path / "run.csv") == tmp_path / "run.meta.json"
    assert meta_path_for(tmp_path / "run") == tmp_path / "run.meta.json"


# ----------------------------------------------------------------------------- killed runs

_LOOP = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {root!r})
    from tests.test_recording import fake_row
    from viewer.recording import Recorder
    rec = Recorder({path!r}, {{"label": "killed"}}, flush_rows=7, flush_seconds=0.05)
    k = 0
    while True:
        rec.append(fake_row(k))
        k += 1
        if {crash_at} and k == {crash_at}:
            raise RuntimeError("boom")
        time.sleep(0.0005)
    """
)


def _start(path, crash_at=0):
    code = _LOOP.format(root=str(ROOT), path=str(path), crash_at=crash_at)
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _wait_rows(path, n, proc, timeout=30.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if path.exists() and path.read_bytes().count(b"\n") > n:
            return
        if proc.poll() is not None:
            raise AssertionError(f"recorder process ended early: {proc.stderr.read().decode()}")
        time.sleep(0.02)
    proc.kill()
    raise AssertionError("no rows appeared")


def _assert_complete(path):
    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == list(COLUMNS)
    assert all(len(r) == len(COLUMNS) for r in rows[1:])
    run = read_run(path)
    assert np.array_equal(run["frame"], np.arange(len(run)))  # no gap, no duplicate
    return run


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_killed_recording_leaves_every_row_complete(tmp_path, sig):
    path = tmp_path / "killed.csv"
    proc = _start(path)
    _wait_rows(path, 50, proc)
    proc.send_signal(sig)
    proc.wait(timeout=30)
    assert proc.returncode != 0
    run = _assert_complete(path)
    assert len(run) >= 50
    meta = json.loads(meta_path_for(path).read_text())
    assert meta["frames"] == len(run)  # every buffered row was flushed on the way out
    assert meta["complete"] is False and meta["ended"] == sig.name
    assert meta["label"] == "killed"


def test_a_crashed_recording_keeps_its_buffered_rows(tmp_path):
    path = tmp_path / "crash.csv"
    proc = _start(path, crash_at=123)
    proc.wait(timeout=30)
    assert proc.returncode == 1 and b"boom" in proc.stderr.read()
    run = _assert_complete(path)
    assert len(run) == 123
    assert json.loads(meta_path_for(path).read_text())["ended"] == "exit"


# ----------------------------------------------------------------------------- reader


def _write(tmp_path, name, header, rows, meta=None):
    p = tmp_path / name
    with open(p, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)
    if meta is not None:
        meta_path_for(p).write_text(json.dumps(meta))
    return p


def _good_rows(n=3):
    return [[str(fake_row(k).get(c, 0)) for c in COLUMNS] for k in range(n)]


def test_reader_rejects_other_schema_versions(tmp_path):
    future = {"schema": {"name": "viewer-frames", "version": SCHEMA_VERSION + 1}}
    p = _write(tmp_path, "future.csv", list(COLUMNS) + ["entered", "left"], [r + ["0", "0"] for r in _good_rows()], future)
    with pytest.raises(UserError, match=r"future\.csv: recorded with schema version"):
        read_run(p)
    p = _write(tmp_path, "other.csv", ["frame", "time", "ms"], [["0", "0", "1"]])
    with pytest.raises(UserError, match="header is not the column list"):
        read_run(p)
    wrong = {"schema": {"name": "viewer-frames", "version": SCHEMA_VERSION}}
    p = _write(tmp_path, "mismatch.csv", list(COLUMNS[:-1]), [r[:-1] for r in _good_rows()], wrong)
    with pytest.raises(UserError, match="header does not match schema version"):
        read_run(p)


def test_reader_names_bad_lines_and_empty_files(tmp_path):
    rows = _good_rows(3)
    rows[1][COLUMNS.index("visible")] = "many"
    p = _write(tmp_path, "bad.csv", COLUMNS, rows)
    with pytest.raises(UserError, match=r"bad\.csv:3: column 'visible': 'many' is not an integer"):
        read_run(p)
    rows = _good_rows(3)
    rows[2] = rows[2][:5]
    p = _write(tmp_path, "short.csv", COLUMNS, rows)
    with pytest.raises(UserError, match=r"short\.csv:4: expected \d+ fields, found 5"):
        read_run(p)
    e = tmp_path / "empty.csv"
    e.write_text("")
    with pytest.raises(UserError, match="empty file"):
        read_run(e)
    with pytest.raises(UserError, match="no such file"):
        read_run(tmp_path / "missing.csv")
    (tmp_path / "junk.csv").write_text("a,b\n")
    (tmp_path / "junk.meta.json").write_text("{not json")
    with pytest.raises(UserError, match=r"junk\.meta\.json: not valid JSON"):
        read_run(tmp_path / "junk.csv")


def test_reader_drops_a_torn_last_row(tmp_path, capsys):
    p = _write(tmp_path, "torn.csv", COLUMNS, _good_rows(3))
    with open(p, "a") as f:
        f.write("3,0.05,0.01")
    run = read_run(p)
    assert len(run) == 3
    assert "incomplete" in capsys.readouterr().err


def test_header_only_recording_reads_as_zero_rows(tmp_path):
    p = tmp_path / "z.csv"
    Recorder(p).close()
    run = read_run(p)
    assert len(run) == 0 and run["frame"].dtype == np.int64


def test_recording_modules_load_no_gl():
    code = (
        "import sys, viewer.recording, viewer.recording.replay, viewer.paths, viewer.compare, viewer.plot; "
        "print(','.join(m for m in ('moderngl', 'moderngl_window', 'pyglet', 'glcontext', 'matplotlib') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == ""
