"""Headless replay of a camera path, recorded: what ``viewer record`` runs.

Every frame is rendered (offscreen, EGL) at a pose sampled from the path with a fixed ``dt``, so two
runs of the same path see exactly the same poses and visible sets. The path of a window take of a moving
world (``DIR/take-N.path.toml``) is replayed as flown: the world starts where it was when the take began
(its clock, step count and movers, from ``take-N.meta.json`` and ``take-N.world.npz``:
:func:`resume_take`) and the frames run at the take's own ``t`` and ``dt``, so the movers are where they
were. Several indexes run interleaved
on one GL context: frame k is rendered by every index before frame k + 1 by any (in an order that
changes each frame, so that each index follows every other equally often: :mod:`viewer.timing.interleave`),
each index with its own pipeline, buffers and camera, so a noisy machine slows them all alike. One CSV and one metadata file per index. Each index has its own
:class:`viewer.render.ViewerSession`, which this module only drives: options, warm-up, frames.

GL is imported lazily (through :mod:`viewer.drivers.headless` / :mod:`viewer.render`), only when a replay runs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from time import perf_counter
from typing import Callable, Sequence

import numpy as np

from ..errors import UserError
from ..frame.stages import GPU_COLUMN
from ..files.output import prepare_out_dir
from ..index.specs import label_stem
from ..timing.heap import FrameCollector
from ..timing.interleave import balanced_orders
from ..recording.meta import build_meta, gl_info, meta_path_for, timed_on
from ..terminal.progress import Progress
from ..recording.trace import TraceWriter
from ..recording.writer import Recorder

__all__ = ["TakeResume", "check_indexes", "replay", "resume_take"]


def check_indexes(names: Sequence[str]) -> list[str]:
    """Known, available, distinct index names (order kept; ``gpu`` too: :mod:`viewer.render.modes`); a
    :class:`UserError` otherwise. The render layer is loaded here, not at import: reading a recording loads no GL."""
    from ..render.modes import check_cullers

    return check_cullers(names, "--index")


class TakeResume:
    """How a take's replay starts its world (:func:`resume_take`).

    scene : the scene to replay (a copy starting at the take's world: :func:`viewer.frame.motion.resumed`)
    samples : the poses to replay (at the take's own times, or the fixed step asked for)
    dts : (F,) float64, each frame's dt (the take's, as flown), or None: ``samples.dt`` every frame
    world : the replayed runs' metadata ``world`` section (None: the world starts from t = 0)
    line : what the replay says about it on stderr (None: nothing to say)
    """

    def __init__(self, scene, samples, dts=None, world: dict | None = None, line: str | None = None) -> None:
        self.scene = scene
        self.samples = samples
        self.dts = dts
        self.world = world
        self.line = line


def resume_take(scene, samples, path_file: str | os.PathLike | None, *, take_dt: bool = True) -> TakeResume:
    """Where the replay of ``path_file`` starts the world of ``scene``, and at which ``dt`` it runs.

    When ``path_file`` is a window take's path (``take-N.path.toml``, its metadata beside it) and ``scene``
    moves, the world starts where it was when the take began (``take-N.world.npz``: its clock, step count
    and the movers' places) and, with ``take_dt``, the frames are the take's own: the path at each row's
    ``t``, advanced by each row's real ``dt`` (``take-N.csv``), so every mover is where it was when flown.
    Without ``take_dt`` (a ``--dt`` or ``--frames`` asked for) the world still starts there, at the fixed
    step. Anything else (another path, a static scene) replays ``samples`` as given.

    A take of a moving world whose world cannot be resumed (a take of an older viewer, with no world file;
    a world of other movers: another scene) is a warning, and the world starts from t = 0. A damaged
    metadata or world file is a :class:`UserError` naming it (:func:`viewer.recording.takes.read_take_world`
    checks every value, so the world it gives resumes on any scene of those movers).
    """
    from ..frame.motion import OtherMovers, resumed
    from ..recording.takes import read_take_world

    plain = TakeResume(scene, samples)
    if path_file is None or getattr(scene, "motion", None) is None:
        return plain
    tw = read_take_world(path_file)
    if tw is None:
        return plain
    if tw.snapshot is None:
        return TakeResume(scene, samples, line=(
            f"viewer record: warning: {tw.meta_file.name} records no world clock (a take of an older viewer): the "
            "moving world starts from t = 0, not where it was when the take began; its movers will not be where they "
            "were"))
    try:
        start = resumed(scene, tw.snapshot)
    except OtherMovers as exc:  # a take of another scene (record warns of that too)
        return TakeResume(scene, samples, line=(
            f"viewer record: warning: {tw.world_file} is not this scene's moving world ({exc}): the world starts "
            "from t = 0"))
    world = {"t": tw.clock, "step": tw.step, "from": tw.meta_file.name, "file": tw.world_file.name}
    clock = f"world clock {tw.clock:.1f} s (step {tw.step}) from {tw.meta_file.name}"
    if not take_dt or tw.t is None or tw.dt is None or tw.t.size == 0:
        why = "--dt / --frames asked for" if take_dt is False else f"{tw.name}.csv is gone"
        world["dt"] = "fixed"
        return TakeResume(start, samples, world=world, line=(
            f"{clock}; at a fixed dt of {samples.dt:.4g} s ({why}) the movers leave the take's places"))
    from ..paths import PoseSamples, load_path

    path = load_path(path_file)
    pos, yaw, pitch = path.evaluate(path.start + tw.t)
    dts = np.ascontiguousarray(tw.dt, dtype=np.float64)
    taken = PoseSamples(tw.t.copy(), float(np.median(dts)), pos, yaw, pitch)
    world["dt"] = "take"
    return TakeResume(start, taken, dts, world, (
        f"{clock}; the take's {dts.size} frames at their own dt ({dts.min():.4g}..{dts.max():.4g} s)"))


def replay(
    scene,
    samples,
    indexes: Sequence[str],
    out_dir: str | os.PathLike,
    *,
    size: tuple[int, int] = (1280, 720),
    draw: str = "sprites",
    path_meta: dict | None = None,
    warmup: int = 3,
    progress: bool = True,
    on_frame: Callable | None = None,
    flush_rows: int = 256,
    hysteresis: tuple[float, bool] | None = None,
    overwrite: bool = True,
    take_dt: bool = True,
    views: Sequence | None = None,
    trace: TraceWriter | None = None,
    gpu_time: bool = False,
) -> dict[str, Path]:
    """Render ``samples`` (:class:`viewer.paths.PoseSamples`) of ``scene`` once per index, recording
    ``out_dir/INDEX.csv`` (+ ``INDEX.meta.json``) for each; returns ``{index: csv path}``.

    on_frame(index, k, session, stats) : called after each frame (tests read ``session.visible_ids()``)
    warmup : unrecorded frames at the first pose per index (:meth:`viewer.render.ViewerSession.warm_up`)
    hysteresis : ``(margin, relative)`` of the visibility events (the ``entered`` / ``left`` columns)
    overwrite : replace an ``INDEX.csv`` / ``INDEX.meta.json`` already in ``out_dir`` (a symbolic link by that
        name is replaced, never written through: :class:`viewer.recording.Recorder`); False: refuse with a
        :class:`UserError` before anything is rendered or written

    gpu_time : time each frame's GL work with timer queries into ``gpu_ms`` (:class:`SessionOptions`; else 0)
    take_dt : replaying a window take of a moving world (``path_meta["source"]`` a ``take-N.path.toml``),
        run its frames at the take's own ``t`` and ``dt``; False: at ``samples.dt`` (``--dt``, ``--frames``).
        Either way its world starts where the take's began (:func:`resume_take`, which says so on stderr)
    views : the poses of the views after the first (``viewer record --views K``: K - 1
        :class:`viewer.paths.PoseSamples` as long as ``samples``); every frame then culls the K views
        together (:meth:`viewer.render.ViewerSession.frame_views`) and each CSV has K rows a frame (``view``)
    trace : also hand every recorded row to this :class:`viewer.recording.TraceWriter` with its frame's start
        (one process per index, per view in a split screen); the caller closes it

    Each index has its own pipeline and so its own copy of a moving world, advanced by the same ``dt``
    from the same seed: every index sees the same objects at the same places.
    """
    names = check_indexes(indexes)
    resume = resume_take(scene, samples, (path_meta or {}).get("source"), take_dt=take_dt)
    scene, samples, dts = resume.scene, resume.samples, resume.dts
    if resume.world is not None:
        path_meta = {**(path_meta or {}), "frames": len(samples), "dt": None if dts is not None else samples.dt}
    if resume.line:
        print(resume.line, file=sys.stderr)
    d = prepare_out_dir(out_dir, create=False)
    if len(samples) == 0:
        raise UserError("the camera path gives no frames")
    if not overwrite:
        for name in names:
            csv = d / f"{label_stem(name)}.csv"
            for f in (csv, meta_path_for(csv)):
                if os.path.lexists(f):
                    raise UserError(f"{f}: exists already; a recording is not overwritten (record into another "
                                    "directory, or replace it on purpose: --force)")

    from .headless import HeadlessViewer
    from ..frame.options import SessionOptions
    from ..render import ViewerSession

    def options(name: str) -> SessionOptions:
        return SessionOptions(index=name, indexes=[name], draw=draw, hud=False, boxes=False, hysteresis=hysteresis,
                              gpu_time=gpu_time)

    try:
        hv = HeadlessViewer(scene, size=size, options=options(names[0]))
    except RuntimeError as exc:  # no EGL: the message says what to install
        raise UserError(str(exc)) from None
    recorders: dict[str, Recorder] = {}
    try:
        prepare_out_dir(d)
        sessions = {names[0]: hv.session}
        for name in names[1:]:
            sessions[name] = ViewerSession(hv.ctx, hv.fbo, scene, options(name))
        first = samples.pose(0)
        views = list(views or ())
        for s in sessions.values():
            if views:
                s.set_views(1 + len(views))
            s.warm_up(first, warmup)

        gl = gl_info(hv.ctx)
        for name, s in sessions.items():
            info = s.run_info()
            meta = build_meta(
                scene=scene,
                index=name,
                index_options=info["index_options"],
                window_size=hv.size,
                gl=gl,
                headless=True,
                vsync=False,  # offscreen framebuffer: no swap, nothing to sync to
                path=path_meta,
                dt=samples.dt if dts is None else None,  # None: each frame's own (the take's), in the CSV
                draw=draw,
                interleaved=names,
                build_s=info["build_s"],
                camera={"fov": s.camera.fov, "near": s.camera.near, "far": s.camera.far},
                hysteresis=info["hysteresis"],
                culling=info["culling"],
                moving=info["moving"],
                **({} if resume.world is None else {"world": resume.world}),
            )
            recorders[name] = Recorder(d / f"{label_stem(name)}.csv", meta, flush_rows=flush_rows)

        worst = {name: {"update_ms": [], "query_ms": [], GPU_COLUMN: []} for name in names}  # the summary's, by index
        floors = _UpdateFloor.of(sessions[names[0]].motion_state)  # a moving world's update floor, or None
        total = len(samples) * len(names)
        bar = Progress(total, f"record {len(names)} index{'es' if len(names) > 1 else ''}", enabled=progress)
        done = 0
        orders = balanced_orders(len(names))
        with FrameCollector() as frames_gc:  # no collection inside a timed frame (viewer.timing.heap)
            for k in range(len(samples)):
                pose = samples.pose(k)
                t = float(samples.t[k])
                dt = samples.dt if dts is None else float(dts[k])
                for j in orders[k % len(orders)]:
                    name = names[j]
                    s = sessions[name]
                    start = perf_counter()
                    if views:
                        rows = s.frame_views(dt, poses=[pose, *(v.pose(k) for v in views)], t=t)
                    else:
                        rows = [s.frame(dt, pose=pose, t=t)]
                    for st in rows:
                        recorders[name].append(st)
                        if trace is not None:
                            trace.add(f"{name} · view {st.view}" if views else name, st, start)
                        for col, got in worst[name].items():
                            got.append(getattr(st, col))
                    if on_frame is not None:
                        on_frame(name, k, s, rows[0] if not views else rows)
                    done += 1
                    frames_gc.between_frames()
                if floors is not None:
                    floors.time()
                bar.update(done)
        bar.close()
        for name, r in recorders.items():
            if floors is not None:
                r.meta["update_floor_ms"] = floors.summary(worst[name]["update_ms"])
            r.close()
    finally:
        for r in recorders.values():
            r.close(ended="error")  # no-op when already closed
        hv.close()
    if progress:
        for name, r in recorders.items():
            built = r.meta.get("build_s")
            built = "" if built is None else f"; {name} built in {built:.3g} s"
            each = f"{r.rows_written // (1 + len(views))} frames x {1 + len(views)} views" if views else \
                f"{r.rows_written} frames"
            print(f"wrote {r.path} ({each}{built})", file=sys.stderr)
        gpu_note = _gpu_ms_note(hv.session.gpu_timer.why, gl.get("renderer"))
        for name in names:
            print(f"{name}: {_worst_line(worst[name])} {gpu_note}", file=sys.stderr)
        if floors is not None:
            print(floors.line({name: worst[name]["update_ms"] for name in names}), file=sys.stderr)
        where = timed_on(next(iter(recorders.values())).meta)  # one GL context and machine for every index
        if where:
            print(where, file=sys.stderr)
    return {name: r.path for name, r in recorders.items()}


def _gpu_ms_note(why: str | None, renderer: str | None) -> str:
    """What ``gpu_ms`` is, said beside it: GL timer queries, and on a software renderer (llvmpipe) that they
    time that renderer (CPU work); ``why`` the session's timer had none (:attr:`viewer.render.GpuTimer.why`)."""
    from ..render.gpu_timer import software_renderer

    if why is not None:
        return f"(gpu_ms not measured: {why})"
    if software_renderer(renderer):
        return f"(gpu_ms: GL timer queries on {renderer}, a software renderer: its clock, CPU work, not a GPU's)"
    return f"(gpu_ms: GL timer queries on {renderer or 'this GL renderer'})"


class _UpdateFloor:
    """The least work a moving world's update can be (:class:`viewer.kernels.floors.UpdateFloors`), timed once a
    frame beside the indexes' frames: the world's movers' rows written at their ids by one thread, and one after
    another, at their positions of that frame."""

    def __init__(self, motion) -> None:
        from ..kernels.floors import UpdateFloors

        self.motion = motion
        self.floors = UpdateFloors(motion.radii)
        self.floors.movers(motion.ids)
        self.ms: dict[str, list[float]] = {"scatter": [], "contiguous": []}

    @classmethod
    def of(cls, motion) -> "_UpdateFloor | None":
        return None if motion is None or not motion.ids.size else cls(motion)

    def time(self) -> None:
        pos = self.motion.centres[self.motion.ids]  # this frame's places (a copy, outside the timed writes)
        for kind, write in (("scatter", self.floors.scatter), ("contiguous", self.floors.contiguous)):
            t0 = perf_counter()
            write(pos)
            self.ms[kind].append((perf_counter() - t0) * 1e3)

    def summary(self, update_ms: list[float]) -> dict:
        """What a recording's metadata keeps: the floors' medians (ms), the movers, the update's median over
        the scatter floor."""
        scatter, contiguous = (float(np.median(self.ms[k])) if self.ms[k] else float("nan") for k in self.ms)
        update = float(np.median(update_ms)) if update_ms else float("nan")
        return {"scatter": scatter, "contiguous": contiguous, "movers": int(self.motion.ids.size),
                "update_x_floor": update / scatter if scatter > 0 else None}

    def line(self, updates: dict[str, list[float]]) -> str:
        """One line: both floors and each index's median update_ms over the first, fastest first."""
        s = self.summary([])
        xs = sorted((self.summary(u)["update_x_floor"] or float("inf"), n) for n, u in updates.items())
        return (f"update floor ({s['movers']:,} movers, median of the frames): {s['scatter']:.3g} ms writing their "
                f"rows at their ids, {s['contiguous']:.3g} ms one after another; update_ms over the first: "
                + ", ".join(f"{n} {x:.2f}x" for x, n in xs))


def _worst_line(columns: dict[str, list[float]]) -> str:
    """``update_ms median 16.2 / p95 ... / max 31.0; query_ms ...``: the typical and the worst frames of each
    timed column (:data:`viewer.frame.stages.TIME_STATS`), what ``viewer compare`` tabulates."""
    from ..frame.stages import TIME_STATS

    parts = []
    for col, vals in columns.items():
        v = np.asarray(vals, dtype=np.float64)
        parts.append(f"{col} " + " / ".join(f"{name} {np.percentile(v, q):.3g}" for name, q in TIME_STATS))
    return "; ".join(parts)
