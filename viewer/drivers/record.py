"""``viewer record``'s run: a camera path replayed headless through the scene, one CSV per index
(:func:`viewer.drivers.replay.replay`), after every input is checked: the indexes, the path, the output directory,
an existing recording (replaced only with ``force``), ``--save-path`` and ``--trace``."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import UserError
from ..index.specs import label_stem
from .options import DEMO_FRAMES

__all__ = ["DEMO_FRAMES", "RecordOptions", "drawing_share", "record", "view_samples"]


@dataclass(frozen=True)
class RecordOptions:
    """What ``viewer record`` was asked (its flags, as parsed).

    scene : a recipe, ``.npz``, bundled name or file to import (with ``import_options``); path : a camera path
    file (None: the ``generated`` path, a demo of at most :data:`DEMO_FRAMES` frames unless ``full``); frames,
    dt : the sampling (None: the path's own); indexes : the index specs (None: scan and octree); size : (w, h)
    pixels; speed : a generated path's, world units a second; save_path, trace : files also written;
    hysteresis : the events' ``(margin, relative)``; views : views culled together; out : the directory.
    """

    scene: str
    out: str
    import_options: dict | None = None
    path: str | None = None
    generated: str = "flythrough"
    full: bool = False
    frames: int | None = None
    dt: float | None = None
    indexes: list[str] | None = None
    size: tuple[int, int] = (1280, 720)
    draw: str = "sprites"
    speed: float | None = None
    save_path: str | None = None
    hysteresis: tuple[float, bool] = (0.0, False)
    views: int = 1
    trace: str | None = None
    gpu_time: bool = False
    force: bool = False
    quiet: bool = False


def view_samples(cam_path, samples, k: int) -> list:
    """The poses of views 1..k-1 beside ``samples`` (view 0's, on ``cam_path``): view j flies the same path
    j/k of its duration ahead, wrapping round to its start (:class:`viewer.paths.PoseSamples` each)."""
    from ..paths import PoseSamples

    out = []
    span = float(cam_path.duration)
    for j in range(1, k):
        t = np.mod(samples.t + j * span / k, span) if span > 0 else samples.t.copy()
        pos, yaw, pitch = cam_path.evaluate(cam_path.start + t)
        out.append(PoseSamples(samples.t.copy(), samples.dt, pos, yaw, pitch))
    return out


def _check_not_recording(out: Path, names) -> None:
    """Refuse early when another run is writing one of this run's CSVs (the recorder's lock is what
    guarantees it; this says so before the scene loads)."""
    from ..recording.writer import check_not_in_use

    for name in names:
        check_not_in_use(out / f"{label_stem(name)}.csv")


def _check_no_recording(out: Path, names) -> None:
    """Refuse when ``out`` already holds a recording (CSV or metadata, or a link by either name) of one of
    the indexes ``names``: a run is replaced only with ``--force``."""
    from ..recording.meta import describe_scene, meta_path_for, read_meta

    found = [(out / f"{label_stem(n)}.csv", f) for n in names
             for f in (out / f"{label_stem(n)}.csv", meta_path_for(out / f"{label_stem(n)}.csv"))
             if os.path.lexists(f)]
    if not found:
        return
    csv, first = found[0]
    what = ""
    try:
        scene = describe_scene(read_meta(csv) or {})
        what = f", a recording of {scene}" if scene else ""
    except (UserError, OSError):  # a damaged file is still a file not to overwrite; it only goes unnamed
        pass
    others = len({c for c, _ in found}) - 1
    more = f", as do the recordings of {others} more of these indexes" if others else ""
    link = " (a symbolic link)" if first.is_symlink() else ""
    raise UserError(f"-o {out}: {first} exists already{link}{what}{more}; record into another directory, or pass "
                    f"--force to replace {'them' if others else 'it'}")


def _warn_if_take_of_another_scene(path_file: str, scene) -> None:
    """Warn (stderr) when ``path_file`` is a window take's path (``take-N.path.toml`` beside its
    ``take-N.meta.json``) flown in another scene than ``scene``: its poses would not see what the take saw."""
    import sys

    from ..recording.meta import describe_scene, read_meta, same_scene, scene_meta

    p = Path(path_file)
    if not p.name.endswith(".path.toml"):
        return
    csv = p.with_name(p.name.removesuffix(".path.toml") + ".csv")
    try:
        meta = read_meta(csv)
    except UserError:
        return
    if not meta or not isinstance(meta.get("scene"), dict):
        return
    here = {"scene": scene_meta(scene)}
    if same_scene(meta, here) is False:
        print(f"viewer record: warning: --path {p} is the path of a take flown in {describe_scene(meta)} "
              f"({csv.with_suffix('.meta.json').name}); this replay is of {describe_scene(here)}: its frames "
              "will not see what the take saw", file=sys.stderr)


def record(opts: RecordOptions) -> int:
    """``viewer record``: the recording, inside the warm-up scope :func:`viewer.drivers.warm.warm_kernels`
    opens (the indexes built while it is open compile only what the recording runs). Every input is checked
    before anything is written; returns the exit status (0)."""
    from contextlib import ExitStack

    with ExitStack() as scopes:
        return _record(opts, scopes)


def _record(opts: RecordOptions, scopes) -> int:
    import sys

    from .frames import planned_frames
    from .replay import check_indexes, replay
    from .warm import default_indexes, warm_kernels
    from ..files.output import TEMP_NAME_ROOM, check_name_lengths, check_output_file, prepare_out_dir
    from ..paths import FRAME_DT, generated_path, load_path, probe_index, save_path
    from ..scenes.loading import open_scene_shown

    # every input checked before anything is written
    if opts.path and opts.speed is not None:
        raise UserError("--speed paces a generated path; --path FILE keeps its own times, so it would be ignored")
    names = opts.indexes or default_indexes("scan", "octree")
    names = check_indexes(names)
    cam_path = load_path(opts.path) if opts.path else None
    out = prepare_out_dir(opts.out, create=False, what="-o")  # created once the scene has loaded
    # --save-path into the recording's own new directory (-o NEW --save-path NEW/path.toml): made before the save
    save_in_out = bool(opts.save_path) and not out.exists() and Path(opts.save_path).parent == out
    if save_in_out:
        check_name_lengths(opts.save_path, "--save-path", room=TEMP_NAME_ROOM)
    elif opts.save_path:
        check_output_file(opts.save_path, "--save-path")
        if os.path.lexists(opts.save_path) and not opts.force:  # a path file is meant to be edited by hand
            raise UserError(f"--save-path {opts.save_path}: exists already (a camera path, maybe edited by hand); "
                            "choose another name, or pass --force to replace it")
    if opts.trace:
        _check_trace_file(opts.trace, out, opts.force)
    _check_not_recording(out, names)
    if not opts.force:
        _check_no_recording(out, names)

    scene = open_scene_shown(opts.scene, opts.import_options, quiet=opts.quiet)
    if opts.path:
        _warn_if_take_of_another_scene(opts.path, scene)
        if scene.motion is not None:  # a take's damaged world refused before a kernel compiles or --save-path writes
            from ..recording.takes import read_take_world

            read_take_world(opts.path)
    # compiled before anything is timed: the recorded indexes' build and query, query_many for views > 1,
    # move_many in a moving world; the probe's for a generated path (viewer.paths.probe_index)
    points = ["build", "query"] + (["query_many"] if opts.views > 1 else []) + (["move_many"] if scene.moves else [])
    warm_kernels(scene, names, points, scopes=scopes, probe=cam_path is None, quiet=opts.quiet)
    if cam_path is None:
        try:
            cam_path = generated_path(scene, opts.generated, speed=opts.speed, aspect=opts.size[0] / opts.size[1],
                                      index=probe_index(names))
        except ValueError as exc:  # e.g. a speed so low that the path's times overflow
            raise UserError(f"--speed {opts.speed}: no usable path at this speed: {exc}") from None
        path_meta = {"name": cam_path.name, "generated": opts.generated, "speed": opts.speed}
        what = f"the generated path at --speed {opts.speed:g}" if opts.speed else "the generated path"
    else:
        path_meta = {"name": cam_path.name, "source": str(Path(opts.path)),
                     "sha256": hashlib.sha256(Path(opts.path).read_bytes()).hexdigest()}
        what = f"--path {opts.path}"
    planned_frames(cam_path.duration, opts.frames, opts.dt or FRAME_DT, what)
    full = None  # frames of the full recording, when this one is the demo
    if opts.frames is None and opts.dt is None:
        samples = cam_path.sample(dt=FRAME_DT)
        if opts.path is None and not opts.full and len(samples) > DEMO_FRAMES:
            full, samples = len(samples), cam_path.sample(frames=DEMO_FRAMES)
    else:
        samples = cam_path.sample(frames=opts.frames, dt=opts.dt)
    path_meta.update(keyframes=len(cam_path), duration_s=cam_path.duration, frames=len(samples), dt=samples.dt)
    if opts.save_path:
        if save_in_out:
            prepare_out_dir(out, what="-o")
        save_path(cam_path, opts.save_path)
    if not opts.quiet:
        moving = "" if scene.motion is None else f" ({scene.motion.m} moving)"
        demo = "" if full is None else f" (a demo: the whole flight; --full records all {full} at 1/60 s)"
        print(f"{scene.name}: {len(scene.centres)} objects{moving}; path {cam_path.name}: {len(samples)} frames, "
              f"dt {samples.dt:.4g} s{demo}; indexes {', '.join(names)}; {opts.size[0]}x{opts.size[1]}", file=sys.stderr)
    views = view_samples(cam_path, samples, opts.views) if opts.views > 1 else None
    if views:
        path_meta["views"] = {"count": opts.views, "ahead_s": [j * cam_path.duration / opts.views
                                                               for j in range(opts.views)]}
    trace = None
    if opts.trace:
        from ..recording.trace import TraceWriter

        trace = TraceWriter(opts.trace, {"scene": scene.name, "indexes": names, "path": cam_path.name})
    csvs = replay(scene, samples, names, out, size=opts.size, draw=opts.draw, path_meta=path_meta,
                  progress=not opts.quiet, hysteresis=opts.hysteresis, overwrite=opts.force,
                  take_dt=opts.frames is None and opts.dt is None,  # a moving world's take: its own dt
                  views=views, trace=trace, gpu_time=opts.gpu_time)
    print(drawing_share(csvs))
    if trace is not None:
        trace.close()
        print(f"wrote {trace.path}: {trace.frames} frames' stage spans as Chrome Trace Event JSON (open it in Perfetto)")
    return 0


def _check_trace_file(trace: str, out: Path, force: bool) -> None:
    """Refuse a ``--trace`` file that cannot be written, one inside ``-o`` named like a recording, or one that
    exists already (without ``--force``): a trace of an earlier run is a measurement, replaced only when asked."""
    from ..files.output import check_output_file

    p = Path(trace)
    if p.suffix.lower() == ".csv" or p.name.endswith(".meta.json"):
        raise UserError(f"--trace {trace}: a trace is a .json file of its own, not a recording's .csv or .meta.json")
    if not out.exists() and p.parent.resolve() == out.resolve():
        return  # into the recording's new directory, made before anything is written there
    check_output_file(trace, "--trace")
    if os.path.lexists(trace) and not force:
        raise UserError(f"--trace {trace}: exists already; choose another name, or pass --force to replace it")


def drawing_share(csvs: dict) -> str:
    """One line: the share of recorded frames that drew at least one object (per index when they differ)."""
    import numpy as np

    from ..recording import read_run

    shares = {}
    for name, path in csvs.items():
        drawn = np.asarray(read_run(path)["drawn"])
        shares[name] = (int((drawn > 0).sum()), int(drawn.size))
    if len(set(shares.values())) == 1:
        hit, n = next(iter(shares.values()))
        who = "every index" if len(shares) > 1 else next(iter(shares))
        return f"frames that draw something: {100.0 * hit / max(n, 1):.1f}% ({hit} of {n}; {who})"
    return "frames that draw something: " + ", ".join(
        f"{name} {100.0 * hit / max(n, 1):.1f}% ({hit} of {n})" for name, (hit, n) in shares.items())
