"""Recordings made up frame by frame and written by the real recorder (CSV + metadata, no GL), for the tests of
what ``compare`` and ``plot`` make of them."""

from __future__ import annotations

import csv
from pathlib import Path

CPU = "Test CPU 9000 (znver9; L2 2 MiB, L3 64 MiB)"
RENDERER = "llvmpipe (LLVM 99.1.2, 256 bits)"


def record(path: Path, frames: int = 12, label: str | None = None, scene: str = "tiny", index: str = "brute") -> Path:
    """A recording of ``frames`` made-up frames at ``path`` (CSV + metadata), written by the real recorder."""
    from viewer.frame.pipeline import FrameStats
    from viewer.recording import Recorder, build_meta

    meta = build_meta(index=index, headless=True, label=label)
    meta["scene"] = {"name": scene, "n": 2000, "seed": 1}
    path.parent.mkdir(parents=True, exist_ok=True)
    with Recorder(path, meta) as rec:
        for k in range(frames):
            rec.append(FrameStats(frame=k, t=k / 60, dt=1 / 60, cam_x=-10.0 * k, cam_y=5.0, cam_z=1.0, yaw=-30.0,
                                  pitch=-5.0, index=index, objects=2000, candidates=40 + k, visible=7 + k % 3,
                                  drawn=3, query_ms=0.01 * (k + 1), cull_ms=0.002, frame_ms=1.0 + k / 10))
    return path


def edit(path: Path, column: str, row: int, value: str) -> Path:
    """Set ``column`` of data row ``row`` (0: the first frame) of the CSV at ``path`` to ``value``, by hand;
    returns ``path``."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    rows[1 + row][rows[0].index(column)] = value
    with open(path, "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)
    return path


def edit_meta(path: Path, change) -> Path:
    """The metadata of the recording at ``path`` changed by hand: ``change(meta)`` edits the loaded dict in
    place, which is written back; returns ``path``."""
    import json

    from viewer.recording.meta import meta_path_for

    meta = json.loads(meta_path_for(path).read_text())
    change(meta)
    meta_path_for(path).write_text(json.dumps(meta))
    return path


def record_measured(path: Path, frames: int = 12, *, index: str = "octree", scene: str = "tiny", cpu: str = CPU,
           renderer: str = RENDERER, moving: bool = False, nodes: int = 7) -> Path:
    """A recording of ``frames`` made-up frames at ``path`` (CSV + metadata, by the real recorder): every
    stage takes time (``motion_ms`` only when ``moving``), measured on ``cpu`` and drawn by ``renderer``."""
    from viewer.frame.stages import TIMED_COLUMNS
    from viewer.recording import COLUMNS, Recorder, build_meta

    meta = build_meta(index=index, headless=True, window_size=(320, 180), gl={"renderer": renderer})
    meta["scene"] = {"name": scene, "n": 2000, "seed": 1}
    meta["machine"].update(host="testhost", cpu=cpu, cores=2)
    path.parent.mkdir(parents=True, exist_ok=True)
    with Recorder(path, meta) as rec:
        for k in range(frames):
            row = {c: 0 for c in COLUMNS}
            row.update(frame=k, t=k / 60, dt=1 / 60, index=index, culling="cpu", objects=2000,
                       candidates=2000 if index == "scan" else 40 + k, visible=7 + k % 3, drawn=3, draw_calls=1,
                       nodes_visited=0 if index == "scan" else nodes)
            for j, c in enumerate(TIMED_COLUMNS):
                row[c] = 0.0 if (c == "motion_ms" and not moving) else 0.01 * (j + 1) * (1 + k % 4)
            rec.append(row)
    return path


def recording_with_meta(tmp_path: Path, name: str = "a", scene_name: str = "s", **meta_changes) -> Path:
    """A 20-frame recording ``<name>.csv`` of brute force in ``tmp_path`` (scene ``scene_name``, 10 objects), its
    metadata's keys replaced by ``meta_changes``."""
    import json

    from viewer.recording import Recorder, build_meta
    from tests.recording.test_recording import fake_row

    p = tmp_path / f"{name}.csv"
    meta = build_meta(index="brute", headless=True)
    meta["scene"] = {"name": scene_name, "n": 10}
    with Recorder(p, meta) as rec:
        for k in range(20):
            rec.append(fake_row(k))
    if meta_changes:
        m = json.loads((tmp_path / f"{name}.meta.json").read_text())
        m.update(meta_changes)
        (tmp_path / f"{name}.meta.json").write_text(json.dumps(m))
    return p


def moving_take(d: Path, world=None, meta=None, frames: int = 4) -> Path:
    """A window take of a moving world made up in the directory ``d`` (created): the recipe ``moving-small.toml``
    (:func:`tests.recording.test_take_world_files.moving_recipe`) and ``take-1.csv``, ``.meta.json``,
    ``.path.toml`` and ``.world.npz`` written by the real take recorder (its world two steps in, ``frames``
    made-up frames); then edited by hand: ``world(arrays)`` changes the world file's arrays and ``meta(meta)``
    the metadata, each a dict edited in place. Returns the take's path file (what ``viewer record --path`` takes)."""
    import json

    import numpy as np

    from viewer.frame.motion import MotionState, advance
    from viewer.frame.pipeline import FrameStats
    from viewer.recording import build_meta, meta_path_for
    from viewer.recording.takes import TakeDir
    from viewer.scenes import load_scene
    from tests.recording.test_take_world_files import moving_recipe

    d.mkdir(parents=True, exist_ok=True)
    scene = load_scene(moving_recipe(d))
    state = MotionState.from_scene(scene)
    for _ in range(2):
        advance(state, 0.02)
    take = TakeDir(d).start(build_meta(scene=scene, index="brute", headless=False), world=state.snapshot())
    for k in range(frames):
        take.append(FrameStats(dt=0.02, cam_x=10.0 * k, cam_y=50.0, cam_z=0.0, index="brute",
                               objects=scene.n, visible=1, moved=scene.motion.m))
    take.close()
    if world is not None:
        f = take.world_file
        with np.load(f) as z:
            arrays = {k: z[k] for k in z.files}
        world(arrays)
        np.savez(f, **arrays)
    if meta is not None:
        m = json.loads(meta_path_for(take.csv_path).read_text())
        meta(m)
        meta_path_for(take.csv_path).write_text(json.dumps(m))
    return take.path_file
