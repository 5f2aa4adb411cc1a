"""Camera paths: interpolation, files (round trip and every bad-input case), flight recording, and the
paths generated per scene."""

from __future__ import annotations

import json

import numpy as np
import pytest

from viewer.errors import UserError
from viewer.paths import FRAME_DT, GENERATED, CameraPath, PathRecorder, generated_path, load_path, probe_index

from tests.support.cli import run_cli


def line_path():
    return CameraPath([0.0, 1.0, 2.0, 3.0], [[0, 0, 0], [10, 0, 0], [20, 0, 0], [30, 0, 0]], [90, 90, 90, 90], [0, 0, 0, 0])


# ----------------------------------------------------------------------------- interpolation


def test_passes_through_every_keyframe():
    rng = np.random.default_rng(3)
    t = np.cumsum(rng.uniform(0.1, 2.0, 9))
    p = CameraPath(t, rng.uniform(-100, 100, (9, 3)), rng.uniform(-180, 180, 9), rng.uniform(-80, 80, 9))
    pos, yaw, pitch = p.evaluate(t)
    np.testing.assert_allclose(pos, p.positions, atol=1e-9)
    np.testing.assert_allclose((yaw - p.yaw + 180) % 360 - 180, 0, atol=1e-9)
    np.testing.assert_allclose(pitch, p.pitch, atol=1e-9)


def test_evenly_spaced_collinear_keyframes_give_a_straight_constant_speed_line():
    s = line_path().sample(frames=31)
    np.testing.assert_allclose(s.positions[:, 0], np.arange(31), atol=1e-9)
    assert (s.positions[:, 1:] == 0).all()
    assert np.allclose(s.yaw, 90) and s.dt == pytest.approx(0.1)


def test_yaw_turns_the_short_way_round():
    p = CameraPath([0, 1], [[0, 0, 0], [1, 0, 0]], [170, -170], [0, 0])
    _, yaw, _ = p.evaluate(np.linspace(0, 1, 11))
    wrapped = (yaw - 170) % 360  # 0 .. 20 degrees, never through 0
    assert wrapped.max() <= 20 + 1e-9
    assert abs(p.pose_at(0.5)[3]) == pytest.approx(180)


def test_interpolation_is_smooth():
    """C1: velocity is continuous across keyframes (a Catmull-Rom / Hermite spline)."""
    p = CameraPath([0, 1, 3, 4], [[0, 0, 0], [5, 2, 0], [9, -3, 4], [12, 0, 0]], [0, 10, 20, 30], [0, 5, 10, 5])
    h = 1e-6
    for tk in p.times[1:-1]:
        before = (p.evaluate([tk])[0] - p.evaluate([tk - h])[0]) / h
        after = (p.evaluate([tk + h])[0] - p.evaluate([tk])[0]) / h
        np.testing.assert_allclose(before, after, atol=1e-3)


def test_sample_semantics():
    p = line_path()
    assert len(p.sample(dt=0.5)) == 7
    s = p.sample(frames=5, dt=1.0)  # past the end: held at the last keyframe
    assert s.positions[-1, 0] == 30 and len(s) == 5
    s = p.sample(frames=100, dt=1.0)
    assert (s.positions[4:, 0] == 30).all()
    assert p.sample(frames=10).t[-1] == pytest.approx(3.0)
    one = p.sample(frames=1)  # the start, one ordinary frame's step (not the whole path's duration)
    assert list(one.t) == [0.0] and one.dt == FRAME_DT and one.positions[0, 0] == 0
    with pytest.raises(ValueError):
        p.sample(frames=0)


def test_sampling_is_deterministic():
    a = line_path().sample(dt=1 / 60)
    b = line_path().sample(dt=1 / 60)
    assert np.array_equal(a.positions, b.positions) and np.array_equal(a.yaw, b.yaw)


# ----------------------------------------------------------------------------- files


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_file_round_trip_is_exact(tmp_path, suffix):
    rng = np.random.default_rng(1)
    p = CameraPath(np.cumsum(rng.uniform(0.1, 1, 5)), rng.normal(0, 1e4, (5, 3)), rng.uniform(-180, 180, 5),
                   rng.uniform(-89, 89, 5), name='a "quoted" name')
    dest = p.save(tmp_path / f"p{suffix}")
    q = load_path(dest)
    for a in ("times", "positions", "yaw", "pitch"):
        assert np.array_equal(getattr(p, a), getattr(q, a)), a
    assert q.name == p.name
    assert not [f for f in tmp_path.iterdir() if f.name.startswith(".")]  # no temp file left


def test_a_hand_written_file_loads(tmp_path):
    f = tmp_path / "hand.toml"
    f.write_text(
        """
# my flight
name = "hand"
[[keyframe]]
t = 0
position = [0, 10, 50]
yaw = 0
pitch = -5
[[keyframe]]
t = 2.5
position = [100, 10, 50]
yaw = 90
pitch = 0
"""
    )
    p = load_path(f)
    assert p.name == "hand" and p.duration == 2.5 and p.pose_at(2.5) == (100.0, 10.0, 50.0, 90.0, 0.0)


KEY = 't = {t}\nposition = [0.0, 0.0, 0.0]\nyaw = 0.0\npitch = 0.0\n'

BAD = {
    "empty": ("", "empty file"),
    "blank": ("   \n\n", "empty file"),
    "not toml": ("[[keyframe]\nt = ", "not valid TOML"),
    "no keyframes": ('name = "x"\n', "no keyframes"),
    "one keyframe": ("[[keyframe]]\n" + KEY.format(t=0), "at least 2 keyframes, found 1"),
    "keyframe not a list": ("keyframe = 3\n", "must be a list of tables"),
    "missing field": ("[[keyframe]]\nt = 0\nposition = [0,0,0]\nyaw = 0\n[[keyframe]]\n" + KEY.format(t=1),
                      r"keyframe\[0\]: missing field 'pitch'"),
    "unknown field": ("[[keyframe]]\n" + KEY.format(t=0) + "roll = 3\n[[keyframe]]\n" + KEY.format(t=1),
                      r"keyframe\[0\]: unknown field 'roll'"),
    "unknown top field": ('speed = 3\n[[keyframe]]\n' + KEY.format(t=0) + "[[keyframe]]\n" + KEY.format(t=1),
                          "unknown field 'speed'"),
    "string number": ("[[keyframe]]\n" + KEY.format(t='"0"') + "[[keyframe]]\n" + KEY.format(t=1),
                      r"keyframe\[0\]\.t: must be a number"),
    "nan": ("[[keyframe]]\n" + KEY.format(t=0) + "[[keyframe]]\n" + KEY.format(t="nan"), r"keyframe\[1\]\.t: must be finite"),
    "bool": ("[[keyframe]]\n" + KEY.format(t="true") + "[[keyframe]]\n" + KEY.format(t=1), "must be a number"),
    "short position": ("[[keyframe]]\nt = 0\nposition = [0, 0]\nyaw = 0\npitch = 0\n[[keyframe]]\n" + KEY.format(t=1),
                       r"keyframe\[0\]\.position: must be a list of 3 numbers"),
    "time goes back": ("[[keyframe]]\n" + KEY.format(t=1) + "[[keyframe]]\n" + KEY.format(t=1),
                       r"keyframe\[1\]\.t: 1 is not after"),
    "pitch too steep": ("[[keyframe]]\nt = 0\nposition = [0,0,0]\nyaw = 0\npitch = 95\n[[keyframe]]\n" + KEY.format(t=1),
                        r"keyframe\[0\]\.pitch: 95 is outside"),
    "yaw beyond rounding": ("[[keyframe]]\nt = 0\nposition = [0,0,0]\nyaw = 1e300\npitch = 0\n[[keyframe]]\n"
                            + KEY.format(t=1), r"keyframe\[0\]\.yaw: 1e\+300 is beyond the largest angle"),
    "wrong version": ("version = 7\n[[keyframe]]\n" + KEY.format(t=0) + "[[keyframe]]\n" + KEY.format(t=1),
                      "field 'version' is 7"),
    "wrong format": ('format = "something"\n', "field 'format'"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_path_files_name_the_file_and_field(tmp_path, case):
    text, message = BAD[case]
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(UserError, match=message) as exc:
        load_path(f)
    assert str(f) in str(exc.value)


def test_bad_json_and_missing_files(tmp_path):
    f = tmp_path / "bad.json"
    f.write_text("{\"keyframe\": [")
    with pytest.raises(UserError, match="not valid JSON"):
        load_path(f)
    f.write_text(json.dumps([1, 2]))
    with pytest.raises(UserError, match="top level"):
        load_path(f)
    with pytest.raises(UserError, match="no such camera path file"):
        load_path(tmp_path / "nope.toml")
    with pytest.raises(UserError, match="is a directory"):
        load_path(tmp_path)
    b = tmp_path / "bin.toml"
    b.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(UserError, match="not a text file"):
        load_path(b)


def test_save_into_a_missing_directory_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        line_path().save(tmp_path / "no" / "p.toml")


# ----------------------------------------------------------------------------- recording a flight


def test_path_recorder_drops_and_captures_keyframes(tmp_path):
    rec = PathRecorder(interval=0.25)
    with pytest.raises(UserError, match="at least 2 keyframes"):
        rec.path()
    t = 10.0
    kept = 0
    for k in range(60):  # one second at 60 fps, the whole flight captured
        kept += rec.capture(t + k / 60, (k, 0.0, 0.0, 90.0, 0.0))
    assert kept == len(rec) == 4  # t = 0, 0.25, 0.5, 0.75 (1/60 steps)
    assert rec.add(t + 1.0, (60.0, 0.0, 0.0, 90.0, 95.0))  # a key press, pitch clamped
    assert not rec.add(t + 1.0, (0, 0, 0, 0, 0))  # same time again: ignored
    p = rec.path()
    assert p.times[0] == 0.0 and p.times[-1] == pytest.approx(1.0) and p.pitch[-1] == 89.0
    q = load_path(rec.save(tmp_path / "flight.toml"))
    assert np.array_equal(q.positions, p.positions)


# ----------------------------------------------------------------------------- generated paths


@pytest.fixture(scope="module")
def scenes_():
    from viewer.scenes import generate_scene

    return {
        "clustered": generate_scene("clustered", 3000, seed=5, clusters=8),
        "diagonal": generate_scene("diagonal", 3000, seed=5),
        "remote": generate_scene("remote-cluster", 3000, seed=5),
        "uniform": generate_scene("uniform", 3000, seed=5),
    }


@pytest.mark.parametrize("kind", GENERATED)
@pytest.mark.parametrize("name", ["clustered", "diagonal", "remote", "uniform"])
def test_generated_paths_are_valid_and_deterministic(scenes_, name, kind):
    a = generated_path(scenes_[name], kind)
    b = generated_path(scenes_[name], kind)
    assert np.array_equal(a.positions, b.positions) and np.array_equal(a.yaw, b.yaw)
    s = a.sample(dt=1 / 30)
    assert len(s) > 10 and np.isfinite(s.positions).all()
    assert (np.abs(s.pitch) <= 89).all()
    # the camera moves (no two consecutive keyframes at the same place)
    assert (np.linalg.norm(np.diff(a.positions, axis=0), axis=1) > 0).all()


@pytest.mark.parametrize("index", ["brute", "scan", "hashgrid"])
def test_a_generated_path_is_the_same_whichever_index_paces_it(scenes_, index):
    """The probe that paces a path runs the run's own index (nothing else compiles for it): every index answers
    exactly, so the path is the octree's to the bit."""
    sc = scenes_["clustered"]
    a, b = generated_path(sc), generated_path(sc, index=index)
    assert np.array_equal(a.positions, b.positions) and np.array_equal(a.times, b.times)
    assert np.array_equal(a.yaw, b.yaw) and np.array_equal(a.pitch, b.pitch)


def test_the_probe_runs_the_first_registered_index_of_a_run_else_the_octree():
    assert probe_index(["brute", "octree"]) == "brute"
    assert probe_index(["gpu", "hashgrid"]) == "hashgrid"  # a GPU mode is no index
    assert probe_index(["gpu"]) == probe_index([]) == "octree"
    assert probe_index(["examples/my_index/my_index.py:GridIndex"]) == "octree"  # a spec: maybe slow, maybe not exact


def test_generated_flythrough_crosses_the_clusters(scenes_):
    sc = scenes_["clustered"]
    s = generated_path(sc, "clusters").sample(dt=1 / 60)
    counts = np.bincount(sc.category[sc.category >= 0], minlength=len(sc.cluster_centres))
    heaviest = np.argsort(-counts, kind="stable")[:6]
    for c in heaviest:
        d = np.linalg.norm(s.positions - sc.cluster_centres[c], axis=1).min()
        assert d < max(sc.cluster_spread[c], 1.0), (c, d)


def test_generated_path_runs_along_the_diagonal(scenes_):
    sc = scenes_["diagonal"]
    ends = sc.extras["diagonal"]
    a, b = np.asarray(ends["start"]), np.asarray(ends["end"])
    s = generated_path(sc, "diagonal").sample(dt=1 / 60)
    u = (b - a) / np.linalg.norm(b - a)
    rel = s.positions - a
    off = np.linalg.norm(rel - (rel @ u)[:, None] * u, axis=1)
    assert off.max() < 1e-6 * sc.world
    along = rel @ u
    assert along.max() - along.min() > 0.85 * np.linalg.norm(b - a)
    # looking along the diagonal
    f = np.stack([np.cos(np.radians(s.pitch)) * np.sin(np.radians(s.yaw)), np.sin(np.radians(s.pitch)),
                  -np.cos(np.radians(s.pitch)) * np.cos(np.radians(s.yaw))], axis=1)
    assert (f @ u > 0.999).all()


@pytest.mark.parametrize("kind", ["remote", "flythrough"])
def test_generated_paths_pass_near_the_remote_cluster_but_outside_its_keep_out(scenes_, kind):
    sc = scenes_["remote"]
    r = sc.extras["remote"]
    s = generated_path(sc, kind).sample(dt=1 / 60)
    d = np.linalg.norm(s.positions - np.asarray(r["centre"]), axis=1)
    assert d.min() >= r["keep_out"]
    assert d.min() <= 1.2 * r["keep_out"]
    # from outside the keep-out distance the camera's query sees none of the remote objects
    from viewer.index import brute_query

    remote_ids = np.flatnonzero(sc.category == 0)
    for p in s.positions[:: 10]:
        assert not np.isin(brute_query(sc.centres, sc.radii, p), remote_ids).any()


def test_unknown_generated_kind():
    import types

    sc = types.SimpleNamespace(centres=np.zeros((3, 3)))
    with pytest.raises(UserError, match="unknown generated path"):
        generated_path(sc, "spiral")


# ----------------------------------------------------------------------------- hostile files


def _keys(n=2):
    return [{"t": float(i), "position": [0.0, 0.0, 0.0], "yaw": 0.0, "pitch": 0.0} for i in range(n)]


@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_a_path_file_nested_100000_deep_is_one_message(tmp_path, suffix):
    f = tmp_path / f"deep{suffix}"
    f.write_text('{"keyframe": ' + "[" * 100_000 + "]" * 100_000 + "}" if suffix == ".json"
                 else "keyframe = " + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(UserError, match="nested too deeply") as exc:
        load_path(f)
    assert str(f) in str(exc.value) and "\n" not in str(exc.value)


@pytest.mark.parametrize("field", ["t", "position", "yaw", "pitch"])
@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_a_400_digit_integer_in_a_path_file_is_one_message(tmp_path, suffix, field):
    big = "9" * 400
    keys = _keys()
    keys[1][field] = ["BIG", 0.0, 0.0] if field == "position" else "BIG"
    if suffix == ".json":
        text = json.dumps({"keyframe": keys})
    else:
        text = "".join("[[keyframe]]\n" + "".join(f"{a} = {json.dumps(b)}\n" for a, b in k.items()) for k in keys)
    text = text.replace('"BIG"', big)
    f = tmp_path / f"big{suffix}"
    f.write_text(text)
    with pytest.raises(UserError) as exc:
        load_path(f)
    msg = str(exc.value)
    assert str(f) in msg and f"keyframe[1].{field}" in msg and big not in msg, msg


def test_path_files_refuse_coordinates_beyond_the_domain(tmp_path):
    f = tmp_path / "far.json"
    keys = _keys()
    keys[0]["position"] = [1e300, 0.0, 0.0]
    f.write_text(json.dumps({"keyframe": keys}))
    with pytest.raises(UserError, match=r"keyframe\[0\]\.position: 1e\+300 is beyond"):
        load_path(f)


def test_a_fifo_or_device_is_refused_without_reading(tmp_path):
    import os

    fifo = tmp_path / "p.toml"
    os.mkfifo(fifo)
    with pytest.raises(UserError, match="not a regular file"):
        load_path(fifo)  # would block forever if opened
    link = tmp_path / "zero.toml"
    link.symlink_to("/dev/zero")
    with pytest.raises(UserError, match="not a regular file"):
        load_path(link)


def test_the_cli_says_one_line_for_a_deep_path_file(tmp_path):

    f = tmp_path / "deep.json"
    f.write_text("[" * 100_000 + "]" * 100_000)
    r = run_cli("record", "uniform-100k", "--path", f, "-o", tmp_path / "out")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert str(f) in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "out").exists()


# ----------------------------------------------------------------------------- thinning a flight


def test_simplify_keeps_the_ends_of_a_straight_even_flight_and_every_pose_within_tolerance():
    from viewer.paths import ANGLE_TOLERANCE, POSITION_TOLERANCE, simplify

    t = np.arange(200) / 60.0
    line = CameraPath(t, np.column_stack([t * 100, np.zeros_like(t), np.zeros_like(t)]), np.full(t.size, 90.0),
                      np.zeros(t.size))
    assert len(simplify(line)) == 2
    rng = np.random.default_rng(4)
    # a wandering flight with uneven frame times and turns through +-180
    dt = rng.uniform(0.005, 0.05, 600)
    t = np.concatenate([[0.0], np.cumsum(dt[1:])])
    # held keys: piecewise constant velocity (uneven frames); turns smooth in time, through +-180
    vel = np.repeat(rng.normal(0, 50, (12, 3)), 50, axis=0)
    pos = np.cumsum(vel * dt[:, None], axis=0)
    yaw = (170 + 40 * t + 10 * np.sin(t) + 180) % 360 - 180
    pitch = 30 * np.sin(t / 3)
    flight = CameraPath(t, pos, yaw, pitch)
    thin = simplify(flight)
    assert 2 < len(thin) < len(flight) / 2
    p, y, pi = thin.evaluate(t)
    assert np.linalg.norm(p - pos, axis=1).max() <= POSITION_TOLERANCE
    assert np.abs((y - yaw + 180) % 360 - 180).max() <= ANGLE_TOLERANCE
    assert np.abs(pi - pitch).max() <= ANGLE_TOLERANCE
