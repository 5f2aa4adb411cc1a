"""Headless replay of a camera path, recorded: what ``viewer record`` runs.

Every frame is rendered (offscreen, EGL) at a pose sampled from the path with a fixed ``dt``, so two
runs of the same path see exactly the same poses and visible sets. Several indexes run interleaved
on one GL context: frame k is rendered by every index before frame k + 1 by any (in an order that
changes each frame, so that each index follows every other equally often: :mod:`viewer.host.interleave`),
each index with its own pipeline, buffers and camera, so a noisy machine slows them all alike. One CSV and one metadata file per index. Each index has its own
:class:`viewer.render.ViewerSession`, which this module only drives: options, warm-up, frames.

GL is imported lazily (through :mod:`viewer.drivers.headless` / :mod:`viewer.render`), only when a replay runs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Callable, Sequence

from ..frame.culling import check_cullers
from ..errors import UserError
from ..host.output import prepare_out_dir
from ..host.interleave import balanced_orders
from ..recording.meta import build_meta, gl_info, meta_path_for
from ..host.progress import Progress
from ..recording.writer import Recorder

__all__ = ["check_indexes", "replay"]


def check_indexes(names: Sequence[str]) -> list[str]:
    """Known, available, distinct index names (order kept; ``gpu`` too: :mod:`viewer.frame.culling`); a
    :class:`UserError` otherwise."""
    return check_cullers(names, "--index")


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
) -> dict[str, Path]:
    """Render ``samples`` (:class:`viewer.paths.PoseSamples`) of ``scene`` once per index, recording
    ``out_dir/INDEX.csv`` (+ ``INDEX.meta.json``) for each; returns ``{index: csv path}``.

    on_frame(index, k, session, stats) : called after each frame (tests read ``session.visible_ids()``)
    warmup : unrecorded frames at the first pose per index (:meth:`viewer.render.ViewerSession.warm_up`)
    hysteresis : ``(margin, relative)`` of the visibility events (the ``entered`` / ``left`` columns)
    overwrite : replace an ``INDEX.csv`` / ``INDEX.meta.json`` already in ``out_dir`` (a symbolic link by that
        name is replaced, never written through: :class:`viewer.recording.Recorder`); False: refuse with a
        :class:`UserError` before anything is rendered or written

    Each index has its own pipeline and so its own copy of a moving world, advanced by the same ``dt``
    from the same seed: every index sees the same objects at the same places.
    """
    names = check_indexes(indexes)
    d = prepare_out_dir(out_dir, create=False)
    if len(samples) == 0:
        raise UserError("the camera path gives no frames")
    if not overwrite:
        for name in names:
            csv = d / f"{name}.csv"
            for f in (csv, meta_path_for(csv)):
                if os.path.lexists(f):
                    raise UserError(f"{f}: exists already; a recording is not overwritten (record into another "
                                    "directory, or replace it on purpose: --force)")

    from .headless import HeadlessViewer
    from ..frame.options import SessionOptions
    from ..render import ViewerSession

    def options(name: str) -> SessionOptions:
        return SessionOptions(index=name, indexes=[name], draw=draw, hud=False, boxes=False, hysteresis=hysteresis)

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
        for s in sessions.values():
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
                dt=samples.dt,
                draw=draw,
                interleaved=names,
                build_s=info["build_s"],
                camera={"fov": s.camera.fov, "near": s.camera.near, "far": s.camera.far},
                hysteresis=info["hysteresis"],
                culling=info["culling"],
                moving=info["moving"],
            )
            recorders[name] = Recorder(d / f"{name}.csv", meta, flush_rows=flush_rows)

        total = len(samples) * len(names)
        bar = Progress(total, f"record {len(names)} index{'es' if len(names) > 1 else ''}", enabled=progress)
        done = 0
        orders = balanced_orders(len(names))
        for k in range(len(samples)):
            pose = samples.pose(k)
            t = float(samples.t[k])
            for j in orders[k % len(orders)]:
                name = names[j]
                s = sessions[name]
                st = s.frame(samples.dt, pose=pose, t=t)
                recorders[name].append(st)
                if on_frame is not None:
                    on_frame(name, k, s, st)
                done += 1
            bar.update(done)
        bar.close()
        for r in recorders.values():
            r.close()
    finally:
        for r in recorders.values():
            r.close(ended="error")  # no-op when already closed
        hv.close()
    if progress:
        for name, r in recorders.items():
            print(f"wrote {r.path} ({r.rows_written} frames)", file=sys.stderr)
    return {name: r.path for name, r in recorders.items()}
