"""Issue 28.3: ``viewer record`` on a first run says that it compiles kernels, by group, compiles only what
the recording runs, and is quiet once they are cached; by default a generated path is a demo of the whole
flight in at most ``DEMO_FRAMES`` frames, ``--full`` records every frame at 1/60 s."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from viewer.kernels.compile import HEADER

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.gl


@pytest.fixture(scope="module")
def scene_file(tmp_path_factory):
    from viewer.scenes import generate_scene, save_scene

    d = tmp_path_factory.mktemp("scene")
    return save_scene(generate_scene("clustered", 3000, seed=11, clusters=5), d / "tiny.npz")


@pytest.mark.slow
def test_a_first_record_says_it_compiles_and_compiles_only_what_it_runs(scene_file, tmp_path):
    from viewer.index import _octree_kernels as K
    from viewer.paths import CameraPath, save_path

    path = tmp_path / "p.toml"
    save_path(CameraPath([0.0, 1.0, 2.0], [[0, 0, 0], [500, 0, 0], [500, 500, 0]], [0.0, 45.0, 90.0], [0.0] * 3), path)
    cache = tmp_path / "numba-cache"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))

    def record(out: str) -> str:
        r = subprocess.run([sys.executable, "-m", "viewer", "record", str(scene_file), "--path", str(path), "--index",
                            "octree", "--frames", "20", "--size", "64x36", "-o", str(tmp_path / out)], cwd=ROOT,
                           env=env, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
        return r.stderr

    err = record("cold")
    print(err)
    lines = err.splitlines()
    assert lines[0] == HEADER, err  # the first line, before the silence of compiling
    assert any(line.startswith("  octree ... ") for line in lines), err
    assert any(line.startswith("  frame ... ") for line in lines), err
    assert any(line.startswith("compiled ") for line in lines), err
    compiled = {p.name.split("-")[0] for p in cache.rglob("*.nbi")}
    assert "_octree_kernels.query" in compiled and "_frame_kernels.gather_instances" in compiled, compiled
    # a still world, queried only: the octree's updates and the movers' step are not compiled
    for name in ("insert_one", "remove_one", "move_single", "move_many", "refit_some"):
        assert hasattr(K, name), name
        assert f"_octree_kernels.{name}" not in compiled, name
    assert "_motion_kernels.advance_kernel" not in compiled
    # one view: the octree's walk shared by a batch of points (views, clients) is not compiled either
    assert "_octree_many_kernels.query_shared" not in compiled

    warm = record("warm")
    assert "compiling" not in warm and "compiled" not in warm, warm

    # a still world's headless view runs what that record ran, in its warm scope: nothing more compiles
    r = subprocess.run([sys.executable, "-m", "viewer", "view", str(scene_file), "--headless", "--frames", "3",
                        "--size", "64x36"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "compiling" not in r.stderr and "compiled" not in r.stderr, r.stderr
    assert {p.name.split("-")[0] for p in cache.rglob("*.nbi")} == compiled


def test_the_default_record_of_a_generated_path_is_a_demo_and_full_records_every_frame(scene_file, tmp_path, capsys):
    from viewer.cli import main
    from viewer.commands.record import DEMO_FRAMES
    from viewer.paths import generated_path
    from viewer.recording import read_run
    from viewer.scenes import load_scene

    speed = 2000.0  # a 53 s flight: 3196 frames at 1/60 s
    full = len(generated_path(load_scene(str(scene_file)), speed=speed).sample(dt=1 / 60))
    assert full > DEMO_FRAMES
    args = ["record", str(scene_file), "--index", "brute", "--size", "32x18", "--speed", str(speed)]
    assert main([*args, "-o", str(tmp_path / "demo")]) == 0
    err = capsys.readouterr().err
    assert f"{DEMO_FRAMES} frames" in err and "a demo" in err and f"--full records all {full}" in err, err
    run = read_run(tmp_path / "demo" / "brute.csv")
    assert len(run["frame"]) == DEMO_FRAMES

    assert main([*args, "--full", "-o", str(tmp_path / "full")]) == 0
    err = capsys.readouterr().err
    assert "a demo" not in err and f"{full} frames" in err, err
    run = read_run(tmp_path / "full" / "brute.csv")
    assert len(run["frame"]) == full
    assert abs(float(run["dt"][0]) - 1 / 60) < 1e-9
