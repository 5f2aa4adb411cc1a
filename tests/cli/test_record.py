"""``viewer record``: headless replay (EGL), determinism, one CSV per index, clean failures, SIGTERM."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from viewer.kernels.compile import HEADER
from viewer.recording import COLUMNS, meta_path_for, read_run

from tests.support.cli import refused, run_cli, run_process, small, start_process  # noqa: F401 (small: a fixture)
from tests.support.hostile_index import spec as plugin_spec
from tests.support.recordings import moving_take


ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.gl

POSE_AND_COUNTS = ("frame", "t", "dt", "cam_x", "cam_y", "cam_z", "yaw", "pitch", "objects", "candidates", "visible",
                   "drawn", "nodes_visited", "max_nodes_per_level")


@pytest.fixture(scope="module")
def scene_file(tmp_path_factory):
    from viewer.scenes import generate_scene, save_scene

    d = tmp_path_factory.mktemp("scene")
    return save_scene(generate_scene("clustered", 3000, seed=11, clusters=5), d / "tiny.npz")


def _indexes():
    from viewer.index import INDEXES

    return [n for n in ("brute", "octree") if n in INDEXES]


def _replay_once(scene, out):
    """Replay 60 frames of the generated path; returns {index: [(visible ids digest, drawn ids digest)]}."""
    from viewer.paths import generated_path
    from viewer.drivers.replay import replay

    seen: dict[str, list] = {}

    def on_frame(name, k, session, st):
        vis = np.sort(session.visible_ids())
        drawn = np.sort(session.drawn_ids())
        seen.setdefault(name, []).append((hashlib.sha1(vis.tobytes()).hexdigest(),
                                          hashlib.sha1(drawn.tobytes()).hexdigest(), len(vis)))

    samples = generated_path(scene, "clusters").sample(frames=60)
    paths = replay(scene, samples, _indexes(), out, size=(160, 90), progress=False, on_frame=on_frame)
    return seen, paths


def test_two_replays_see_the_same_poses_and_visible_sets(scene_file, tmp_path):
    from viewer.scenes import load_scene

    scene = load_scene(scene_file)
    a, pa = _replay_once(scene, tmp_path / "a")
    b, pb = _replay_once(scene, tmp_path / "b")
    assert a == b
    names = _indexes()
    assert sorted(pa) == sorted(names)
    # something is actually seen along the way, and every index sees the same sets
    assert any(n > 0 for _, _, n in a[names[0]])
    for name in names[1:]:
        assert [x[:2] for x in a[name]] == [x[:2] for x in a[names[0]]]
    for name in names:
        ra, rb = read_run(pa[name]), read_run(pb[name])
        assert len(ra) == len(rb) == 60
        for c in POSE_AND_COUNTS:
            assert np.array_equal(ra[c], rb[c]), c
        assert (ra["index"] == name).all()


def test_interleaved_indexes_follow_each_other_equally_often(scene_file, tmp_path):
    """Three indexes take their turns in balanced orders: each renders right after each other one
    equally often (a rotation would keep each behind the same predecessor)."""
    from collections import Counter

    from viewer.paths import generated_path
    from viewer.drivers.replay import replay
    from viewer.scenes import load_scene

    turns: list[str] = []
    samples = generated_path(load_scene(scene_file), "clusters").sample(frames=6)
    replay(load_scene(scene_file), samples, ["brute", "octree", "scan"], tmp_path / "r", size=(32, 18),
           progress=False, on_frame=lambda name, k, s, st: turns.append(name))
    frames = [turns[i : i + 3] for i in range(0, 18, 3)]
    assert all(sorted(f) == ["brute", "octree", "scan"] for f in frames)
    after = Counter((f[i], f[i + 1]) for f in frames for i in range(2))
    assert len(after) == 6 and set(after.values()) == {2}


def test_record_cli_writes_one_csv_and_metadata_per_index(scene_file, tmp_path, capsys):
    out = tmp_path / "runs"
    names = _indexes()
    rc = run_cli("record", scene_file, "--frames", "25", "--size", "128x72", "-o", out, "--save-path",
                 tmp_path / "path.toml", *sum((["--index", n] for n in names), [])).returncode
    assert rc == 0
    cap = capsys.readouterr()
    assert "100.0%" in cap.err and "ETA" in cap.err
    assert "frames that draw something: " in cap.out and "every index" in cap.out
    assert sorted(p.name for p in out.iterdir()) == sorted([f"{n}.csv" for n in names] + [f"{n}.meta.json" for n in names])
    for n in names:
        run = read_run(out / f"{n}.csv")
        assert len(run) == 25 and list(run.columns) == list(COLUMNS)
        meta = json.loads(meta_path_for(out / f"{n}.csv").read_text())
        assert meta["complete"] is True and meta["frames"] == 25
        assert meta["index"]["name"] == n and meta["window"] == {"size": [128, 72], "headless": True, "vsync": False, "max_fps": None}
        assert meta["scene"]["sha256"] == hashlib.sha256(Path(scene_file).read_bytes()).hexdigest()
        assert meta["scene"]["n"] == 3000 and meta["scene"]["seed"] == 11
        assert meta["gl"]["renderer"] and meta["gl"]["version"]
        assert meta["path"]["generated"] == "flythrough" and meta["path"]["frames"] == 25
        assert meta["interleaved"] == names
    # the saved path replays to the same poses
    rc = run_cli("record", scene_file, "--path", tmp_path / "path.toml", "--frames", "25", "--size", "128x72", "-o",
                 tmp_path / "again", "--index", names[0], "-q").returncode
    assert rc == 0
    a, b = read_run(out / f"{names[0]}.csv"), read_run(tmp_path / "again" / f"{names[0]}.csv")
    for c in ("cam_x", "cam_y", "cam_z", "yaw", "pitch", "visible"):
        assert np.array_equal(a[c], b[c]), c
    meta = json.loads(meta_path_for(tmp_path / "again" / f"{names[0]}.csv").read_text())
    assert meta["path"]["sha256"] == hashlib.sha256((tmp_path / "path.toml").read_bytes()).hexdigest()


def test_save_path_into_the_new_recording_directory(scene_file, tmp_path):
    """``-o NEW --save-path NEW/path.toml``: the path is saved beside the recording, the directory made for
    both; a deeper directory that -o does not make is still refused, before anything is written."""
    from viewer.paths import load_path

    out = tmp_path / "new"
    assert run_cli("record", scene_file, "--frames", "4", "--size", "64x64", "-o", out, "-q", "--save-path",
                   out / "path.toml", "--index", "octree").returncode == 0
    assert sorted(p.name for p in out.iterdir()) == ["octree.csv", "octree.meta.json", "path.toml"]
    assert len(load_path(out / "path.toml")) >= 2
    other = tmp_path / "other"
    assert run_cli("record", scene_file, "--frames", "4", "-o", other, "-q", "--save-path", other / "sub" / "path.toml",
                   "--index", "octree").returncode == 2
    assert not other.exists()


def keyframes(*ts, x=(0.0, 100.0)) -> str:
    return "".join(f"[[keyframe]]\nt = {t!r}\nposition = [{xi!r}, 10.0, 50.0]\nyaw = 0.0\npitch = 0.0\n\n"
                   for t, xi in zip(ts, x))


def _set(field: str, at, value):
    """A hand edit of a take's world file: ``field[at] = value``."""
    def edit(arrays: dict) -> None:
        arrays[field][at] = value
    return edit


#: the files of the table below, each made in the test's directory: name -> how (a take-* name: a directory
#: holding a take of a moving world, moving-small.toml and take-1.*, its world file or metadata edited by hand)
HOSTILE_FILES = {
    "empty.toml": lambda p: p.write_text(""),
    "malformed.toml": lambda p: p.write_text("[[keyframe]\n"),
    "one-keyframe.toml": lambda p: p.write_text("[[keyframe]]\nt = 0\nposition = [0, 0, 0]\nyaw = 0\npitch = 0\n"),
    "far.toml": lambda p: p.write_text(keyframes(1e300, 1.0000001e300)),
    "a-file": lambda p: p.write_text("x"),
    "bad.npz": lambda p: p.write_bytes(b"not a zip"),
    "far.npz": lambda p: _far_scene(p.parent, 2.0**63, spread=0.0),
    "pipe.toml": lambda p: os.mkfifo(p),
    "flight.toml": lambda p: p.write_text("# my edits\n"),
    "old-trace.json": lambda p: p.write_text('{"traceEvents": []}'),
    "take-centre-1e31": lambda p: moving_take(p, world=_set("centres", (0, 0), 1e31)),
    "take-radius--5": lambda p: moving_take(p, world=_set("radii", 0, -5.0)),
    "take-radius-1e31": lambda p: moving_take(p, world=_set("radii", 3, 1e31)),
    "take-velocity-1e308": lambda p: moving_take(p, world=_set("vel", (2, 1), -1e308)),
    "take-clock-1e308": lambda p: moving_take(p, world=lambda w: w.update(t=np.array(1e308)),
                                              meta=lambda m: m["world"].pop("t")),
    "take-step-2**63-1": lambda p: moving_take(p, world=lambda w: w.update(step=np.array(2**63 - 1)),
                                               meta=lambda m: m["world"].pop("step")),
    "take-meta-step-2**63-1": lambda p: moving_take(p, world=lambda w: w.update(step=np.array(2**63 - 1)),
                                                    meta=lambda m: m["world"].update(step=2**63 - 1)),
    "take-meta-clock-1e308": lambda p: moving_take(p, world=lambda w: w.update(t=np.array(1e308)),
                                                   meta=lambda m: m["world"].update(t=1e308)),
    "take-meta-clock-10**400": lambda p: moving_take(p, meta=lambda m: m["world"].update(t=10**400)),
}
SCENE, SMALL_SCENE, OUT = "{scene}", "{small}", "{out}"
QUICK = ["--frames", "3", "--size", "64x64"]


def _replay(take: str, *flags) -> list:
    """``viewer record`` of the take ``{take}`` (a name of HOSTILE_FILES) on its own moving scene."""
    return ["record", f"{take}/moving-small.toml", "--path", f"{take}/take-1.path.toml", "--index", "brute", "--size",
            "64x64", "-q", "-o", OUT, *flags]


def _row(id: str, argv: list, words: list, status: int = 2):
    return pytest.param(argv, words, status, id=id)


#: every hostile input of ``viewer record``: (argv, words its one error line holds, exit status). {scene} is a
#: 3,000-object scene, {small} a 2,000-object recipe, {out} the output directory (never made), {NAME} a file of
#: HOSTILE_FILES in the test's directory (never changed). A scene collapsed to a point (centres at 2**63) has no
#: camera path (it said 'path speed must be a positive number, got None', or an IndexError with --speed); a path
#: whose times pass 2**100 s is refused before recording, not after (when its own output was refused); a
#: --save-path onto a device or an existing file is refused before anything is written. A take whose world file or
#: metadata was edited by hand (a centre, radius or velocity outside the numeric domain, a clock past 2**100 s, a
#: step count past 2**62) is refused naming that file, its field and the value, before anything is written (it
#: ended in a ValueError or OverflowError traceback, some after the output directory was made).
REFUSED = [
    _row("path-missing", ["record", SCENE, "--path", "{missing.toml}", "-o", OUT],
         ["{missing.toml}", "no such camera path file"]),
    _row("path-empty", ["record", SCENE, "--path", "{empty.toml}", "-o", OUT], ["{empty.toml}", "empty file"]),
    _row("path-malformed", ["record", SCENE, "--path", "{malformed.toml}", "-o", OUT],
         ["{malformed.toml}", "not valid TOML"]),
    _row("path-of-one-keyframe", ["record", SCENE, "--path", "{one-keyframe.toml}", "-o", OUT],
         ["{one-keyframe.toml}", "at least 2 keyframes"]),
    _row("path-past-2**100-s", ["record", SMALL_SCENE, "--path", "{far.toml}", *QUICK, "-o", OUT],
         ["{far.toml}", "keyframe times span", "2**100 s"]),
    _row("speed-past-2**100-s", ["record", SMALL_SCENE, "--speed", "1e-300", *QUICK, "-o", OUT],
         ["--speed 1e-300", "2**100 s"]),
    _row("out-under-a-file", ["record", SCENE, "-o", "{a-file}/runs"], ["cannot create the output directory"]),
    _row("out-is-a-file", ["record", SCENE, "-o", "{a-file}"], ["not a directory"]),
    _row("unknown-index", ["record", SCENE, "--index", "nosuch", "-o", OUT], ["unknown index 'nosuch'"]),
    _row("index-plugin-option-not-taken", ["record", SCENE, "--index", "octree", plugin_spec("Fine", "bogus=1"),
                                           "-o", OUT], ["--index", "Fine takes no option 'bogus'", "leaf"]),
    _row("index-bool-option-maybe", ["record", SCENE, "--index", "coherent:relative=maybe", "-o", OUT],
         ["--index 'coherent:relative=maybe'", "true or false"]),
    _row("scene-not-a-zip", ["record", "{bad.npz}", "-o", OUT], ["{bad.npz}"]),
    _row("size-not-a-size", ["record", SCENE, "--size", "big", "-o", OUT], ["--size"]),
    _row("scene-collapsed-to-a-point", ["record", "{far.npz}", "--frames", "3", "-o", OUT, "-q", "--index", "scan"],
         ["{far.npz}", "no camera path", "--path"]),
    _row("scene-collapsed-to-a-point-with-speed", ["record", "{far.npz}", "--frames", "3", "-o", OUT, "-q",
                                                   "--index", "scan", "--speed", "5"],
         ["{far.npz}", "no camera path", "--path"]),
    _row("save-path-onto-a-pipe", ["record", SMALL_SCENE, "--frames", "3", "-q", "--index", "scan", "-o", OUT,
                                   "--save-path", "{pipe.toml}"], ["--save-path", "{pipe.toml}", "not a regular file"]),
    _row("save-path-onto-a-file", ["record", SMALL_SCENE, *QUICK, "-o", OUT, "--save-path", "{flight.toml}"],
         ["--save-path {flight.toml}", "exists already", "--force"]),
    _row("trace-onto-a-file", ["record", SMALL_SCENE, *QUICK, "-o", OUT, "--trace", "{old-trace.json}"],
         ["--trace {old-trace.json}", "exists already", "--force"]),
    _row("trace-under-a-file", ["record", SMALL_SCENE, *QUICK, "-o", OUT, "--trace", "{a-file}/t.json"],
         ["--trace {a-file}/t.json", "not a directory"]),
    _row("trace-named-like-a-recording", ["record", SMALL_SCENE, *QUICK, "-o", OUT, "--trace", OUT + ".csv"],
         ["--trace", "not a recording's .csv"]),
    _row("take-centre-1e31", _replay("{take-centre-1e31}"),
         ["{take-centre-1e31}/take-1.world.npz", "field 'centres'", "row 0 = [1e+31,", "numeric domain"]),
    _row("take-centre-1e31-saving-its-path", _replay("{take-centre-1e31}", "--save-path", OUT + "/path.toml"),
         ["{take-centre-1e31}/take-1.world.npz", "field 'centres'", "row 0 = [1e+31,"]),
    _row("take-centre-1e31-at-a-fixed-dt", _replay("{take-centre-1e31}", "--frames", "3"),
         ["{take-centre-1e31}/take-1.world.npz", "field 'centres'", "row 0 = [1e+31,"]),
    _row("take-radius--5", _replay("{take-radius--5}"),
         ["{take-radius--5}/take-1.world.npz", "field 'radii'", "row 0 = -5.0", "0 <= radius <= 2**100"]),
    _row("take-radius-1e31", _replay("{take-radius-1e31}"),
         ["{take-radius-1e31}/take-1.world.npz", "field 'radii'", "row 3 = 1e+31", "0 <= radius <= 2**100"]),
    _row("take-velocity-1e308", _replay("{take-velocity-1e308}"),
         ["{take-velocity-1e308}/take-1.world.npz", "field 'vel'", "row 2 = [", "-1e+308", "numeric domain"]),
    _row("take-clock-1e308", _replay("{take-clock-1e308}"),
         ["{take-clock-1e308}/take-1.world.npz", "field 't'", "world clock", "[0, 2**100]", "got 1e+308"]),
    _row("take-step-2**63-1", _replay("{take-step-2**63-1}"),
         ["{take-step-2**63-1}/take-1.world.npz", "field 'step'", "[0, 2**62]", "got 9223372036854775807"]),
    _row("take-metadata-step-2**63-1", _replay("{take-meta-step-2**63-1}"),
         ["{take-meta-step-2**63-1}/take-1.meta.json", "field 'world.step'", "[0, 2**62]", "got 9223372036854775807"]),
    _row("take-metadata-clock-1e308", _replay("{take-meta-clock-1e308}"),
         ["{take-meta-clock-1e308}/take-1.meta.json", "field 'world.t'", "[0, 2**100]", "got 1e+308"]),
    _row("take-metadata-clock-10**400", _replay("{take-meta-clock-10**400}"),
         ["{take-meta-clock-10**400}/take-1.meta.json", "field 'world.t'", "an integer of 401 digits"]),
]


def _state(d: Path) -> dict:
    """What is in ``d``: each entry's kind and, for a regular file, its bytes."""
    return {str(p.relative_to(d)): p.read_bytes() if p.is_file() and not p.is_fifo() else p.lstat().st_mode
            for p in d.rglob("*")}


@pytest.mark.parametrize("argv, words, status", REFUSED)
def test_a_hostile_input_is_refused_with_one_line_and_nothing_written(scene_file, small, tmp_path, argv, words,
                                                                         status):
    d = tmp_path / "in"
    d.mkdir()
    fill = {SCENE: str(scene_file), SMALL_SCENE: str(small), OUT: str(tmp_path / "out"),
            "{missing.toml}": str(d / "missing.toml")}
    for name, make in HOSTILE_FILES.items():
        fill["{" + name + "}"] = str(d / name)
        if any("{" + name + "}" in a for a in argv):  # only the row's own files: a take takes a scene to make
            make(d / name)
    before = _state(d)

    def filled(a: str) -> str:
        for k, v in fill.items():
            a = a.replace(k, v)
        return a

    code, _, err = run_cli(*map(filled, argv))
    assert code == status, err
    refused(code, err, *map(filled, words))
    assert not (tmp_path / "out").exists() and _state(d) == before


def test_sigterm_mid_recording_leaves_complete_rows(scene_file, tmp_path):
    out = tmp_path / "killed"
    proc = start_process("record", scene_file, "--frames", "200000", "--size", "64x64", "--index", _indexes()[0],
                         "-o", out, "-q")
    csv_path = out / f"{_indexes()[0]}.csv"
    end = time.monotonic() + 120
    while time.monotonic() < end:
        if csv_path.exists() and csv_path.read_bytes().count(b"\n") > 300:
            break
        if proc.poll() is not None:
            pytest.fail(f"record ended early: {proc.stderr.read()}")
        time.sleep(0.05)
    else:
        proc.kill()
        pytest.fail("no rows were recorded")
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM
    raw = csv_path.read_bytes()
    assert raw.endswith(b"\n")
    run = read_run(csv_path)
    assert len(run) >= 300 and np.array_equal(run["frame"], np.arange(len(run)))
    assert all(line.count(b",") == len(COLUMNS) - 1 for line in raw.splitlines())
    meta = json.loads(meta_path_for(csv_path).read_text())
    assert meta["ended"] == "SIGTERM" and meta["complete"] is False and meta["frames"] == len(run)


def test_no_collection_falls_inside_a_recorded_frame(scene_file, tmp_path, monkeypatch):
    """The cyclic collector stays out of timed frames (viewer.timing.heap.FrameCollector): in a record, every
    collection starts between two frames, the young generations are collected there every COLLECT_EVERY frames,
    and the automatic collector is on again afterwards."""
    import gc

    from viewer.drivers.replay import replay
    from viewer.timing import heap
    from viewer.paths import generated_path
    from viewer.render.session import ViewerSession
    from viewer.scenes import load_scene

    monkeypatch.setattr(heap, "COLLECT_EVERY", 16)
    inside = [False]  # in a recorded frame (the warm-up's frames come before, with the collector on)
    during, between = [], []
    frame = ViewerSession.frame
    enter, leave = heap.FrameCollector.__enter__, heap.FrameCollector.__exit__
    recording = [False]

    def entered(self):
        recording[0] = True
        return enter(self)

    def left(self, *exc):
        recording[0] = False
        return leave(self, *exc)

    monkeypatch.setattr(heap.FrameCollector, "__enter__", entered)
    monkeypatch.setattr(heap.FrameCollector, "__exit__", left)

    def timed_frame(self, *a, **k):
        inside[0] = recording[0]
        try:
            return frame(self, *a, **k)
        finally:
            inside[0] = False

    def watch(phase, info):
        if phase == "start" and recording[0]:
            (during if inside[0] else between).append(info["generation"])

    monkeypatch.setattr(ViewerSession, "frame", timed_frame)
    samples = generated_path(load_scene(scene_file), "clusters").sample(frames=60)
    threshold = gc.get_threshold()
    gc.set_threshold(20)  # an automatic collection every 20 allocations: it would fall in every frame
    gc.callbacks.append(watch)
    try:
        replay(load_scene(scene_file), samples, ["brute", "octree"], tmp_path / "r", size=(32, 18), progress=False)
    finally:
        gc.callbacks.remove(watch)
        gc.set_threshold(*threshold)
    assert during == [], during
    assert between.count(1) >= 120 // 16, between  # 60 frames x 2 indexes, one young collection every 16
    assert gc.isenabled()


def _far_scene(tmp_path: Path, offset: float, spread: float = 100.0, name: str = "far") -> Path:
    """50 objects in a box of side 2 * ``spread`` around (offset, offset, offset)."""
    c = np.random.default_rng(0).uniform(-spread, spread, (50, 3)) + offset
    p = tmp_path / f"{name}.npz"
    np.savez(p, format_version=np.array(2), centres=c, radii=np.full(50, 10.0))
    return p


def test_files_saved_with_a_byte_order_mark_are_read(tmp_path):
    """A UTF-8 byte-order mark (some editors and spreadsheets write one) before a recipe, a camera path or a
    recording: before, 'not valid TOML: Invalid statement (at line 1, column 1)' and 'header does not match
    the schema'; now each reads as without it."""
    from viewer.paths import load_path
    from viewer.recording import read_run
    from viewer.scenes import load_scene

    bom = b"\xef\xbb\xbf"
    recipe = tmp_path / "bom.toml"
    recipe.write_bytes(bom + b'generator = "clustered"\nn = 500\n')
    assert load_scene(recipe).n == 500
    path = tmp_path / "path.toml"
    path.write_bytes(bom + b"[[keyframe]]\nt = 0\nposition = [0, 0, 0]\nyaw = 0\npitch = 0\n"
                     b"[[keyframe]]\nt = 1\nposition = [1, 0, 0]\nyaw = 0\npitch = 0\n")
    assert len(load_path(path)) == 2
    out = tmp_path / "rec"
    status, _, err = run_cli("record", recipe, "--frames", "3", "--size", "64x64", "-o", out, "-q", "--index", "octree")
    assert status == 0, err
    csv = out / "octree.csv"
    rows = len(read_run(csv))
    csv.write_bytes(bom + csv.read_bytes())
    assert len(read_run(csv)) == rows == 3


def test_a_disk_that_fills_during_record_keeps_whole_rows(tmp_path, small):
    """A real full disk: a 64 KiB tmpfs in a private mount namespace; the results are copied out
    before the namespace ends."""
    disk, kept = tmp_path / "disk", tmp_path / "kept"
    disk.mkdir()
    kept.mkdir()
    script = (f'mount -t tmpfs -o size=64k none "{disk}" && "$0" "$@"; s=$?; '
              f'cp -a "{disk}/run" "{kept}/" 2>/dev/null; exit $s')
    status, _, err = run_process("record", small, "--index", "brute", "--frames", "2000", "--size", "64x64", "-q",
                            "-o", disk / "run", prefix=("unshare", "-rm", "sh", "-c", script))
    line = refused(status, err, "brute.csv", "No space left on device", "whole rows")
    from viewer.recording import read_meta, read_run

    csv = kept / "run" / "brute.csv"
    run = read_run(csv)
    assert 0 < len(run) < 2000 and np.array_equal(run["frame"], np.arange(len(run)))
    assert csv.read_bytes().endswith(b"\n")
    meta = read_meta(csv)
    assert meta["frames"] == len(run) and meta["ended"] == "write error" and meta["complete"] is False
    assert f"after {len(run)} frames" in line


def test_two_records_into_one_directory_do_not_interleave(tmp_path, small):
    out = tmp_path / "runs"
    first = start_process("record", small, "--index", "brute", "--frames", "1000000", "--size", "64x64", "-q",
                          "-o", out)
    try:
        csv = out / "brute.csv"
        end = time.monotonic() + 120
        while not (csv.exists() and csv.read_bytes().count(b"\n") > 300):
            assert first.poll() is None and time.monotonic() < end, first.stderr.read()
            time.sleep(0.05)
        status, _, err = run_cli("record", small, "--index", "brute", "--frames", "10", "--size", "64x64",
                                "-o", out)
        refused(status, err, str(csv), "another recording is writing this file")
        assert first.poll() is None  # the first run goes on
    finally:
        first.send_signal(signal.SIGTERM)
        first.communicate(timeout=60)
    from viewer.recording import read_meta, read_run

    run = read_run(csv)
    assert np.array_equal(run["frame"], np.arange(len(run))) and len(run) > 300
    assert read_meta(csv)["frames"] == len(run) and read_meta(csv)["ended"] == "SIGTERM"


def test_a_repeatable_option_still_accumulates():
    from viewer.cli import build_parser

    args = build_parser().parse_args(["record", "x.toml", "--index", "octree", "--index", "scan", "brute", "-o", "out"])
    assert args.indexes == ["octree", "scan", "brute"]


def digest(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.mark.gl
def test_record_into_a_directory_holding_a_run_is_refused_and_leaves_it_whole(world):
    """A second run of another scene into the same -o stops before the scene loads, naming the file
    and --force; the first run's files are untouched."""
    runs = world["runs"]
    before = {p.name: digest(p) for p in runs.iterdir()}
    status, _, err = run_cli("record", world["uniform"], "--index", "brute", "--frames", "10", "--size", "64x48",
                            "-q", "-o", runs)
    line = refused(status, err, "-o", str(runs / "brute.csv"), "exists already", "tiny-clustered", "--force")
    print(line)
    assert {p.name: digest(p) for p in runs.iterdir()} == before
    status, out, _ = run_cli("record", "--help")
    assert status == 0 and "--force" in out and "never written through" in " ".join(out.split())


@pytest.mark.gl
def test_replaying_a_take_on_its_own_scene_does_not_warn(world):
    """The take's path replayed on the take's scene (the fixture's run) says nothing about scenes."""
    assert "warning" not in world["replay_err"], world["replay_err"]


@pytest.mark.gl
def test_force_replaces_a_link_and_never_writes_through_it(world, tmp_path):
    """OUT/brute.csv and OUT/brute.meta.json are links to files outside OUT. Without --force
    the run is refused; with it, the links are replaced by the new run's files and their targets keep
    their bytes. The replay is of another scene than the take's path: a warning says so."""
    out = tmp_path / "out"
    out.mkdir()
    outside_csv, outside_meta = tmp_path / "precious.csv", tmp_path / "precious.json"
    outside_csv.write_text("someone else's data\n")
    outside_meta.write_text("{}\n")
    (out / "brute.csv").symlink_to(outside_csv)
    (out / "brute.meta.json").symlink_to(outside_meta)
    args = ("record", world["uniform"], "--path", world["take_path"], "--index", "brute", "--frames", "10",
            "--size", "64x48", "-q", "-o", out)
    status, _, err = run_cli(*args)
    print(refused(status, err, str(out / "brute.csv"), "symbolic link", "--force"))
    status, _, err = run_cli(*args, "--force")
    assert status == 0, err
    warning = [ln for ln in err.splitlines() if "warning" in ln]
    assert len(warning) == 1 and "tiny-clustered" in warning[0] and "tiny-uniform" in warning[0], err
    print(warning[0])
    assert outside_csv.read_text() == "someone else's data\n" and outside_meta.read_text() == "{}\n"
    assert not (out / "brute.csv").is_symlink() and not (out / "brute.meta.json").is_symlink()
    from viewer.recording import read_run

    run = read_run(out / "brute.csv")
    assert len(run) == 10 and run.meta["scene"]["name"] == "tiny-uniform"


def test_record_and_a_headless_view_say_what_their_times_were_taken_on(tmp_path, small):
    """Before: 'viewer record' ended with each index's median / p95 / p99 / max times and 'viewer view
    --headless' with its median frame and fps, with no word of the machine or the GL renderer (llvmpipe's draw
    is ~100x a GPU's): the figures stood alone. Each now prints the line compare prints under its reference."""
    from viewer.system.machine import cpu

    status, out, err = run_cli("record", small, "--frames", "3", "--size", "320x180", "--index", "octree",
                              "-o", tmp_path / "run")
    assert status == 0, err
    line = next(ln for ln in err.splitlines() if ln.startswith("timed on: "))
    assert cpu() in line and "logical CPU" in line and "GL renderer: " in line, line
    assert "not named" not in line, line
    assert err.index("octree: update_ms median") < err.index("timed on: ")  # beside the figures

    status, out, err = run_cli("view", small, "--headless", "--frames", "3", "--size", "320x180")
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("frames 3  median frame")
    line = next(ln for ln in lines if ln.startswith("timed on: "))
    assert cpu() in line and "GL renderer: " in line and "not named" not in line, line


def _path_text(name_line: str = "") -> str:
    keys = "".join(f"[[keyframe]]\nt = {t}\nposition = [{x}, 100.0, 500.0]\nyaw = 0.0\npitch = 0.0\n\n"
                   for t, x in ((0.0, 0.0), (1.0, 10.0)))
    return f'format = "viewer-camera-path"\nversion = 1\n{name_line}\n{keys}'


def test_a_camera_path_named_with_control_characters_never_reaches_the_terminal_raw(tmp_path, small):
    """Before: a path file's 'name' (or, without one, its file name) holding an ESC sequence was printed raw by
    'record' and 'view --headless' ('path \\x1b[2J\\x1b]0;pwned\\x07x: 3 frames'): the screen cleared, the
    window's title set. A scene's name is refused for that; a path's name now is too, naming the
    file and the field, and a path file's own name is shown with those characters replaced, as a scene's."""
    evil = tmp_path / "evil.toml"
    evil.write_text(_path_text(r'name = "\u001b[2J\u001b]0;pwned\u0007x"'))
    status, out, err = run_cli("record", small, "--path", evil, "--frames", "3", "--size", "320x180", "--index",
                              "octree", "-o", tmp_path / "run")
    refused(status, err, str(evil), "field 'name'", "control characters")
    assert "\x1b" not in err + out and not (tmp_path / "run").exists()

    odd = tmp_path / "a\x1b[2Jb.toml"  # no 'name': the file's stem names the path
    odd.write_text(_path_text())
    status, out, err = run_cli("record", small, "--path", odd, "--frames", "3", "--size", "320x180", "--index",
                              "octree", "-o", tmp_path / "run2")
    assert status == 0, err
    assert "\x1b" not in err + out, err
    assert "path a\ufffd[2Jb: 3 frames" in err, err


def test_a_take_closed_without_frames_leaves_no_files_and_says_so(tmp_path):
    """R pressed twice in a row (the take API the window calls): no take-N files, a line saying so,
    and the next take still gets the next number."""
    from viewer.recording import build_meta
    from viewer.recording.takes import TakeDir

    takes = TakeDir(tmp_path / "rec")
    take = takes.start(build_meta(index="octree", headless=False))
    line = take.close()
    assert "take-1" in line and "no frames" in line, line
    assert list((tmp_path / "rec").iterdir()) == []
    assert takes.start(build_meta(index="octree", headless=False)).number == 2


#: a world where a fifth of the objects move (mixed motion, pulsing radii): its frames run every kernel a
#: recorded frame can (moves, motion, events, query, cull, gather)
MOVING_RECIPE = """
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


def _no_row_pays_for_compiling(run, name: str, columns: tuple[str, ...]) -> None:
    """Frame 0 of ``run`` is like any other in each of ``columns``: compiling a kernel costs hundreds of
    milliseconds, loading one from the cache or running it warm does not. The slack over the median stays far
    below one kernel's compiling and above a frame that waited for a core on a machine busy with other work."""
    for col in columns:
        first, median = float(run[col][0]), float(np.median(run[col]))
        assert first <= max(10.0 * median, median + 25.0), (name, col, first, median)


@pytest.mark.gl
@pytest.mark.slow
def test_a_first_record_compiles_only_what_it_runs_and_before_frame_0(scene_file, tmp_path):
    """From an empty kernel cache (the first record after install): a record says it compiles, compiles the
    kernels its frames run and no others, and compiles them before frame 0, so no recorded row pays for it. A
    still world first (its lean set), then a moving world in the same cache (what it adds: the motion); one
    cache, so the kernels both run compile once. The moving world runs brute force alone: the octree's updates
    cost seconds more to compile here, and that their warm-up loads every one of them before the first frame is
    ``tests/index/test_octree.py::test_first_build_loads_every_kernel_before_it_returns``'s to check."""
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
    # the stages the compiled kernels run (frame_ms also holds the GL draw, whose first frame is the GL
    # driver's own warm-up, not a kernel's: the moving world below checks it against a costlier median)
    _no_row_pays_for_compiling(read_run(tmp_path / "cold" / "octree.csv"), "octree",
                               ("query_ms", "cull_ms", "gather_ms"))

    # a moving world in the same cache: its warm-up compiles what a still world never ran, before frame 0
    recipe = tmp_path / "moving.toml"
    recipe.write_text(MOVING_RECIPE)
    r = subprocess.run([sys.executable, "-m", "viewer", "record", str(recipe), "--frames", "40", "--index", "brute",
                        "--size", "64x36", "-o", str(tmp_path / "moving"), "-q"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    added = {p.name.split("-")[0] for p in cache.rglob("*.nbi")} - compiled
    assert "_motion_kernels.advance_kernel" in added, added
    assert not any(name.startswith("_octree") for name in added), added  # the octree is not in this record
    run = read_run(tmp_path / "moving" / "brute.csv")
    assert (run["moved"] > 0).all()
    _no_row_pays_for_compiling(run, "brute", ("update_ms", "query_ms", "cull_ms", "gather_ms", "frame_ms"))


@pytest.mark.gl
def test_the_default_record_of_a_generated_path_is_a_demo_and_full_records_every_frame(scene_file, tmp_path, capsys):
    from viewer.drivers.record import DEMO_FRAMES
    from viewer.paths import generated_path
    from viewer.recording import read_run
    from viewer.scenes import load_scene

    speed = 2000.0  # a 53 s flight: 3196 frames at 1/60 s
    full = len(generated_path(load_scene(str(scene_file)), speed=speed).sample(dt=1 / 60))
    assert full > DEMO_FRAMES
    args = ["record", str(scene_file), "--index", "brute", "--size", "32x18", "--speed", str(speed)]
    assert run_cli(*args, "-o", tmp_path / "demo").returncode == 0
    err = capsys.readouterr().err
    assert f"{DEMO_FRAMES} frames" in err and "a demo" in err and f"--full records all {full}" in err, err
    run = read_run(tmp_path / "demo" / "brute.csv")
    assert len(run["frame"]) == DEMO_FRAMES

    assert run_cli(*args, "--full", "-o", tmp_path / "full").returncode == 0
    err = capsys.readouterr().err
    assert "a demo" not in err and f"{full} frames" in err, err
    run = read_run(tmp_path / "full" / "brute.csv")
    assert len(run["frame"]) == full
    assert abs(float(run["dt"][0]) - 1 / 60) < 1e-9


def test_a_trace_holds_each_recorded_frame_s_stage_times_and_the_gpu_mode_its_device_time(scene_file, tmp_path):
    """``--trace``: a Chrome Trace Event file with one process per index, whose spans are the CSVs' stage times
    frame by frame (frame numbers in args); with ``--gpu-time`` the gpu mode's gpu_ms (GL timer queries under
    headless EGL) is there, never below zero, and the summary says what it measures."""
    from viewer.frame.stages import STAGES

    out, trace = tmp_path / "runs", tmp_path / "flight.trace.json"
    code, _, err = run_cli("record", scene_file, "--frames", "8", "--size", "64x64", "--index", "octree", "gpu",
                           "-o", out, "--trace", trace, "--gpu-time")
    assert code == 0, err
    doc = json.loads(trace.read_text())
    events = doc["traceEvents"]
    processes = {e["args"]["name"]: e["pid"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert set(processes) == {"octree", "gpu"}
    for name, pid in processes.items():
        run = read_run(out / f"{name}.csv")
        spans = [e for e in events if e["ph"] == "X" and e["pid"] == pid]
        assert sorted({e["args"]["frame"] for e in spans}) == list(run["frame"])
        for k, frame in enumerate(run["frame"]):
            mine = {e["name"]: e["dur"] for e in spans if e["args"]["frame"] == frame}
            assert mine["frame"] == pytest.approx(run["frame_ms"][k] * 1e3, abs=1e-6)
            for s in STAGES:
                assert mine.get(s.name, 0.0) == pytest.approx(run[s.column][k] * 1e3, abs=1e-6), (name, k, s.name)
        gpu = [e["args"]["gpu_ms"] for e in events if e["ph"] == "C" and e["pid"] == pid]
        assert gpu == pytest.approx(list(run["gpu_ms"]))
        for tid in {e["tid"] for e in spans}:  # a track's slices never overlap (Perfetto nests what does)
            track = sorted((e["ts"], e["dur"]) for e in spans if e["tid"] == tid)
            assert all(a + da <= b for (a, da), (b, _) in zip(track, track[1:])), (name, tid)
    g = read_run(out / "gpu.csv")["gpu_ms"]
    assert (g >= 0).all() and (g > 0).any()  # the dispatch and the draw take device time on any renderer
    assert "gpu_ms" in err and "GL timer queries" in err
    renderer = json.loads(meta_path_for(out / "gpu.csv").read_text())["gl"]["renderer"]
    if "llvmpipe" in renderer:
        assert "a software renderer: its clock, CPU work" in err


def test_without_gpu_time_no_timer_query_brackets_the_frame(scene_file, tmp_path):
    """By default no GL timer query is issued (on llvmpipe its end waits for the work it brackets, inside the
    stage around it): gpu_ms is 0 on every frame and the summary says it was not asked for."""
    out = tmp_path / "runs"
    code, _, err = run_cli("record", scene_file, "--frames", "4", "--size", "64x64", "--index", "gpu", "-o", out)
    assert code == 0, err
    assert (read_run(out / "gpu.csv")["gpu_ms"] == 0).all()
    assert "gpu_ms not measured: not asked for (--gpu-time)" in err


@pytest.mark.gl
def test_a_moving_world_records_its_update_floor_beside_each_index(tmp_path, scene_file):
    """A moving world's recording times, once a frame, the least work its update can be (the movers' rows
    written at their ids by one thread, and one after another) and keeps both medians and each index's update
    over the first in its metadata; the summary prints them. A still world has no floor."""
    moving = tmp_path / "moving.toml"
    moving.write_text('generator = "uniform"\nn = 3000\nworld = 1000.0\n[motion]\nshare = 0.2\n')
    out = tmp_path / "runs"
    code, _, err = run_cli("record", moving, "--frames", "10", "--size", "64x36", "--index", "octree", "brute",
                           "-o", out)
    assert code == 0, err
    line = next(ln for ln in err.splitlines() if ln.startswith("update floor (600 movers"))
    assert "octree" in line and "brute" in line and "update_ms over the first" in line
    for name in ("octree", "brute"):
        floor = json.loads(meta_path_for(out / f"{name}.csv").read_text())["update_floor_ms"]
        assert floor["movers"] == 600 and floor["scatter"] > 0 and floor["contiguous"] > 0
        update = float(np.median(read_run(out / f"{name}.csv")["update_ms"]))
        assert floor["update_x_floor"] == pytest.approx(update / floor["scatter"], rel=1e-3)  # (the CSV rounds)
    still = tmp_path / "still"
    assert run_cli("record", scene_file, "--frames", "3", "--size", "64x36", "--index", "octree", "-o",
                   still).returncode == 0
    assert "update_floor_ms" not in json.loads(meta_path_for(still / "octree.csv").read_text())
