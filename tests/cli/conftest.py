"""What the command tests share: a world of two tiny scenes, a take flown in one and a run replaying it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.cli import run_cli

ROOT = Path(__file__).resolve().parents[2]


def tiny_recipe(directory: Path, bundled: str, name: str) -> Path:
    """A bundled recipe (scenes/BUNDLED.toml) with n = 2000, written as DIRECTORY/NAME.toml."""
    text = (ROOT / "scenes" / f"{bundled}.toml").read_text()
    text, k = re.subn(r"(?m)^n = .*$", "n = 2000", text)
    assert k == 1
    p = directory / f"{name}.toml"
    p.write_text(text)
    return p


@pytest.fixture(scope="session")
def world(tmp_path_factory):
    """Two tiny scenes, a window take flown in the first (written through the take API, as the R key does),
    and a run recorded by replaying that take on its own scene (``viewer record --path``)."""
    from viewer.frame.pipeline import FrameStats
    from viewer.recording import build_meta
    from viewer.recording.takes import TakeDir
    from viewer.scenes import load_scene

    d = tmp_path_factory.mktemp("world")
    clustered = tiny_recipe(d, "clustered-100k", "tiny-clustered")
    uniform = tiny_recipe(d, "uniform-100k", "tiny-uniform")
    take = TakeDir(d / "flight").start(build_meta(scene=load_scene(clustered), index="brute", headless=False))
    for k in range(30):
        take.append(FrameStats(frame=k, t=0.0, dt=1 / 60, cam_x=10.0 * k, cam_y=50.0, cam_z=-5.0 * k, yaw=0.5 * k,
                               pitch=-5.0, index="brute", objects=2000, visible=3, drawn=2, query_ms=0.01,
                               frame_ms=1.0))
    take.close()
    path_file = d / "flight" / "take-1.path.toml"
    assert path_file.is_file()
    runs = d / "runs"
    status, out, err = run_cli("record", clustered, "--path", path_file, "--index", "brute", "--frames", "10",
                              "--size", "64x48", "-q", "-o", runs)
    assert status == 0, err
    return {"dir": d, "clustered": clustered, "uniform": uniform, "take_path": path_file, "runs": runs,
            "replay_err": err}
