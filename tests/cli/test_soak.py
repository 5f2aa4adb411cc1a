"""``viewer soak``: every hostile input (a step too small for the path, a denormal --dt, a motion that moves no
object, a scene with no motion, too many frames, an import option with a recipe) in one table, each refused with one
line naming the flag or field, nothing on stdout, nothing written; Ctrl-C prints the summary of the frames done and
exits 130; the machine is printed beside the frame times."""

from __future__ import annotations

import re
import signal
import time
from pathlib import Path

import pytest

from tests.support.cli import SMALL, refused_before_anything, run_cli, start_process
from tests.support.hostile_index import spec as plugin_spec


ROOT = Path(__file__).resolve().parents[2]


def _tiny_dynamic(tmp: Path) -> dict:
    """The bundled dynamic-100k recipe at 2,000 objects, as ``tiny-dynamic.toml`` in ``tmp``."""
    text, k = re.subn(r"(?m)^n = .*$", "n = 2000", (ROOT / "scenes" / "dynamic-100k.toml").read_text())
    assert k == 1
    p = tmp / "tiny-dynamic.toml"
    p.write_text(text)
    return {"scene": p}


def _recipe(text: str):
    """A setup writing the recipe ``text`` as ``mv.toml``."""
    def setup(tmp: Path) -> dict:
        (tmp / "mv.toml").write_text(text)
        return {"scene": tmp / "mv.toml"}
    return setup


def _still_scene(tmp: Path) -> dict:
    """A generated scene of 100 objects with nothing moving, saved as ``static.npz``."""
    from viewer.scenes import generate_scene, save_scene

    return {"scene": save_scene(generate_scene("uniform", 100, seed=1), tmp / "static.npz")}


def _alone(line: str, err: str) -> bool:
    """The error line is all of stderr, but for progress lines ('loading ...')."""
    return [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("loading ")] == [line]


def _row(id: str, args: list, words: list, setup=None, check=None, status: int = 2):
    return pytest.param(setup, args, words, status, check, id=id)


#: every hostile input of ``viewer soak``, one row each: (id, argv, words the one error line holds, setup, check).
#: ``setup(tmp_path)`` writes the scene and returns its path as ``scene``, filled into argv's and the words'
#: ``{scene}``; ``check(line, err)``, when given, must hold of the error line and stderr. A --dt too small for the
#: path names --dt and the limit, never 'give --frames N' when --frames is given (it does not change the path's
#: sampling); a [motion] whose share rounds to no mover (0, or 1e-300 of 2,000 objects) used to soak 'mv: 2000
#: objects, 0 moving' for all its frames and pass, checking a world that never moved; an import option with a
#: recipe is refused before the recipe is generated.
REFUSED = [
    _row("dt-too-small-for-the-path", ["soak", "{scene}", "--dt", "1e-300"], ["--dt", "limit"],
         _recipe(SMALL + "[motion]\nshare = 0.1\n")),
    _row("denormal-dt-with-frames", ["soak", "{scene}", "--frames", "20", "--dt", "5e-324"],
         ["--dt 4.94066e-324", "limit", "larger --dt"], _tiny_dynamic,
         check=lambda line, err: "give --frames" not in line),
    *(_row(f"motion-share-{share}-moves-no-object", ["soak", "{scene}", "--frames", "30", "-q"],
           ["{scene}", "motion.share", "moves none of its 2,000 objects"],
           _recipe(f"{SMALL}[motion]\nshare = {share}\n")) for share in ("0", "1e-300")),
    _row("bool-option-maybe", ["soak", "{scene}", "--index", "coherent:relative=maybe", "--frames", "5"],
         ["--index 'coherent:relative=maybe'", "option relative is true or false"], _tiny_dynamic),
    _row("index-constructor-raises", ["soak", "{scene}", "--index", plugin_spec("Raises"), "--frames", "5"],
         ["--index", "hostile_index.py:Raises'", "RuntimeError"], _tiny_dynamic),
    _row("scene-without-motion", ["soak", "{scene}", "--frames", "5"], ["no [motion]"], _still_scene),
    _row("frames-1e99", ["soak", "{scene}", "--frames", "1e99"], ["--frames", "at most"], _recipe(SMALL),
         check=lambda line, err: "warming" not in err),
    _row("view-distance-with-a-recipe", ["soak", "dynamic-100k", "--frames", "3", "--view-distance",
                                         "constant:value=500"],
         ["--view-distance applies only to a file imported on the fly", "a recipe (.toml)"], check=_alone),
]


@pytest.mark.parametrize("setup, args, words, status, check", REFUSED)
def test_a_hostile_input_is_refused_with_one_line_before_any_work(tmp_path, setup, args, words, status, check):
    """Exit status 2, one error line naming the flag or field, no traceback, nothing on stdout, nothing
    written."""
    files = setup(tmp_path) if setup else {}
    refused_before_anything(tmp_path, files, args, words, status, check)


@pytest.fixture(scope="module")
def moving(tmp_path_factory) -> Path:
    """The tiny dynamic recipe (see :func:`_tiny_dynamic`), once for the module."""
    return _tiny_dynamic(tmp_path_factory.mktemp("soak"))["scene"]


def test_a_ctrl_c_soak_prints_its_summary_then_exits_130(moving):
    """Ctrl-C mid-run: the summary of the frames done and checked is printed, exit status 130."""
    proc = start_process("soak", moving, "--frames", "5e6", "--report-every", "200", "--check-every", "50",
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        end = time.monotonic() + 120
        seen = ""
        while time.monotonic() < end:
            line = proc.stderr.readline()
            seen += line
            if re.match(r"frame [1-9]\d*: RSS", line):
                break
            assert line or proc.poll() is None, seen
        else:
            pytest.fail(f"no progress report: {seen}")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert "Traceback" not in err, err
    m = re.search(r"index octree: (\d+) frames in .* checked (\d+) frames against brute force, 0 mismatches", out)
    assert m and int(m.group(1)) >= 200 and int(m.group(2)) >= 4, out
    assert "interrupted by Ctrl-C" in out and "memory: RSS" in out
    print(out.splitlines()[0])


def test_soak_prints_the_machine_beside_its_frame_times(tmp_path):
    """Before: 'viewer soak' printed its median and p99 frame times with no word of the machine (bench, clients
    and map print their machine line). It now prints the same line under its figures."""
    from viewer.bench.report import machine_line
    from viewer.system.machine import machine

    scene = tmp_path / "mv.toml"
    scene.write_text('generator = "uniform"\nn = 2000\nworld = 1000.0\n[motion]\nshare = 0.1\n')
    status, out, err = run_cli("soak", scene, "--frames", "20", "-q")
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("soak mv (2000 objects") and "median frame" in lines[0], out
    assert machine_line(machine()) in lines[:4], out
