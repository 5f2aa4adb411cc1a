"""What a new user meets first: the default fly-through of every bundled scene draws something in most
of its frames, and the headless screenshot shows the scene."""

from __future__ import annotations

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
