"""One viewer session: the owner of a frame, end to end, for one scene into one framebuffer (offscreen for
headless runs and replays, the window's for the app).

Data flows one way per frame, and the frame's :class:`viewer.frame.FrameStats` row is built once, at its
end::

    camera -> index query -> events -> cull -> instance buffer (gather, upload) -> draw -> row

or, culling on the GPU (index ``gpu``, :mod:`viewer.render.gpu_cull`)::

    camera -> movers' rows uploaded -> one dispatch (query, events, cull, records) -> indirect draw -> row

The window (:mod:`viewer.drivers.window`), headless runs (:mod:`viewer.drivers.headless`) and replays
(:mod:`viewer.drivers.replay`) only drive it: they hand it a :class:`viewer.frame.options.SessionOptions`,
change options with :meth:`ViewerSession.set` (or the toggles), call :meth:`ViewerSession.warm_up` before
anything is recorded, then :meth:`ViewerSession.frame` once per frame.
"""

from __future__ import annotations

import copy
import math
from dataclasses import fields, replace
from time import perf_counter

import moderngl
import numpy as np

from viewer.scenes.look import DEFAULT_SKY, sky_colour

from ..camera import FlyCamera, InputState
from ..errors import UserError
from ..timing.heap import settle
from ..frame.options import SessionOptions
from ..frame.pipeline import FramePipeline, camera_for_scene
from ..frame.stages import HUD_COUNTS, STAGES
from ..frame.stats import FrameStats
from ..frame.views import MAX_VIEWS, ViewSet
from .context import read_rgb, save_png
from .gpu_timer import GpuTimer
from .instance_draw import InstanceDraw
from .modes import MODES, culler_names
from .renderer import SceneRenderer
from .shaders import ShaderLibrary
from .text import TextLayer

__all__ = ["ViewerSession"]

FOG_COLOUR = DEFAULT_SKY["objects"]  # the sky of a scene whose look names none

#: pixels: a framebuffer at least this wide gets its HUD lines wrapped to fit (narrower: cut at the edge)
HUD_WRAP_MIN_WIDTH = 640

_OPTION_NAMES = frozenset(f.name for f in fields(SessionOptions))
_FIXED = frozenset({"indexes", "index_options", "capacity"})  # set when the session is made


class ViewerSession:
    """Renders frames of one scene; owns the frame pipeline, the renderer and the camera.

    Parameters
    ----------
    ctx : the moderngl context; fbo : the target framebuffer (its viewport is the image size)
    scene : a :class:`viewer.scenes.Scene` (or anything with its array fields)
    options : a :class:`viewer.frame.options.SessionOptions` (default: its defaults); ``**changes`` override
        fields of it (``ViewerSession(ctx, fbo, scene, index="octree", draw="mesh")``)
    camera : the camera to fly (default: :func:`viewer.frame.camera_for_scene`)

    Public API: :attr:`options` (the current options), :meth:`set` (any option, live), the toggles the
    window binds to keys, :meth:`warm_up`, :meth:`restart`, :meth:`frame`, and read-only views of the last
    frame (:meth:`visible_ids`, :meth:`drawn_ids`) and of the run (:meth:`run_info`).
    """

    def __init__(self, ctx: moderngl.Context, fbo: moderngl.Framebuffer, scene, options: SessionOptions | None = None,
                 *, camera: FlyCamera | None = None, **changes):
        o = replace(options or SessionOptions(), **changes)
        self.ctx = ctx
        self.fbo = fbo
        w, h = fbo.viewport[2], fbo.viewport[3]
        self.camera = camera if camera is not None else camera_for_scene(scene, w / h)
        self.camera.aspect = w / h
        self.shaders = ShaderLibrary(ctx)
        #: the device's time of each frame's GL work (the row's ``gpu_ms``), handed to the GL culling modes
        self.gpu_timer = GpuTimer(ctx, None if o.gpu_time else "not asked for (--gpu-time)")
        modes, indexes = self._modes(o)
        self._pipeline = FramePipeline(scene, o.index, indexes=indexes, fade=o.fade, capacity=o.capacity,
                                       index_options=o.index_options, hysteresis=o.hysteresis, modes=modes)
        self._options = replace(o, indexes=list(self._pipeline.index_names))
        if o.radius_scale != 1.0:
            self.camera.far *= o.radius_scale
            self._pipeline.set_radius_scale(o.radius_scale)
        # the scene's look: its sky is the clear and fog colour; a star field is drawn as star sprites only
        style = getattr(scene, "style", "objects")
        self.fog_colour = sky_colour(style, getattr(scene, "sky", None))
        self._stars = style == "stars"
        if self._stars:
            self._options = replace(self._options, draw="sprites")
        self.renderer = SceneRenderer(ctx, self.shaders, capacity=o.capacity, mode=self._options.draw,
                                      fog_colour=self.fog_colour, fog_density=o.fog / max(self.camera.far, 1e-9),
                                      style=style)
        # an imported scene is drawn with its own meshes: "mesh" mode draws them (V toggles sprites)
        file_meshes = None
        if getattr(scene, "meshes", None) is not None:
            from .file_meshes import FileMeshRenderer

            file_meshes = FileMeshRenderer(ctx, self.shaders, scene.meshes)
            self._options = replace(self._options, draw="mesh")
        self.draw = InstanceDraw(self.renderer, file_meshes)
        self.text = TextLayer(ctx, self.shaders)
        self.help_line = ""
        self.hud_shown: list[str] = []  # the HUD lines drawn in the last frame, as laid out ([]: no HUD)
        self.scene_name = self._pipeline.name
        self.last: FrameStats | None = None
        self.rescale_s = 0.0  # seconds the last radius_scale change took the culling mode
        self._has_boxes = True  # whether the index had node boxes at the last frame that asked
        self._views: ViewSet | None = None  # split screen: the views after the first (set_views)
        self.last_views: list[FrameStats] = []  # the rows of the last frame_views
        #: a split screen labels each tile with its view's line (even where the HUD is off: the window's panel)
        self.view_labels = True
        self.set(colour=o.colour, frozen=o.frozen, draw=self._options.draw)

    def _modes(self, o: SessionOptions) -> tuple[dict, list[str] | None]:
        """The culling modes of :data:`viewer.render.modes.MODES` this context can run, as factories for the
        pipeline, and the cycle with them (by default every available index, then those modes). A mode asked
        for on a context that cannot run it: a :class:`viewer.errors.UserError` saying why."""
        asked = {o.index, *(o.indexes or ())}
        modes, missing = {}, []
        for name, cls in MODES.items():
            why = cls.unavailable(self.shaders)
            if why is None:
                modes[name] = lambda world, cls=cls: self._timed(cls(world, self.shaders))
            elif name in asked:
                raise UserError(f"--index {name}: not available with this OpenGL context: {why}")
            else:
                missing.append(name)
        indexes = o.indexes if o.indexes is not None else [n for n in culler_names(available=True) if n not in missing]
        return modes, indexes

    def _timed(self, mode):
        """``mode`` (a GL culling mode) timing its dispatches with this session's :attr:`gpu_timer`."""
        mode.gpu_timer = self.gpu_timer
        return mode

    # ----------------------------------------------------------------------------- options
    @property
    def options(self) -> SessionOptions:
        """The session's options now (a copy: change them with :meth:`set`)."""
        return replace(self._options)

    def set(self, **changes) -> SessionOptions:
        """Change options live (any field of :class:`viewer.frame.options.SessionOptions` but ``indexes``,
        ``index_options`` and ``capacity``, which are fixed when the session is made); returns the new options.

        ``index`` builds the index on first use (then keeps it); ``frozen=True`` captures the camera's pose
        and frustum now; ``hysteresis`` ``None`` or ``(0, False)`` turns the margin off; ``radius_scale``
        tells the culling mode every scaled radius (:meth:`viewer.frame.FramePipeline.set_radius_scale`; the
        seconds it took in :attr:`rescale_s`) and moves the far plane with it.
        Unknown or fixed names raise ``TypeError``, bad values ``ValueError`` (nothing changed then).
        """
        bad = set(changes) - _OPTION_NAMES
        if bad:
            raise TypeError(f"unknown session option(s): {', '.join(sorted(bad))}")
        fixed = [k for k in changes if k in _FIXED and changes[k] != getattr(self._options, k)]
        if fixed:
            raise TypeError(f"{', '.join(fixed)} are fixed when the session is made")
        if self._stars and "draw" in changes:
            changes["draw"] = "sprites"  # a star field has no other drawing
        new = replace(self._options, **changes)  # validates
        p = self._pipeline
        if "index" in changes:
            p.use_index(new.index).warm_up()  # compiled now (once per process), not in the next frame's query
            new.indexes = list(p.index_names)
        if "colour" in changes:
            p.set_colour_mode(new.colour)
        if "draw" in changes:
            self.renderer.mode = new.draw
            p.set_draw_mode(new.draw)
        if "fade" in changes:
            p.fade = float(new.fade)
        if "radius_scale" in changes and new.radius_scale != self._options.radius_scale:
            # nothing beyond the largest scaled view distance can be seen: the far plane (and fog) follow it
            self.camera.far *= new.radius_scale / self._options.radius_scale
            self.rescale_s = p.set_radius_scale(new.radius_scale)
        if "fog" in changes or "radius_scale" in changes:
            self.renderer.fog_density = float(new.fog) / max(self.camera.far, 1e-9)
        if "frozen" in changes:
            p.set_frozen(bool(new.frozen), self.camera)
        if "hysteresis" in changes:
            p.set_hysteresis(*(new.hysteresis or (0.0, False)))
        if self._views is not None:
            self._views.sync()
        self._options = new
        return self.options

    def use_index(self, name: str) -> None:
        """Switch to the index ``name`` (``set(index=name)``)."""
        self.set(index=name)

    def cycle_index(self, step: int = 1) -> str:
        """Switch to the next (``step`` 1) or previous (-1) index of ``options.indexes``; returns its name."""
        names = self._options.indexes or [self._options.index]
        i = names.index(self._options.index) if self._options.index in names else 0
        self.set(index=names[(i + step) % len(names)])
        return self._options.index

    def set_frozen(self, frozen: bool) -> None:
        self.set(frozen=frozen)

    def toggle_frozen(self) -> bool:
        return self.set(frozen=not self._options.frozen).frozen

    def toggle_colour(self) -> str:
        return self.set(colour="level" if self._options.colour == "category" else "category").colour

    def toggle_band_colours(self) -> str:
        """Colour each drawn object by its LOD band (:data:`viewer.frame.ranges.BAND_PALETTE`), or back to the
        scene's colours."""
        return self.set(colour="category" if self._options.colour == "band" else "band").colour

    def toggle_draw_mode(self) -> str:
        return self.set(draw="mesh" if self._options.draw == "sprites" else "sprites").draw

    def toggle_boxes(self) -> bool:
        return self.set(boxes=not self._options.boxes).boxes

    def toggle_hud(self) -> bool:
        return self.set(hud=not self._options.hud).hud

    def toggle_hysteresis(self, margin: tuple[float, bool]) -> str:
        """Between no margin and ``margin``; returns the margin as text (``"off"``, ``"5"``, ``"10%"``)."""
        on = self._options.hysteresis is not None and self._options.hysteresis[0] > 0
        self.set(hysteresis=None if on else margin)
        return self.hysteresis

    def resize(self, fbo: moderngl.Framebuffer) -> None:
        """Render into ``fbo`` from now on (after a window resize)."""
        self.fbo = fbo
        w, h = fbo.viewport[2], fbo.viewport[3]
        if w > 0 and h > 0:
            self.camera.aspect = w / h
            if self._views is not None:
                self.set_views(len(self._views))  # each view's camera fitted to its tile

    # ----------------------------------------------------------------------------- what callers read
    @property
    def world(self):
        """The frame's pipeline (read only for callers: its ``centres``, ``radii`` (scaled) and ``index``, the
        culling mode's index or None), e.g. for a minimap of the world."""
        return self._pipeline

    @property
    def index_name(self) -> str:
        return self._options.index

    @property
    def hysteresis(self) -> str:
        """The events' margin as text (``"off"``, ``"5"``, ``"10%"``)."""
        return self._pipeline.hysteresis

    @property
    def motion_state(self):
        """The world now, a :class:`viewer.frame.MotionState` (clock, step, movers), or None for a static scene."""
        return self._pipeline.motion

    @property
    def moving(self) -> int:
        """Objects that move in this scene (0: a static scene)."""
        mo = self._pipeline.motion
        return 0 if mo is None else mo.m

    @property
    def in_view(self) -> int:
        """Objects inside their view distance (with the hysteresis margin) after the last frame."""
        return len(self._pipeline.events)

    def visible_ids(self) -> np.ndarray:
        """Ids (visible,) int64 the culling mode found in the last frame (for an index, in its order, a view;
        with ``gpu`` a readback from the GPU, in no order)."""
        return self._pipeline.visible_ids()

    def drawn_ids(self) -> np.ndarray:
        """Ids (drawn,) int64 drawn in the last frame, in the order drawn (the CPU mode: nearest first, a
        view; with ``gpu`` a readback from the GPU)."""
        return self._pipeline.drawn_in_order()

    def run_info(self) -> dict:
        """What a recording's metadata says about this session's current index: ``index_options``,
        ``build_s`` (seconds to build it), ``hysteresis`` (text), ``moving`` (objects), ``culling`` (the mode)."""
        p, name = self._pipeline, self._options.index
        return {"index_options": {**_spec_options(name), **self._options.index_options.get(name, {})},
                "build_s": p.build_s.get(name),
                "hysteresis": p.hysteresis, "moving": self.moving, "culling": p.mode.kind}

    # ----------------------------------------------------------------------------- warm-up and restart
    def warm_up(self, pose=None, frames: int = 2) -> None:
        """Make the next frame as fast as any later one, then :meth:`restart`.

        Compiles every kernel a recorded frame runs (the pipeline's and the index's; in a moving world the
        movers and ``move_many`` too, without moving anything: :meth:`viewer.frame.FramePipeline.warm_up`),
        then renders ``frames`` unrecorded frames at ``pose`` (None: where the camera is) with ``dt`` 0, so
        shaders, buffers and the draw path are warm and a moving world stays still. Last, the setup's objects
        are frozen out of the garbage collector's scans (:func:`viewer.timing.heap.settle`): a full collection
        walking them would land, many times a frame's cost, in whichever frame it fell.
        """
        self._pipeline.warm_up()
        for _ in range(int(frames)):
            self.frame(0.0, pose=pose)
        self.restart()
        settle()

    def restart(self) -> None:
        """Frame counter and clock to 0, the visibility events afresh (everything visible next frame is
        'entered'), no previous frame for the HUD. The camera and the moving objects stay where they are."""
        if self._views is not None:
            self._views.restart()
        else:
            self._pipeline.restart()
        self.last = None

    # ----------------------------------------------------------------------------- the frame
    def frame(self, dt: float, *, pose=None, input_state: InputState | None = None,
              t: float | None = None) -> FrameStats:
        """Run one frame and return its row.

        dt : seconds (moves the camera under ``input_state`` and the moving objects; 0: nothing moves)
        pose : (x, y, z, yaw, pitch) to put the camera at first (replays), else ``input_state`` moves it
        t : the time to record (a path's sample time); default the session's clock (sum of dt since restart)

        ``draw_ms`` spans clear, the instanced draw and ``ctx.finish()``, the wall clock; ``frame_ms`` spans
        everything including node boxes and the HUD. ``gpu_ms`` is the device's own time of the draw and of a GL
        culling mode's dispatches (:class:`viewer.render.GpuTimer`, GL timer queries; on llvmpipe its clock, CPU
        work), read after the row is made.
        """
        p = self._pipeline
        p.update(self.camera, dt, pose=pose, input_state=input_state)  # camera, then movers (in the culling mode)
        cam = p.select(self.camera)  # query, events, cull, gather: on the CPU, or one dispatch on the GPU
        t1 = perf_counter()
        p.upload(self.draw)
        p.stage_ms["upload"] += (perf_counter() - t1) * 1e3
        t2 = perf_counter()
        fbo = self.fbo
        fbo.use()
        with self.gpu_timer.span():
            fbo.clear(*self.fog_colour, 1.0, depth=1.0)
            draw_calls = self.draw.draw(cam, fbo.viewport[3], p.n_drawn)
        self.ctx.finish()
        t3 = perf_counter()
        p.stage_ms["draw"] = (t3 - t2) * 1e3
        overlay = False
        if self._options.boxes:
            nb = p.node_boxes()  # once per frame; the HUD reads whether there were any
            self._has_boxes = nb is not None
            if nb is not None:
                boxes, visited = nb
                self.renderer.upload_boxes(np.asarray(boxes), np.asarray(visited), self.camera.position)
                self.renderer.draw_boxes(cam.rotation, cam.projection)
                overlay = True
        self.hud_shown = []
        if self._options.hud:
            # this frame's row as it stands (counts, pose, stage times: those of the image just drawn);
            # only frame_ms (so fps), which the HUD itself is part of, is the previous frame's
            shown = p.row(t=t, draw_calls=draw_calls)
            if self.last is not None:
                shown = replace(shown, frame_ms=self.last.frame_ms)
            lines = self.hud_lines(shown)
            # wrapped to the framebuffer's width; below HUD_WRAP_MIN_WIDTH the wrapped text would bury the
            # picture, so a tiny window's lines are cut at its edge instead
            self.hud_shown = self.text.fit(lines, fbo.viewport[2]) if fbo.viewport[2] >= HUD_WRAP_MIN_WIDTH else lines
            self.text.draw(self.hud_shown, (fbo.viewport[2], fbo.viewport[3]))
            overlay = True
        if overlay:
            self.ctx.finish()
        st = p.finish(t=t, draw_calls=draw_calls)
        st.gpu_ms = self.gpu_timer.elapsed_ms(self.gpu_timer.take())  # after the row: frame_ms does not wait for it
        self.last = st
        return st

    # ----------------------------------------------------------------------------- many views
    @property
    def views(self) -> int:
        """How many views share the framebuffer (1: this session's camera alone)."""
        return 1 if self._views is None else len(self._views)

    @property
    def view_cameras(self) -> list[FlyCamera]:
        """The views' cameras, the first being :attr:`camera` (the one flown)."""
        return [self.camera] if self._views is None else list(self._views.cameras)

    def set_views(self, k: int) -> None:
        """Split the framebuffer among ``k`` views (1..:data:`viewer.frame.views.MAX_VIEWS`; 1: the session's
        camera alone), culled together each frame (:class:`viewer.frame.ViewSet`). A view added starts as a
        copy of the first camera; a frame of ``k > 1`` views is :meth:`frame_views`."""
        k = int(k)
        if not 1 <= k <= MAX_VIEWS:
            raise ValueError(f"views must be 1..{MAX_VIEWS}, got {k}")
        if k == 1:
            self._views = None
            self.camera.aspect = self.fbo.viewport[2] / self.fbo.viewport[3]
            return
        cams = self.view_cameras[:k]
        cams += [copy.deepcopy(self.camera) for _ in range(k - len(cams))]
        tiles = view_tiles(k, self.fbo.viewport[2], self.fbo.viewport[3])
        for cam, (_, _, w, h) in zip(cams, tiles):
            cam.aspect = w / h
        if self._views is None:
            self._views = ViewSet(self._pipeline, cams)
        else:
            self._views.set_views(cams)
        self._views.sync()

    def frame_views(self, dt: float, *, poses=None, input_state: InputState | None = None,
                    t: float | None = None) -> list[FrameStats]:
        """One frame of every view (:meth:`set_views`): their updates (``poses`` (K,) one per view, else
        ``input_state`` moves the first camera), their queries together (CPU culling: one ``query_many``;
        the GPU: a dispatch per view), then each view's cull, gather, upload and draw into its tile of the
        framebuffer (view 0 top left, then left to right, top to bottom), with a line of HUD each. Returns
        the K rows (``view`` 0..K-1). With one view, :meth:`frame`."""
        vs = self._views
        if vs is None:
            if poses is not None:
                poses = poses[0]
            return [self.frame(dt, pose=poses, input_state=input_state, t=t)]
        vs.update(dt, poses=poses, input_state=input_state)
        shared = not vs.main.mode.draws_records  # the GPU's records live in one buffer: select, draw, next view
        matrices = vs.select() if shared else [None] * len(vs)
        fbo = self.fbo
        full = fbo.viewport
        fbo.use()
        with self.gpu_timer.span():  # the clear: view 0's, as are the dispatches of a select of every view
            fbo.clear(*self.fog_colour, 1.0, depth=1.0)
        calls, spans = [], []
        tiles = view_tiles(len(vs), full[2], full[3])
        for j, (v, cam) in enumerate(zip(vs.frames, vs.cameras)):
            if not shared:
                matrices[j] = v.select(cam)
            t1 = perf_counter()
            v.upload(self.draw)
            v.stage_ms["upload"] += (perf_counter() - t1) * 1e3
            t2 = perf_counter()
            fbo.viewport = tiles[j]
            with self.gpu_timer.span():
                calls.append(self.draw.draw(matrices[j], tiles[j][3], v.n_drawn))
            spans.append(self.gpu_timer.take())  # this view's dispatch (gpu) and draw
            self.ctx.finish()
            v.stage_ms["draw"] = (perf_counter() - t2) * 1e3
            if self._options.hud or self.view_labels:
                self.text.draw([f"view {j}: {v.index_name}  visible {v.n_visible}  drawn {v.n_drawn}"],
                               (tiles[j][2], tiles[j][3]))
        fbo.viewport = full
        self.ctx.finish()
        rows = vs.finish(t=t, draw_calls=calls)
        for st, taken in zip(rows, spans):
            st.gpu_ms = self.gpu_timer.elapsed_ms(taken)
        self.last = rows[0]
        self.last_views = rows
        return rows

    def hud_lines(self, st: FrameStats) -> list[str]:
        """The HUD text for the stats ``st``: in a frame, that frame's counts, pose and stage times, with
        the previous frame's ``frame_ms`` (this one's ends after the HUD). ``help_line`` may hold several
        lines (``\\n``); :meth:`frame` wraps what is wider than the framebuffer (:meth:`TextLayer.fit`)."""
        fps = 1000.0 / st.frame_ms if st.frame_ms > 0 else 0.0
        o = self._options
        flags = []
        if o.frozen:
            flags.append("CULLING FROZEN")
        if o.boxes and not self._has_boxes:
            flags.append("no node boxes for this index")
        colour = o.colour if (o.colour != "level" or self._pipeline.has_levels) else "category (no levels)"
        rg = self._pipeline.ranges
        lines = [
            f"{self.scene_name}  index: {st.culler}  {fps:6.1f} fps  frame {st.frame_ms:7.2f} ms  {'  '.join(flags)}",
            "  ".join(f"{s.name} {getattr(st, s.column):6.2f}" for s in STAGES) + " ms",
            "  ".join(f"{label} {getattr(st, name)}" for name, label in HUD_COUNTS),
            f"pos ({st.cam_x:.1f}, {st.cam_y:.1f}, {st.cam_z:.1f})  yaw {st.yaw:.0f}  pitch {st.pitch:.0f}"
            f"  speed {self.camera.speed:.3g}/s  colour {colour}  draw {o.draw}",
        ]
        if rg.has_lod or rg.active:  # issue 24's counts, only for a scene with ranges, LOD bands or HLOD
            lines.insert(3, f"bands {st.band0} / {st.band1} / {st.band2} / {st.band3}+  band changes {st.band_changes}"
                            f"  proxies {st.proxies}")
        if self.help_line:
            lines.extend(self.help_line.splitlines())
        return lines

    # ----------------------------------------------------------------------------- images
    def image(self) -> np.ndarray:
        """The last rendered image, (H, W, 3) uint8, row 0 at the top."""
        return read_rgb(self.fbo)

    def screenshot(self, path) -> str:
        """Save the last rendered image as a PNG at ``path`` (atomically); returns the path."""
        return save_png(path, self.image())


def view_tiles(k: int, width: int, height: int) -> list[tuple[int, int, int, int]]:
    """The GL viewports ``(x, y, w, h)`` of ``k`` views splitting a ``width`` x ``height`` framebuffer: side
    by side for 2, else a grid of ceil(sqrt(k)) columns; view 0 at the top left, row by row (GL's y up)."""
    cols = 2 if k == 2 else max(1, math.ceil(math.sqrt(k)))
    rows = math.ceil(k / cols)
    w, h = width // cols, height // rows
    return [((j % cols) * w, height - (j // cols + 1) * h, w, h) for j in range(k)]


def _spec_options(name: str) -> dict:
    """The options an index spec's text gives (``octree:max_depth=8`` -> ``{"max_depth": 8}``); none for a
    culling mode's name."""
    from ..index import parse_index_spec

    try:
        return dict(parse_index_spec(name).options)
    except UserError:
        return {}
