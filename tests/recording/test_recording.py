"""The per-frame CSV: schema, the recorder (buffering, metadata, surviving SIGTERM / crashes), the reader."""

from __future__ import annotations

import csv
import errno
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
    TIMED_COLUMNS,
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

ROOT = Path(__file__).resolve().parents[2]


def fake_row(k: int) -> dict:
    """A row with every column, values derived from k (exactly representable where it matters)."""
    row = {c: k for c in COLUMNS}
    row.update(t=k / 60, dt=1 / 60, cam_x=k * 0.1, cam_y=-k * 1e-7, cam_z=1e6 + k / 3, yaw=k * 1.5 - 180,
               pitch=-k * 0.01, index="brute", culling="cpu")
    for s in TIMED_COLUMNS:
        row[s] = 0.25 * k
    row.pop("record_ms")
    return row


# ----------------------------------------------------------------------------- schema


def test_schema_has_the_documented_columns_in_order():
    assert COLUMNS[: len(REQUIRED)] == tuple(REQUIRED)
    assert len(set(COLUMNS)) == len(COLUMNS)
    assert SCHEMA_VERSION == max(SCHEMAS)
    assert version_of_header(list(COLUMNS)) == SCHEMA_VERSION
    assert version_of_header([c for c in COLUMNS if c != "query_ms"]) is None
    assert set(TIMED_COLUMNS) <= set(COLUMNS)


def test_every_declared_stage_reaches_the_row_and_the_hud():
    """A stage is declared once (viewer.frame.stages): its time goes from the frame's stage_ms into its
    column of the row, the CSV header, cpu_ms (when it is a culling stage) and the HUD's stage line (the
    panel's graphs take each stage's colour from the same declaration); a derivation that drops or reorders a
    stage fails here."""
    from viewer.frame.pipeline import FramePipeline
    from viewer.frame.stages import FRAME_COLUMN_INFO, STAGES
    from viewer.frame.stats import FrameStats
    from types import SimpleNamespace

    assert tuple(FrameStats.__dataclass_fields__) == tuple(c.name for c in FRAME_COLUMN_INFO)
    rng = np.random.default_rng(1)
    scene = SimpleNamespace(name="t", centres=rng.uniform(-10, 10, (50, 3)), radii=rng.uniform(1, 20, 50),
                            sizes=np.ones(50, np.float32), colours=np.full((50, 4), 255, np.uint8))
    p = FramePipeline(scene, "brute", indexes=["brute"])
    from viewer.camera import FlyCamera

    cam = FlyCamera(position=(0.0, 0.0, 0.0))
    p.run(cam, 0.0)
    for k, s in enumerate(STAGES):
        p.stage_ms[s.name] = 1.0 + k  # distinct per stage
    row = p.row()
    for k, s in enumerate(STAGES):
        assert getattr(row, s.column) == 1.0 + k, s.name
    assert row.cpu_ms == sum(1.0 + k for k, s in enumerate(STAGES) if s.culling)
    assert row.culling == "cpu" and row.index == "brute"
    from viewer.frame.stages import HUD_COUNTS

    hud = [f"{s.name} " for s in STAGES] + [f"{label} " for _, label in HUD_COUNTS]
    from viewer.drivers.view import summarise

    text = summarise([row])
    assert all(h in text for h in hud), text


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
    from viewer.frame.pipeline import FrameStats

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


@pytest.mark.parametrize("column, value, words", [
    ("query_ms", None, "a finite number, got None"),
    ("draw_ms", "fast", "a finite number, got 'fast'"),
    ("frame_ms", float("nan"), "a finite number, got nan"),
    ("visible", 1.5, "a whole number, got 1.5"),
    ("candidates", None, "a whole number, got None"),
    ("index", 3, "a string, got 3"),
])
def test_a_bad_value_is_refused_by_append_and_the_good_rows_kept(tmp_path, column, value, words):
    """A None stage value used to fail at close(), losing every row while the metadata said complete."""
    p = tmp_path / "bad.csv"
    rec = Recorder(p, flush_rows=4)
    for k in range(10):
        rec.append(fake_row(k))
    with pytest.raises(ValueError, match=f"frame 10: column '{column}' must be {words}"):
        rec.append(fake_row(10), **{column: value})
    rec.append(fake_row(10))  # the recorder goes on
    rec.close()
    run = read_run(p)
    assert np.array_equal(run["frame"], np.arange(11))
    meta = read_meta(p)
    assert meta["frames"] == 11 and meta["complete"] is True


def test_numpy_scalars_and_integral_floats_are_accepted(tmp_path):
    p = tmp_path / "np.csv"
    with Recorder(p) as rec:
        rec.append(fake_row(0), visible=np.int32(5), query_ms=np.float32(0.5), drawn=3.0, moved=np.uint64(2))
    run = read_run(p)
    assert run["visible"][0] == 5 and run["query_ms"][0] == 0.5 and run["drawn"][0] == 3 and run["moved"][0] == 2


def _failing_writes(monkeypatch, allow: int, err=errno.ENOSPC):
    """Make the recorder's writes fail like a full disk once ``allow`` more bytes have been written
    (the write that crosses the limit is short, as a real one is; the next raises)."""
    from viewer.recording import writer

    left = [allow]
    real = os.write

    def write(fd, data):
        if left[0] <= 0:
            raise OSError(err, os.strerror(err))
        n = real(fd, bytes(data[: left[0]]))
        left[0] -= n
        return n

    monkeypatch.setattr(writer.os, "write", write)
    return lambda: monkeypatch.setattr(writer.os, "write", real)


def test_a_full_disk_keeps_the_whole_rows_and_finishes_the_metadata(tmp_path, monkeypatch):
    p = tmp_path / "full.csv"
    rec = Recorder(p, build_meta(index="octree", headless=True), flush_rows=10)
    restore = _failing_writes(monkeypatch, allow=5000)  # a few batches, then a batch torn mid-row
    with pytest.raises(UserError) as err:
        for k in range(10_000):
            rec.append(fake_row(k))
    restore()
    msg = str(err.value)
    assert str(p) in msg and "No space left on device" in msg and f"after {rec.rows_written} frames" in msg
    assert "\n" not in msg
    with pytest.raises(UserError, match="recording stopped"):
        rec.append(fake_row(0))  # no more rows after a failure
    rec.close(ended="error")
    run = _assert_complete(p)  # whole rows only: the torn batch was cut back
    assert len(run) == rec.rows_written > 0
    meta = read_meta(p)
    assert meta["frames"] == len(run) and meta["complete"] is False and meta["ended"] == "write error"
    assert "No space left on device" in meta["error"] and meta["rows_lost"] > 0


def test_a_full_disk_at_close_is_reported_by_a_normal_close(tmp_path, monkeypatch):
    p = tmp_path / "full2.csv"
    rec = Recorder(p, flush_rows=1000)
    for k in range(50):
        rec.append(fake_row(k))
    _failing_writes(monkeypatch, allow=100, err=errno.EFBIG)
    with pytest.raises(UserError, match="File too large"):
        rec.close()
    assert len(_assert_complete(p)) == 0
    assert read_meta(p)["ended"] == "write error"


def test_metadata_is_finished_in_place_when_not_even_it_fits(tmp_path, monkeypatch):
    """With the disk full, the temporary metadata file cannot be written either: the recorder kept
    room in the metadata file and finishes it there."""
    from viewer.recording import meta as meta_mod

    p = tmp_path / "room.csv"
    rec = Recorder(p, build_meta(index="brute", headless=True, label="x" * 300))
    for k in range(20):
        rec.append(fake_row(k))
    real_open = open

    def no_new_files(path, mode="r", *a, **kw):
        if "w" in mode:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_open(path, mode, *a, **kw)

    monkeypatch.setattr(meta_mod, "open", no_new_files, raising=False)
    rec.close()
    meta = read_meta(p)
    assert meta["frames"] == 20 and meta["complete"] is True and meta["label"] == "x" * 300
    assert [f.name for f in tmp_path.iterdir() if f.name.endswith(".tmp")] == []


def test_two_recorders_cannot_write_one_csv(tmp_path):
    from viewer.recording.writer import in_use

    p = tmp_path / "shared.csv"
    first = Recorder(p, flush_rows=1)
    for k in range(5):
        first.append(fake_row(k))
    assert in_use(p)
    with pytest.raises(UserError, match="another recording is writing this file"):
        Recorder(p)
    for k in range(5, 10):
        first.append(fake_row(k))
    first.close()
    assert not in_use(p)
    assert np.array_equal(_assert_complete(p)["frame"], np.arange(10))
    Recorder(p).close()  # free again once closed


def test_a_signal_during_a_write_waits_for_the_write(tmp_path, monkeypatch):
    """SIGINT arriving in the middle of a batch's write is delivered after it: the batch is whole."""
    from viewer.recording import writer

    # as a fresh process has it: Python's own SIGINT handler, SIGINT not blocked (an earlier test of the whole
    # suite may leave it otherwise: in the full run, and only there, SIGINT reached no handler here)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    monkeypatch.setattr(writer, "_previous", {})  # ours goes in front of that handler again
    try:
        _interrupt_a_write(tmp_path, monkeypatch, writer)
    finally:
        signal.signal(signal.SIGINT, previous)


def _interrupt_a_write(tmp_path, monkeypatch, writer) -> None:
    p = tmp_path / "sig.csv"
    rec = Recorder(p, flush_rows=1000)
    for k in range(300):
        rec.append(fake_row(k))
    real = os.write
    calls = [0]

    def write(fd, data):
        calls[0] += 1
        if calls[0] == 1:
            os.kill(os.getpid(), signal.SIGINT)  # the handler runs at the next bytecode: mid-write
            n = real(fd, bytes(data[:100]))  # a short write: the rest follows in the loop
            time.sleep(0.01)
            return n
        return real(fd, data)

    monkeypatch.setattr(writer.os, "write", write)
    with pytest.raises(KeyboardInterrupt):
        rec.flush()
    monkeypatch.setattr(writer.os, "write", real)
    assert calls[0] >= 2 and rec.rows_written == 300
    rec.close(ended="SIGINT")
    assert len(_assert_complete(p)) == 300
    assert read_meta(p)["ended"] == "SIGINT"


def test_meta_path_naming(tmp_path):
    assert meta_path_for(tmp_path / "run.csv") == tmp_path / "run.meta.json"
    assert meta_path_for(tmp_path / "run") == tmp_path / "run.meta.json"


# ----------------------------------------------------------------------------- killed runs

_LOOP = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {root!r})
    from tests.recording.test_recording import fake_row
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


def _as_from_a_terminal() -> None:
    """The child's signal dispositions as a shell in a terminal gives them. A test run started in the
    background without job control (``pytest &`` in a script, nohup) has SIGINT ignored, and a child
    inherits that: Python then leaves Ctrl-C ignored, the recorder rightly keeps it so, and the SIGINT
    case would wait forever for a process that never sees the signal."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _start(path, crash_at=0):
    code = _LOOP.format(root=str(ROOT), path=str(path), crash_at=crash_at)
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=_as_from_a_terminal)


def _finish(proc, timeout=60.0) -> bytes:
    """Wait for the child (draining its pipes, so a chatty child cannot block on a full pipe); kill it
    and fail, with what it printed, if it does not end in time."""
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        raise AssertionError(f"the recorder process did not end within {timeout:g} s: {err.decode()[-2000:]}")
    return err


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
    err = _finish(proc)
    assert proc.returncode != 0
    assert (b"KeyboardInterrupt" in err) if sig == signal.SIGINT else proc.returncode == 128 + sig
    run = _assert_complete(path)
    assert len(run) >= 50
    meta = json.loads(meta_path_for(path).read_text())
    assert meta["frames"] == len(run)  # every buffered row was flushed on the way out
    assert meta["complete"] is False and meta["ended"] == sig.name
    assert meta["label"] == "killed"


def test_a_crashed_recording_keeps_its_buffered_rows(tmp_path):
    path = tmp_path / "crash.csv"
    proc = _start(path, crash_at=123)
    err = _finish(proc)
    assert proc.returncode == 1 and b"boom" in err
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
        "import sys, viewer.recording, viewer.drivers.replay, viewer.paths, viewer.reports.compare, viewer.reports.plot; "
        "print(','.join(m for m in ('moderngl', 'moderngl_window', 'pyglet', 'glcontext', 'matplotlib') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == ""
