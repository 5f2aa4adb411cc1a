"""A camera path is checked where it is sampled, not only at its keyframes: a curve that leaves the numeric
domain between keyframes (a cubic overshoot past 2**100), keyframes too close in time for their distance (an
infinite speed) and times spanning more than 2**100 s are one message naming the file, exit 2, for
the commands that fly a path; nothing is written."""

from __future__ import annotations

import numpy as np
import pytest

from viewer.errors import UserError
from viewer.paths import CameraPath, load_path
from viewer.paths.spline import PathDomainError

from tests.support.cli import run_cli

BIG = 2.0**100


def keyframes(ts, xs) -> str:
    return "".join(f"[[keyframe]]\nt = {t!r}\nposition = [{x!r}, 0.0, 0.0]\nyaw = 0.0\npitch = 0.0\n\n"
                   for t, x in zip(ts, xs))


CASES = {
    # the cubic through 0, 2**100, 2**100 overshoots past 2**100 between the last two keyframes
    "overshoot": (keyframes([0.0, 1.0, 2.0], [0.0, BIG, BIG]), "leaves the numeric domain"),
    "tiny-step": (keyframes([0.0, 1e-310], [0.0, 1.0]), "too close in time"),
    "huge-span": (keyframes([-1e308, 1e308], [0.0, 1.0]), "more than the numeric domain"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_path_leaving_the_domain_is_refused_in_code(tmp_path, case):
    text, msg = CASES[case]
    f = tmp_path / f"{case}.toml"
    f.write_text(text)
    with pytest.raises((PathDomainError, UserError), match=msg):
        load_path(f).sample(frames=200)


def test_a_path_inside_the_domain_still_samples():
    p = CameraPath([0.0, 1.0, 2.0], [[0, 0, 0], [1e20, 0, 0], [0, 0, 0]], [0, 0, 0], [0, 0, 0])
    pos = p.sample(frames=50).positions
    assert np.isfinite(pos).all() and np.abs(pos).max() <= BIG


@pytest.mark.gl
@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("command", ["record", "view"])
def test_the_commands_that_fly_a_path_refuse_it(tmp_path, case, command):
    text, msg = CASES[case]
    path = tmp_path / f"{case}.toml"
    path.write_text(text)
    recipe = tmp_path / "tiny.toml"
    recipe.write_text('generator = "uniform"\nn = 500\nworld = 100\n')
    out = tmp_path / "out"
    args = (["record", str(recipe), "--path", str(path), "--frames", "20", "--index", "brute", "-o", str(out)]
            if command == "record" else
            ["view", str(recipe), "--headless", "--path", str(path), "--frames", "20", "--index", "brute"])
    r = run_cli(*args, cwd=tmp_path)
    assert r.returncode == 2, r.stderr[-2000:]
    assert "Traceback" not in r.stderr and msg in r.stderr and path.stem in r.stderr, r.stderr
    assert not out.exists() or not any(out.iterdir())
