"""What a new user meets first: the default fly-through of every bundled scene draws something in most
of its frames, and the headless screenshot shows the scene."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from viewer.scenes import bundled_recipes, load_scene

from tests.support.cli import run_cli

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = sorted(bundled_recipes())
# the -1m recipes share their layouts with the -100k ones (N changes, the clusters stay); measured on all
# of them with viewer record, too long for the suite
SMALL = [n for n in BUNDLED if n.endswith("-100k")]


def _share(name: str) -> tuple[float, int]:
    from viewer.paths import drawn_share, generated_path

    scene = load_scene(name)
    return drawn_share(scene, generated_path(scene), dt=1 / 60)


@pytest.mark.parametrize("name", SMALL)
def test_the_default_path_draws_something_in_three_quarters_of_its_frames(name):
    share, frames = _share(name)
    assert frames > 600 and share >= 0.75, (name, share)


def test_a_generated_path_returns_to_its_busiest_view():
    from viewer.paths import generated_path
    from viewer.paths.generate import _Probe

    scene = load_scene("clustered-100k")
    path = generated_path(scene)
    probe = _Probe(scene, 16 / 9)
    s = path.sample(frames=200)
    last = probe.drawn(s.pose(len(s) - 1))
    assert last >= 100 and last >= max(probe.drawn(s.pose(k)) for k in range(0, len(s), 10))


@pytest.mark.gl
def test_the_headless_screenshot_shows_the_scene(tmp_path):
    shot = tmp_path / "shot.png"
    r = run_cli("view", "clustered-100k", "--headless", "--frames", "20", "--size", "320x180", "--screenshot", shot,
                cwd=ROOT)
    assert r.returncode == 0, r.stderr
    from PIL import Image

    from viewer.render.session import FOG_COLOUR

    img = np.asarray(Image.open(shot).convert("RGB")).astype(int)
    assert img.shape == (180, 320, 3)
    fog = np.round(np.array(FOG_COLOUR) * 255).astype(int)
    covered = (np.abs(img - fog).max(axis=2) > 12).mean()
    assert covered > 0.3, covered  # objects cover a real share of the picture, not a few specks


RECIPE = """
generator = "clustered"
n = 20000
seed = 3
world = 4000.0
[params]
clusters = 6
[motion]
share = 0.2
model = "mixed"
radius_pulse = 0.2
"""


@pytest.mark.gl
@pytest.mark.slow
def test_no_recorded_row_pays_for_compilation_even_with_an_empty_kernel_cache(tmp_path):
    """The first recording after install: numba's cache is empty, so warm-up must compile every kernel a
    recorded frame runs (moves, motion, events, query, cull, gather) before frame 0."""
    import os

    from viewer.recording import read_run

    recipe = tmp_path / "moving.toml"
    recipe.write_text(RECIPE)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"))
    r = subprocess.run([sys.executable, "-m", "viewer", "record", str(recipe), "--frames", "40", "--index", "brute",
                        "octree", "--size", "64x36", "-o", str(tmp_path / "out"), "-q"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert any((tmp_path / "numba-cache").rglob("*.nbi"))  # the cache really started empty and filled
    for name in ("brute", "octree"):
        run = read_run(tmp_path / "out" / f"{name}.csv")
        assert (run["moved"] > 0).all()
        for col in ("update_ms", "query_ms", "cull_ms", "gather_ms", "frame_ms"):
            first, median = float(run[col][0]), float(np.median(run[col]))
            # compiling a kernel costs hundreds of milliseconds; a warm frame 0 is like any other
            assert first <= max(10.0 * median, median + 5.0), (name, col, first, median)
