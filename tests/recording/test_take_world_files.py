"""A take of a moving world keeps the world as it began (take-N.world.npz, its clock in take-N.meta.json),
and its replay starts the world there and runs the take's own dt: the replay's rows are the take's rows.

The take here is flown by the GL-free pipeline the window runs (the window itself: test_take_world_window.py);
the replay is the real ``viewer record --path DIR/take-1.path.toml`` (headless, EGL)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest

from viewer.camera import InputState
from viewer.drivers.replay import replay, resume_take
from viewer.errors import UserError
from viewer.frame.motion import MotionState, advance, resumed
from viewer.frame.pipeline import FramePipeline, camera_for_scene
from viewer.paths import load_path
from viewer.recording import build_meta, read_run
from viewer.recording.takes import TakeDir, next_take_number, read_take_world
from viewer.scenes import generate_scene

from tests.support.cli import run_cli

ROOT = Path(__file__).resolve().parents[2]
COUNTS = ("visible", "entered", "left", "moved")


def moving_recipe(d: Path) -> Path:
    """scenes/dynamic-100k.toml made small (3000 objects, half of them moving, fast): a recipe file in ``d``."""
    src = (ROOT / "scenes" / "dynamic-100k.toml").read_text()
    for a, b in (("n = 100_000", "n = 3000"), ("clusters = 16", "clusters = 4"), ("share = 0.1", "share = 0.5"),
                 ("speed = 20.0", "speed = 40.0")):
        assert a in src
        src = src.replace(a, b)
    f = d / "moving-small.toml"
    f.write_text(src)
    return f


def uneven_dts(rng, n):
    return rng.uniform(0.004, 0.06, n)


def fly(pipeline, camera, dts, take=None):
    """Frames of the pipeline at ``dts`` with W held (as the window runs them); rows to ``take``."""
    rows = []
    for dt in dts:
        st = pipeline.step(camera, float(dt), input_state=InputState(actions=frozenset({"forward"})))
        rows.append(st)
        if take is not None:
            take.append(st)
    return rows


def test_the_snapshot_resumes_the_world_bit_for_bit():
    scene = generate_scene("clustered", 1500, seed=5, world=1000.0, clusters=3,
                           motion={"share": 0.4, "model": "mixed", "radius_pulse": 0.2})
    rng = np.random.default_rng(1)
    a = MotionState.from_scene(scene)
    for dt in uneven_dts(rng, 150):
        advance(a, dt)
    b = MotionState.from_scene(resumed(scene, a.snapshot()))
    assert (b.t, b.step) == (a.t, a.step) and np.array_equal(b.centres, a.centres)
    for dt in uneven_dts(rng, 150):
        advance(a, dt)
        advance(b, dt)
    assert np.array_equal(a.centres, b.centres) and np.array_equal(a.radii, b.radii) and a.t == b.t
    assert MotionState.from_scene(scene).t == 0.0  # the scene itself still starts at t = 0
    other = generate_scene("clustered", 1500, seed=6, world=1000.0, clusters=3, motion={"share": 0.4})
    with pytest.raises(ValueError, match="ids"):
        resumed(other, a.snapshot())


def test_a_take_keeps_its_world_beside_its_files(tmp_path):
    scene = generate_scene("clustered", 1500, seed=5, world=1000.0, clusters=3, motion={"share": 0.4})
    p = FramePipeline(scene, "brute")
    cam = camera_for_scene(scene)
    rng = np.random.default_rng(2)
    fly(p, cam, uneven_dts(rng, 40))
    takes = TakeDir(tmp_path)
    snap = p.motion.snapshot()
    take = takes.start(build_meta(scene=scene, index="brute", headless=False), world=snap)
    p.restart()
    rows = fly(p, cam, uneven_dts(rng, 30), take)
    assert "take-1.world.npz" in take.close()
    meta = json.loads((tmp_path / "take-1.meta.json").read_text())
    assert meta["world"] == {"t": float(snap["t"]), "step": 40, "movers": scene.motion.m, "file": "take-1.world.npz"}
    tw = read_take_world(tmp_path / "take-1.path.toml")
    assert tw.name == "take-1" and tw.clock == float(snap["t"]) and tw.step == 40
    for k, v in snap.items():
        assert np.array_equal(tw.snapshot[k], v), k
    assert np.array_equal(tw.dt, [r.dt for r in rows]) and tw.t[0] == 0.0
    assert read_take_world(tmp_path / "elsewhere.path.toml") is None

    # a stray world file counts for the numbering; a take closed before its first frame leaves none
    (tmp_path / "take-5.world.npz").write_bytes(b"")
    assert next_take_number(tmp_path) == 6
    empty = takes.start(build_meta(index="brute", headless=False), world=snap)
    assert empty.world_file.exists()
    empty.close()
    assert not any(tmp_path.glob("take-6.*"))


def test_a_damaged_or_foreign_world_file_is_one_message(tmp_path):
    scene = generate_scene("clustered", 800, seed=5, world=1000.0, clusters=3, motion={"share": 0.4})
    state = MotionState.from_scene(scene)
    advance(state, 0.5)
    take = TakeDir(tmp_path).start(build_meta(index="brute", headless=False), world=state.snapshot())
    p = FramePipeline(scene, "brute")
    fly(p, camera_for_scene(scene), [0.02] * 3, take)
    take.close()
    path_file = tmp_path / "take-1.path.toml"
    samples = load_path(path_file).sample(dt=0.02)

    # the take replayed on a scene of other movers: a warning, and that world starts from t = 0
    other = generate_scene("clustered", 800, seed=6, world=1000.0, clusters=3, motion={"share": 0.4})
    r = resume_take(other, samples, path_file)
    assert r.scene is other and r.samples is samples and r.dts is None and r.world is None
    assert "warning: " in r.line and "is not this scene's moving world" in r.line
    r = resume_take(scene, samples, path_file, take_dt=False)
    assert r.dts is None and r.world["dt"] == "fixed" and r.scene.world_start["step"] == 1

    world = tmp_path / "take-1.world.npz"
    good = world.read_bytes()
    world.write_bytes(good[: len(good) // 2])
    with pytest.raises(UserError, match="take-1.world.npz: not a take's world file"):
        read_take_world(path_file)
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(UserError, match="take-1.world.npz: not a take's world file"):  # before any GL or file
        replay(scene, samples, ["brute"], out, path_meta={"source": str(path_file)}, progress=False)
    assert not any(out.iterdir())
    bad = dict(np.load(io.BytesIO(good)))
    bad["centres"] = bad["centres"] * np.nan
    np.savez(world, **bad)
    with pytest.raises(UserError, match="take-1.world.npz: field 'centres': row 0 = \\[nan, nan, nan\\] is outside"):
        resume_take(scene, samples, path_file)
    advance(state, 0.5)  # another moment's world under this take's name
    np.savez(world, **state.snapshot())
    with pytest.raises(UserError, match="not this take's world file"):
        read_take_world(tmp_path / "take-1.path.toml")
    world.unlink()
    with pytest.raises(UserError, match="take-1.world.npz: no such file"):
        read_take_world(tmp_path / "take-1.path.toml")


@pytest.mark.gl
def test_the_replay_of_a_take_started_late_sees_what_was_flown(tmp_path):
    pytest.importorskip("viewer.render")
    from viewer.scenes import load_scene

    recipe = moving_recipe(tmp_path)
    scene = load_scene(recipe)
    rng = np.random.default_rng(3)
    p = FramePipeline(scene, "brute")
    cam = camera_for_scene(scene)
    p.warm_up()
    p.restart()
    fly(p, cam, uneven_dts(rng, 200))  # ~6 s of world before the take
    clock = p.motion.t
    take = TakeDir(tmp_path / "takes").start(build_meta(scene=scene, index="brute", headless=False),
                                             world=p.motion.snapshot())
    p.restart()
    fly(p, cam, uneven_dts(rng, 60), take)
    take.close()
    run = read_run(tmp_path / "takes" / "take-1.csv")
    assert run["moved"].min() == scene.motion.m and clock > 5.0

    path_file = tmp_path / "takes" / "take-1.path.toml"
    r = run_cli("record", recipe, "--path", path_file, "--index", "brute", "--size", "160x90",
                "-o", tmp_path / "replay", "-q", cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert f"world clock {clock:.1f} s (step 200) from take-1.meta.json; the take's 60 frames at their own dt" \
        in r.stderr, r.stderr
    rep = read_run(tmp_path / "replay" / "brute.csv")
    assert len(rep) == len(run)
    for c in ("t", "dt", *COUNTS):
        assert np.array_equal(rep[c], run[c]), c
    assert rep.meta["world"]["t"] == clock and rep.meta["world"]["dt"] == "take"

    # the bug this fixes: the same poses and dts over the world from t = 0 see other objects
    path = load_path(path_file)
    fresh = FramePipeline(scene, "brute")
    pos, yaw, pitch = path.evaluate(run["t"])
    seen = [fresh.step(cam, float(dt), pose=(*pos[k], yaw[k], pitch[k])).visible for k, dt in enumerate(run["dt"])]
    assert seen != list(run["visible"])

    # at a fixed --dt the world still starts at the take's clock, and says the movers drift off
    r = run_cli("record", recipe, "--path", path_file, "--index", "brute", "--size", "160x90", "--dt", "0.02",
                "-o", tmp_path / "fixed", "-q", cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "at a fixed dt of 0.02 s (--dt / --frames asked for)" in r.stderr, r.stderr
    fixed = read_run(tmp_path / "fixed" / "brute.csv")
    assert (fixed["dt"] == 0.02).all() and fixed.meta["world"] == {**rep.meta["world"], "dt": "fixed"}
