"""Many views of one world in one frame: split-screen players, shadow views, a server's clients. No GL.

A :class:`ViewSet` holds K pipelines over one world: the first is the frame's own
(:class:`viewer.frame.FramePipeline`), the others its :meth:`~viewer.frame.FramePipeline.sibling` views,
each with its camera and its own buffers, events and freeze. A frame runs::

    update  every camera moves; the world's movers advance once (in the first view's update stage)
    query   every view's query point in one batch: the culling mode's ``query_views`` (CPU culling: the
            index's ``query_many``, one pass over the scan's arrays, the trees walked in Morton order; the
            GPU: a dispatch per view)
    cull, gather  per view, as a single view's frame

and gives K rows, one per view (``view`` 0..K-1). Each view's ``query_ms`` and query counters are its
share of the batch (the batch's time and counters over K); ``update_ms`` and ``moved`` are the world's on
the first view's row and the camera's alone on the others; each view's ``frame_ms`` runs from the start of
the frame to the end of its own stages.
"""

from __future__ import annotations

from time import perf_counter
from typing import TYPE_CHECKING, Sequence

from .pipeline import FramePipeline, select_views

if TYPE_CHECKING:  # annotations only
    from ..camera import CameraMatrices, FlyCamera, InputState
    from .stats import FrameStats

__all__ = ["MAX_VIEWS", "VIEW_CYCLE", "ViewSet"]

#: the most views a frame culls (split screen: 4; a server's clients go through ``query_many`` directly)
MAX_VIEWS = 16

#: the view counts a window splits into (``viewer view --views``; its N key cycles them)
VIEW_CYCLE = (1, 2, 4)


class ViewSet:
    """K views of the world of ``frame``, culled together each frame (the module docstring).

    frame : the first view's pipeline (the world's owner); cameras : (K,) one camera per view, the first
    the frame's own. :meth:`set_views` changes K between frames.
    """

    def __init__(self, frame: FramePipeline, cameras: Sequence[FlyCamera]):
        if not 1 <= len(cameras) <= MAX_VIEWS:
            raise ValueError(f"a frame has 1..{MAX_VIEWS} views, got {len(cameras)}")
        self.frames: list[FramePipeline] = [frame]
        self.cameras: list[FlyCamera] = [cameras[0]]
        self.set_views(cameras)

    def __len__(self) -> int:
        return len(self.frames)

    @property
    def main(self) -> FramePipeline:
        """The first view's pipeline: the world's owner."""
        return self.frames[0]

    def set_views(self, cameras: Sequence[FlyCamera]) -> None:
        """Views 0..K-1 now use ``cameras`` (the first stays the world's own pipeline); views added start
        their events afresh at the world's clock, views dropped are forgotten."""
        if not 1 <= len(cameras) <= MAX_VIEWS:
            raise ValueError(f"a frame has 1..{MAX_VIEWS} views, got {len(cameras)}")
        main = self.frames[0]
        del self.frames[len(cameras):]
        self.frames += [main.sibling(j) for j in range(len(self.frames), len(cameras))]
        self.cameras = list(cameras)

    # ------------------------------------------------------------------------------ the world's changes
    def use_index(self, name: str) -> None:
        """Every view culls with ``name`` (built once, for the world)."""
        self.frames[0].use_index(name)
        self.sync()

    def set_radius_scale(self, scale: float) -> float:
        """Every view radius times ``scale`` for every view (:meth:`FramePipeline.set_radius_scale`)."""
        took = self.frames[0].set_radius_scale(scale)
        self.sync()
        return took

    def sync(self) -> None:
        """The other views take up what was changed on the first (the world's) pipeline: its culler, the
        radius scale, the fade, the draw and colour modes and the events' margin. Freeze stays per view."""
        main = self.frames[0]
        for v in self.frames[1:]:
            v.mode, v.index_name = main.mode, main.index_name
            v.radii, v.radius_scale = main.radii, main.radius_scale
            v.fade = main._fade
            if v.draw_mode != main.draw_mode:
                v.set_draw_mode(main.draw_mode)
            v.set_colour_mode(main.colour_mode)
            v.set_hysteresis(main.events.margin, main.events.relative)

    def restart(self) -> None:
        for v in self.frames:
            v.restart()

    # ------------------------------------------------------------------------------ the frame
    def run(self, dt: float, *, poses: Sequence | None = None,
            input_state: InputState | None = None) -> list[CameraMatrices]:
        """One frame of every view: :meth:`update`, then :meth:`select`. Returns each view's matrices;
        :meth:`finish` then gives the rows."""
        self.update(dt, poses=poses, input_state=input_state)
        return self.select()

    def update(self, dt: float, *, poses: Sequence | None = None, input_state: InputState | None = None) -> None:
        """Every view's update stage: its camera set to ``poses[j]`` (or the first camera moved by
        ``input_state``), and the world's movers advanced once, in the first view's."""
        for j, (v, cam) in enumerate(zip(self.frames, self.cameras)):
            v.update(cam, dt, pose=None if poses is None else poses[j], input_state=input_state if j == 0 else None)

    def select(self) -> list[CameraMatrices]:
        """Every view's query together and each one's cull and gather (:func:`viewer.frame.pipeline.select_views`)."""
        return select_views(self.frames, self.cameras)

    def finish(self, *, t: float | None = None, draw_calls: Sequence[int] | None = None) -> list[FrameStats]:
        """Each view's row of the frame :meth:`run` ran (``draw_calls`` (K,) per view), the clocks advanced."""
        end = perf_counter()
        calls = draw_calls or [0] * len(self.frames)
        return [v.finish(t=t, draw_calls=int(c), end=end) for v, c in zip(self.frames, calls)]

    def step(self, dt: float, *, poses: Sequence | None = None, t: float | None = None) -> list[FrameStats]:
        """One GL-free frame of every view: :meth:`run` then :meth:`finish`."""
        self.run(dt, poses=poses)
        return self.finish(t=t)
