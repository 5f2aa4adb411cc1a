"""``viewer view``'s run: a window to fly through a scene (:mod:`.window`), or frames rendered headless through
EGL (:mod:`.headless`) with a summary of their stage timings."""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from dataclasses import dataclass

from ..errors import UserError
from ..frame.options import SessionOptions

__all__ = ["ViewOptions", "parse_pose", "summarise", "view", "view_points"]


@dataclass(frozen=True)
class ViewOptions:
    """What ``viewer view`` was asked (its flags, as parsed; the mode's flags already checked).

    scene : a recipe, ``.npz``, bundled name or file to import (with ``import_options``); index : the culler to
    start with (None: octree when available, else brute); size : (w, h) pixels; pose : (x, y, z, yaw, pitch);
    hysteresis : ``(margin, relative)`` or None; headless : frames offscreen (``frames``, ``path``, ``dt``), else
    a window (``record``, ``vsync``, ``max_fps``, ``fixed_dt``, ``max_frames``, ``views``).
    """

    scene: str
    import_options: dict | None = None
    index: str | None = None
    size: tuple[int, int] = (1280, 720)
    draw: str = "sprites"
    colour: str = "category"
    fade: float = 0.15
    boxes: bool = False
    hud: bool | None = None
    pose: tuple | None = None
    speed: float | None = None
    hysteresis: tuple[float, bool] | None = None
    screenshot: str | None = None
    headless: bool = False
    frames: int | None = None
    path: str | None = None
    dt: float | None = None
    record: str | None = None
    vsync: bool = False
    max_fps: float | None = None
    fixed_dt: float | None = None
    max_frames: int | None = None
    views: int | None = None


def parse_pose(text: str) -> tuple[float, float, float, float, float]:
    """An argparse type: ``--pose X,Y,Z,YAW,PITCH``, world units and degrees; the position inside the numeric domain
    (``|coordinate| <= viewer.domain.COORD_LIMIT``, every index's promise), the angles at most
    ``viewer.domain.ANGLE_LIMIT`` degrees."""
    from ..domain import ANGLE_LIMIT, COORD_LIMIT

    try:
        vals = tuple(float(v) for v in text.split(","))
    except ValueError:
        vals = ()
    if len(vals) != 5 or not all(math.isfinite(v) for v in vals):
        raise argparse.ArgumentTypeError(f"expected X,Y,Z,YAW,PITCH (five numbers), got {text!r}")
    if not all(abs(v) <= COORD_LIMIT for v in vals[:3]):
        raise argparse.ArgumentTypeError(
            f"the position must be within +-{COORD_LIMIT:.4g} (2**100) world units on each axis, got {text!r}")
    if not all(abs(v) <= ANGLE_LIMIT for v in vals[3:]):
        raise argparse.ArgumentTypeError(f"yaw and pitch must be within +-{ANGLE_LIMIT:g} degrees, got {text!r}")
    return vals


def _no_window_message(opts, why: str) -> str:
    return (f"cannot open a window: {why}. Render offscreen instead (no display needed):\n"
            f"  viewer view {opts.scene} --headless --frames 120 --screenshot out.png\n"
            "or run the window on a virtual display:\n"
            f"  xvfb-run -s '-screen 0 {opts.size[0]}x{opts.size[1]}x24' viewer view {opts.scene}")


def view(opts: ViewOptions) -> int:
    """``viewer view``: a window (a display checked first, takes opened), or ``headless`` frames; the scene loaded
    and the kernels the view runs compiled before either starts. Returns the exit status."""
    from contextlib import ExitStack

    from .replay import check_indexes
    from .warm import compiling, default_indexes, warm_kernels
    from ..scenes.loading import open_scene_shown

    given = check_indexes([opts.index or (default_indexes("octree") or ["brute"])[0]])
    index, cycle = given[0], _cycle(given)
    takes = None
    if not opts.headless:
        from ..system.display import display_problem

        why = display_problem()
        if why:
            raise UserError(_no_window_message(opts, why))
        if opts.record:
            from ..recording.takes import TakeDir

            takes = TakeDir(opts.record)
    cam_path = None
    if opts.path:
        from ..paths import load_path

        cam_path = load_path(opts.path)
    if opts.screenshot is not None:
        from ..files.output import check_output_file

        check_output_file(opts.screenshot, "--screenshot")  # before the scene loads and frames render

    print(f"loading {opts.scene} ...", file=sys.stderr)
    scene = open_scene_shown(opts.scene, opts.import_options, min_total=1_000_000)  # a big recipe, a slow file
    with ExitStack() as scopes:
        # compiled before the window opens (on a first run it would stay black, saying nothing, while numba compiles)
        # and before the headless run's lines
        warm_kernels(scene, [index], view_points(opts, scene), scopes=scopes)
        if opts.headless:
            with compiling():  # (a GPU mode's kernels, compiled with its session)
                return _headless(opts, scene, index, cam_path, cycle)
        return _window(opts, scene, index, takes, cycle)


def _cycle(given: list[str]) -> list[str] | None:
    """What the ``I`` cycle goes through when --index names several cullers: those, then every other available
    index (registered and installed plugins); None for one (the session's own cycle, that one first)."""
    from ..frame.culling import index_names

    return None if len(given) < 2 else [*given, *(n for n in index_names(available=True) if n not in given)]


def view_points(opts, scene) -> tuple[str, ...]:
    """The entry points of an index (:data:`viewer.index.ENTRY_POINTS`) this view runs, the only ones compiled
    (:func:`viewer.index.warm_scope`; all of an index's would make a first run much longer): the query; a batch of
    points in a window (its N key splits the view) or with ``--views`` above 1; ``move_many`` in a window (the
    panel's view-distance scale) or a moving world. A view never inserts, removes or moves one object."""
    batch = not opts.headless or (opts.views or 1) > 1
    moves = scene.moves or not opts.headless
    return ("build", "query") + (("query_many",) if batch else ()) + (("move_many",) if moves else ())


def _headless(opts, scene, index: str, cam_path, cycle: list[str] | None = None) -> int:
    from .frames import planned_frames
    from .headless import HeadlessViewer
    from ..system.machine import machine
    from ..paths import generated_path, probe_index
    from ..recording.meta import gl_info, timed_on

    if opts.pose is not None:
        samples = [opts.pose] * (opts.frames or 120)
        name, dt = f"pose {opts.pose}", opts.dt or 1.0 / 60.0
    else:
        what = f"--path {opts.path}" if cam_path is not None else "the generated path"
        if cam_path is None:
            try:
                cam_path = generated_path(scene, speed=opts.speed, aspect=opts.size[0] / opts.size[1],
                                          index=probe_index([index]))
            except ValueError as exc:  # e.g. a speed so low that the path's times overflow
                raise UserError(f"--speed {opts.speed}: no usable path at this speed: {exc}") from None
            if opts.speed:
                what = f"the generated path at --speed {opts.speed:g}"
        if opts.dt is not None:
            planned_frames(cam_path.duration, opts.frames, opts.dt, what)
        if opts.frames is None and opts.dt is None:
            samples = cam_path.sample(frames=120)
        else:
            samples = cam_path.sample(frames=opts.frames, dt=opts.dt)
        name, dt = cam_path.name, samples.dt
    try:
        hv = HeadlessViewer(scene, size=opts.size, index=index, indexes=cycle, draw=opts.draw, colour=opts.colour,
                            hud=bool(opts.hud), boxes=opts.boxes, fade=opts.fade, hysteresis=opts.hysteresis)
    except RuntimeError as exc:
        raise UserError(str(exc)) from None
    with hv:
        build = hv.session.run_info()["build_s"]
        built = f" (built in {build:.3f} s)" if build is not None else ""
        print(f"{scene.name}: {len(scene.centres)} objects; index {index}{built}; {len(samples)} frames of "
              f"{name} (dt {dt:.4g} s) at {opts.size[0]}x{opts.size[1]}, {hv.session.options.draw}",
              file=sys.stderr)
        rows = hv.run(samples, dt)
        shot = hv.screenshot_new(opts.screenshot) if opts.screenshot else None
        where = timed_on({"machine": machine(), "gl": gl_info(hv.ctx)})
    print(summarise(rows))
    print(where)
    if build is not None:
        print(f"index {index} built in {build:.3f} s")
    if shot is not None:
        taken = f" ({opts.screenshot} is taken: a screenshot is never overwritten)" if shot != opts.screenshot else ""
        print(f"wrote {shot}{taken}")
    return 0


def summarise(rows) -> str:
    """Median stage times and counts of ``rows`` (FrameStats), and the share of the frame spent in the
    culling stages (query + cull + gather + upload: ``FrameStats.cpu_ms``); every stage and shown count
    of :mod:`viewer.frame.stages`."""
    from ..frame.stages import HUD_COUNTS, STAGES

    if not rows:
        return "no frames"
    med = lambda k: statistics.median(getattr(r, k) for r in rows)  # noqa: E731
    cpu = statistics.median(r.cpu_ms / r.frame_ms for r in rows if r.frame_ms > 0)
    culling = " + ".join(s.name for s in STAGES if s.culling)
    return (
        f"frames {len(rows)}  median frame {med('frame_ms'):.2f} ms ({1000.0 / med('frame_ms'):.1f} fps)\n"
        "median ms: " + "  ".join(f"{s.name} {med(s.column):.3f}" for s in STAGES) + "\n"
        f"{culling} share of the frame (median): {100.0 * cpu:.1f}%\n"
        "median counts: " + "  ".join(f"{label} {med(name):g}" for name, label in HUD_COUNTS) +
        f"; max drawn {max(r.drawn for r in rows)}\n"
        f"moved per frame {med('moved'):g}  events: entered "
        f"{sum(r.entered for r in rows)}  left {sum(r.left for r in rows)} over {len(rows)} frames"
    )


def _window(opts, scene, index: str, takes, cycle: list[str] | None = None) -> int:
    try:
        from .window import WindowLost, WindowOptions, WindowUnavailable, run_window, summary
    except ImportError as exc:
        raise UserError(f"cannot open a window: {exc}") from None
    session = SessionOptions(index=index, indexes=cycle, draw=opts.draw, colour=opts.colour, fade=opts.fade,
                             hud=True if opts.hud is None else opts.hud, boxes=opts.boxes)
    window = WindowOptions(scene=scene, session=session, screenshot=opts.screenshot, fixed_dt=opts.fixed_dt,
                           max_frames=opts.max_frames or 0, pose=opts.pose, speed=opts.speed, hysteresis=opts.hysteresis,
                           takes=takes, record=bool(opts.record), vsync=opts.vsync, max_fps=opts.max_fps,
                           views=opts.views or 1)
    try:
        win = run_window(window, size=opts.size)
    except WindowUnavailable as exc:
        raise UserError(_no_window_message(opts, str(exc))) from None
    except WindowLost as exc:
        print(f"viewer view: error: {exc}; every take closed with its rows, exiting", file=sys.stderr)
        return 1
    print(summary(win), file=sys.stderr)
    return 0
