"""``viewer map``: every hostile flag, output or scene refused with one line before anything is written (one
table); and, in a process of its own, a disk that fills (the figure named, the files already written kept) and a
stop before writing (no directory left behind)."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.reports.test_costmap import grid_scene  # noqa: F401 (a fixture: the 5 x 5 x 5 grid of equal spheres)
from tests.support.hostile_index import spec as plugin_spec
from tests.support.cli import (refused, run_cli, run_process, sigterm_when, small,  # noqa: F401 (small: a fixture)
                               start_process, with_flags)


def _file(tmp_path):
    (tmp_path / "file").write_text("")


def _figure_dir(tmp_path):
    (tmp_path / "map" / "visible.png").mkdir(parents=True)  # a directory where a figure goes


#: every hostile input of ``viewer map`` over the grid scene (SCENE) at --res 3 into {tmp}/map: (flags, words its
#: one error line holds, exit status, setup). ``setup`` (or None) prepares the test's directory; whatever it holds
#: then is all it holds afterwards.
REFUSED = [
    pytest.param(["--plane", "q=1"], ["--plane", "AXIS=VALUE"], 2, None, id="plane-unknown-axis"),
    pytest.param(["--plane", "y"], ["--plane", "AXIS=VALUE"], 2, None, id="plane-no-value"),
    pytest.param(["--plane", "y=nan"], ["--plane", "AXIS=VALUE"], 2, None, id="plane-nan"),
    pytest.param(["--plane", "y=1e9"], ["--plane", "outside the scene's world box"], 2, None, id="plane-outside"),
    pytest.param(["--res", "0"], ["--res", "at least 1"], 2, None, id="res-0"),
    pytest.param(["--res", "1e5"], ["--res", "at most"], 2, None, id="res-huge"),
    pytest.param(["--slices", "0"], ["--slices", "at least 1"], 2, None, id="slices-0"),
    pytest.param(["--budget", "-1"], ["--budget", "at least 1"], 2, None, id="budget-negative"),
    pytest.param(["--budget", "125"], ["--budget", "every view-distance scale"], 2, None, id="budget-every-object"),
    pytest.param(["--budget", "1e300"], ["--budget 1e+300:", "every view-distance scale"], 2, None,
                 id="budget-1e300-shown-short"),  # not 301 digits
    pytest.param(["--index", "nosuch"], ["nosuch"], 2, None, id="index-unknown"),
    pytest.param(["--index", "gpu"], ["gpu"], 2, None, id="index-gpu"),
    pytest.param(["--index", "octree", plugin_spec("NotAnIndex")],
                 ["--index", "NotAnIndex does not follow the index protocol", "SphereIndex"], 2, None,
                 id="index-not-a-sphere-index"),
    pytest.param(["--plane", "y=1", "--slices", "2"], ["not allowed"], 2, None, id="plane-and-slices"),
    pytest.param(["--out", "{tmp}/file/map"], ["-o", "not a directory"], 2, _file, id="out-under-a-file"),
    pytest.param(["--out", "{tmp}/file"], ["-o", "not a directory"], 2, _file, id="out-a-file"),
    pytest.param([], ["-o", "visible.png"], 2, _figure_dir, id="out-figure-a-directory"),
    pytest.param(["SCENE", "{tmp}/nope.npz"], ["nope.npz"], 2, None, id="scene-missing"),
]


def _listing(d: Path) -> list[str]:
    return sorted(str(p.relative_to(d)) for p in d.rglob("*"))


@pytest.mark.parametrize("flags, words, status, setup", REFUSED)
def test_a_hostile_input_is_refused_with_one_line_before_anything_is_written(tmp_path, grid_scene, flags, words,
                                                                              status, setup):
    """Exit status 2, one error line naming the flag (or the scene), nothing on stdout, nothing written: no
    output directory, and one already there (holding a directory where a figure goes) left as it was."""
    work = tmp_path / "work"
    work.mkdir()
    if setup:
        setup(work)
    scene = str(grid_scene)
    if flags[:1] == ["SCENE"]:
        scene, flags = flags[1], flags[2:]
    args = with_flags([scene, "--res", "3", "--out", "{tmp}/map"], flags)
    before = _listing(work)
    code, stdout, err = run_cli("map", *(str(a).replace("{tmp}", str(work)) for a in args))
    assert code == status, err
    refused(code, err, *words)
    assert stdout == ""
    assert _listing(work) == before


# the cases that need a process of their own: a full disk (a private mount) and a signal

def _full_disk(disk: Path, kept: Path, size: str = "40k") -> tuple[str, ...]:
    """A command prefix running the command with a ``size`` tmpfs at ``disk`` (a private mount namespace);
    what the command left in ``disk`` is copied to ``kept`` before the namespace ends."""
    disk.mkdir()
    kept.mkdir()
    script = (f'mount -t tmpfs -o size={size} none "{disk}" && "$0" "$@"; s=$?; '
              f'cp -a "{disk}/." "{kept}/" 2>/dev/null; exit $s')
    return ("unshare", "-rm", "sh", "-c", script)


def _run_full(tmp_path, *args):
    p = subprocess.run(["unshare", "-rm", "true"], capture_output=True)
    if p.returncode:
        pytest.skip("no private mount namespaces here (unshare -rm)")
    disk, kept = tmp_path / "disk", tmp_path / "kept"
    prefix = _full_disk(disk, kept)
    code, _, err = run_process(*[str(a).replace("DISK", str(disk)) for a in args], prefix=prefix)
    return code, err, kept


def test_a_map_whose_disk_fills_names_the_figure_and_keeps_the_files_written(tmp_path):
    """Before: an OSError traceback from PIL's PNG writer (ENOSPC inside atomic_file)."""
    scene = tmp_path / "small.toml"
    scene.write_text('generator = "uniform"\nn = 2000\nworld = 1000.0\n')
    status, err, kept = _run_full(tmp_path, "map", scene, "--res", "8", "-q", "-o", "DISK/map")
    refused(status, err, "/map/", ".png: cannot write: No space left on device")
    left = sorted(p.name for p in (kept / "map").iterdir())
    assert "costmap.csv" in left and not [n for n in left if n.startswith(".")]  # no temporary file
    assert all(n in ("costmap.csv", "costmap.json", "visible.png", "octree_us.png", "scan_us.png") for n in left)


def test_a_map_stopped_before_writing_leaves_no_directory_behind(tmp_path, small):
    """Before: 'viewer map SCENE -o msig/deep --res 512' stopped with SIGTERM mid-run printed 'terminated'
    and left the empty msig/deep it had created. Now the directories it made and did not fill are removed."""
    out = tmp_path / "msig" / "deep"
    proc = start_process("map", small, "-o", out, "--res", "512")
    err = sigterm_when(proc, out.exists)
    assert proc.returncode == 128 + signal.SIGTERM and "terminated" in err and "Traceback" not in err, err
    assert sorted(os.listdir(tmp_path)) == ["small.toml"]


def test_a_map_larger_than_the_memory_is_refused_before_the_scene_loads(tmp_path, small):
    """``--res 2048 --slices 64`` is 268 million camera positions, about 30 GB of points, counts and times: under
    a 4 GB address-space limit the map is refused naming both flags and both figures, before the scene loads
    (no 'loading' line), exit 2, no directory made."""
    import resource

    def limited():
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    code, stdout, err = run_process("map", small, "--res", "2048", "--slices", "64", "-o", tmp_path / "map",
                                    preexec_fn=limited)
    line = refused(code, err, "--res 2048 --slices 64", "268,435,456 camera positions", "this process may use",
                   "RLIMIT_AS")
    assert stdout == "" and "loading" not in err, err
    assert sorted(os.listdir(tmp_path)) == ["small.toml"], line
