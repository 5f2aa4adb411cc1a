"""Window takes without a window: numbering that never overwrites, the CSV of every frame as flown, the
thinned path file reproducing the flown poses, and files complete however the take ends."""

from __future__ import annotations

import numpy as np
import pytest

from viewer.frame.pipeline import FrameStats
from viewer.paths import ANGLE_TOLERANCE, POSITION_TOLERANCE, load_path
from viewer.recording import build_meta, read_run
from viewer.recording.takes import TakeDir, next_take_number


def flight(frames=240, seed=0, index_switch_at=100):
    """FrameStats of a wobbly flight with uneven real dt and an index switch."""
    rng = np.random.default_rng(seed)
    pos = np.zeros(3)
    yaw = 170.0
    rows = []
    for k in range(frames):
        dt = float(rng.uniform(0.008, 0.04))
        yaw = (yaw + rng.normal(1.5, 2.0) + 180) % 360 - 180
        pos = pos + dt * np.array([np.sin(np.radians(yaw)), 0.1, -np.cos(np.radians(yaw))]) * 50
        rows.append(FrameStats(frame=1000 + k, t=99.0, dt=dt, cam_x=pos[0], cam_y=pos[1], cam_z=pos[2], yaw=yaw,
                               pitch=float(np.clip(10 * np.sin(k / 30), -89, 89)),
                               index="octree" if k < index_switch_at else "hashgrid", objects=10, visible=3,
                               drawn=2, query_ms=0.01, frame_ms=1.0))
    return rows


def test_takes_number_up_and_never_overwrite(tmp_path):
    d = TakeDir(tmp_path / "runs")
    assert next_take_number(d.directory) == 1
    a = d.start(build_meta(index="octree", headless=False))
    (tmp_path / "runs" / "take-7.path.toml").write_text("not ours")  # a stray higher number
    b = d.start(build_meta(index="octree", headless=False))
    assert (a.number, b.number) == (1, 8)
    a.close()
    b.close()
    c = d.start(build_meta(index="octree", headless=False))
    assert c.number == 9
    c.close()
    assert (tmp_path / "runs" / "take-7.path.toml").read_text() == "not ours"


def test_a_take_records_every_frame_as_flown_and_its_path_reproduces_the_poses(tmp_path):
    rows = flight()
    take = TakeDir(tmp_path).start(build_meta(index="octree", headless=False, vsync=False), flush_rows=16)
    for st in rows:
        take.append(st)
    line = take.close()
    assert "take-1: 240 frames" in line
    run = read_run(tmp_path / "take-1.csv")
    assert list(run["frame"]) == list(range(240))
    dts = np.array([r.dt for r in rows])
    np.testing.assert_array_equal(run["dt"], dts)
    # t: the flight's clock from the first frame, each later frame's dt added
    np.testing.assert_allclose(run["t"], np.concatenate([[0.0], np.cumsum(dts[1:])]), rtol=0, atol=1e-12)
    idx = list(run["index"])
    assert idx[:100] == ["octree"] * 100 and idx[100:] == ["hashgrid"] * 140
    assert run.meta["window"]["headless"] is False and run.meta["complete"] is True
    assert run.meta["indexes"] == ["octree", "hashgrid"] and run.meta["frames"] == 240
    path = load_path(tmp_path / "take-1.path.toml")
    assert 2 <= len(path) <= 240 and run.meta["path"]["keyframes"] == len(path)
    p, yaw, pitch = path.evaluate(run["t"])
    flown = np.column_stack([run["cam_x"], run["cam_y"], run["cam_z"]])
    assert np.linalg.norm(p - flown, axis=1).max() <= POSITION_TOLERANCE
    assert np.abs((yaw - run["yaw"] + 180) % 360 - 180).max() <= ANGLE_TOLERANCE
    assert np.abs(pitch - run["pitch"]).max() <= ANGLE_TOLERANCE


def test_a_one_frame_take_keeps_its_row_and_writes_no_path(tmp_path):
    take = TakeDir(tmp_path).start(build_meta(index="brute", headless=False))
    take.append(flight(1)[0])
    assert "take-1.path.toml" not in take.close()
    assert len(read_run(tmp_path / "take-1.csv")["frame"]) == 1
    assert not (tmp_path / "take-1.path.toml").exists()


def test_a_take_dir_that_cannot_be_made_is_a_user_error(tmp_path):
    from viewer.errors import UserError

    (tmp_path / "file").write_text("x")
    with pytest.raises(UserError, match="not a directory"):
        TakeDir(tmp_path / "file" / "runs")
