"""The window's inspector panel: a Dear ImGui window over the scene (imgui-bundle: ImGui and ImPlot).

What it shows and what it lets you change, top to bottom:

- sliders: the **view-distance scale** (every view radius times it, exactly: the culling mode is told every
  scaled radius, :meth:`viewer.frame.FramePipeline.set_radius_scale`), the fade, the hysteresis margin, the
  camera speed;
- the **culling modes** (the session's ``I`` cycle, :func:`viewer.render.modes.culler_names`): a click
  switches;
- the **toggles** that are keys (:data:`TOGGLES`, the window's ``COMMAND_KEYS`` commands): each box runs
  the key's own command, so a key and a click do the same thing;
- the **takes**: record / stop (R), the directory the next take goes to, what is being written;
- **ImPlot graphs** of the last :data:`HISTORY` frames (log axes): each stage's time (the stages of
  :data:`viewer.frame.stages.STAGES`, in their colours), ``frame_ms`` and the panel's own time, and the
  counts of :data:`viewer.frame.stages.HUD_COUNTS`; then the frame's figures (what the text HUD showed).

**The panel's own cost stays outside ``frame_ms``.** The window draws it after
:meth:`viewer.render.ViewerSession.frame` has returned the frame's row (whose ``frame_ms`` ends inside that
call); :meth:`Panel.draw` times everything the panel does in a frame (building the widgets, ImGui's
render and the GL draw, which ends with ``ctx.finish()`` so none of its GPU work waits in the next frame's
``draw_ms``) with ``perf_counter`` into :attr:`Panel.panel_ms`, shown in the panel and plotted beside
``frame_ms``; ``viewer view`` prints its median when the window closes.

**Where the text HUD and the stage graph went.** In the window the panel replaces them (H shows or hides
the panel, G its graphs); headless images (``viewer view --headless``, ``viewer record`` screenshots) keep
the text HUD of :mod:`viewer.render.text`, which needs no ImGui context and no input.

No GL and no window toolkit here: :mod:`viewer.drivers.window` routes the input to ImGui and hands
:meth:`Panel.draw` a renderer (:mod:`viewer.render.imgui_gl`). The panel never changes the session
itself: :meth:`Panel.draw` returns the user's actions, ``(what, value)`` pairs, and the window applies
them (:data:`ACTIONS`).
"""

from __future__ import annotations

from time import perf_counter

import numpy as np
from imgui_bundle import imgui, implot

from ..reports.costmap import frame_counts, plane_grid
from ..frame.stages import HUD_COUNTS, STAGES

__all__ = ["ACTIONS", "HISTORY", "PANEL_POS", "PANEL_WIDTH", "Panel", "PanelHistory", "TOGGLES"]

#: frames the graphs show
HISTORY = 300

#: the panel's top-left corner and width on first use, pixels (then where the user drags it)
PANEL_POS = (0, 0)
PANEL_WIDTH = 400

#: columns of the culling modes' list
CULLER_COLUMNS = 5

#: the view-distance scale slider's range (logarithmic)
SCALE_RANGE = (0.1, 4.0)

#: the speed slider spans 1/100 to 100 times the start speed, inside what ImGui's float32 slider holds
SPEED_RANGE = (1e-30, 1e30)

#: (label, the window's command) of the toggle boxes and buttons, in the order shown; each label is followed
#: by the command's key (the window's ``COMMAND_KEYS``, handed to :class:`Panel`)
TOGGLES: tuple[tuple[str, str], ...] = (
    ("freeze", "freeze"),
    ("node boxes", "boxes"),
    ("levels", "colour"),
    ("meshes", "draw_mode"),
    ("hysteresis", "hysteresis"),
    ("mouse look", "mouse_look"),
    ("graphs", "graph"),
)
BUTTONS: tuple[tuple[str, str], ...] = (
    ("busy spot", "jump"),
    ("start", "start"),
    ("screenshot", "screenshot"),
)

#: what :meth:`Panel.draw` returns, ``(what, value)``: ``("index", name)`` switch the culling mode;
#: ``("command", cmd)`` run a key's command; ``("set", {option: value})`` a session option live (fade,
#: radius_scale); ``("margin", fraction)`` the hysteresis margin (relative); ``("speed", units/s)``;
#: ``("takes", directory)`` where the next take is written
ACTIONS = ("index", "command", "set", "margin", "speed", "takes")

_PLOTTED = (*(s.column for s in STAGES), "frame_ms", "panel_ms")
_PLOTTED_LABELS = (*(s.name for s in STAGES), "frame", "panel")
_COUNTS = tuple(name for name, _ in HUD_COUNTS if name != "objects")
_COUNT_LABELS = tuple(label for name, label in HUD_COUNTS if name != "objects")


class PanelHistory:
    """The last ``frames`` frames' stage times (ms) and counts, oldest first, for the graphs.

    :attr:`times` (k, len(stages) + 2) float64: each stage's ``<stage>_ms``, ``frame_ms``, ``panel_ms``;
    :attr:`counts` (k, c) float64: the HUD's counts but ``objects``; k <= ``frames``.
    """

    def __init__(self, frames: int = HISTORY):
        self.frames = int(frames)
        self._t = np.zeros((2 * self.frames, len(_PLOTTED)))
        self._c = np.zeros((2 * self.frames, len(_COUNTS)))
        self._n = 0

    def push(self, st, panel_ms: float) -> None:
        """Add a frame's row (a :class:`viewer.frame.FrameStats`) and the panel's time (ms) of the frame before
        (this frame's panel is not over while its graph is drawn)."""
        if self._n == self._t.shape[0]:  # keep the newest half: one copy every `frames` pushes
            self._t[: self.frames] = self._t[self.frames:]
            self._c[: self.frames] = self._c[self.frames:]
            self._n = self.frames
        row = self._n
        for j, name in enumerate(_PLOTTED[:-1]):
            self._t[row, j] = getattr(st, name)
        self._t[row, -1] = panel_ms
        for j, name in enumerate(_COUNTS):
            self._c[row, j] = getattr(st, name)
        self._n += 1

    @property
    def times(self) -> np.ndarray:
        return self._t[max(0, self._n - self.frames): self._n]

    @property
    def counts(self) -> np.ndarray:
        return self._c[max(0, self._n - self.frames): self._n]


def _rgba(rgb, a: float = 1.0) -> imgui.ImVec4:
    return imgui.ImVec4(float(rgb[0]), float(rgb[1]), float(rgb[2]), a)


_LINE_COLOURS = (*(_rgba(s.colour) for s in STAGES), _rgba((1.0, 1.0, 1.0)), _rgba((0.2, 0.95, 0.95)))


class Panel:
    """The inspector: one ImGui (and ImPlot) context for the window's life.

    :meth:`draw` once a frame, after the frame was rendered, with the frame's row; :attr:`panel_ms` is
    then what that call took (ms). ``ini``: no ``imgui.ini`` is written (the panel opens where
    :data:`PANEL_POS` says every time).
    """

    def __init__(self, command_keys: dict[str, str]):
        # command -> "I / Tab": the keys that run it (the window's key table), shown beside each control
        keys: dict[str, list[str]] = {}
        for key, cmd in command_keys.items():
            keys.setdefault(cmd, []).append(key.capitalize() if len(key) > 1 else key.upper())
        self.keys = {cmd: " / ".join(names) for cmd, names in keys.items()}
        self.context = imgui.create_context()
        implot.create_context()
        self.minimap = Minimap()
        io = imgui.get_io()
        io.set_ini_filename(None)
        self.history = PanelHistory()
        self.panel_ms = 0.0
        self.show_graphs = True
        self._takes_text = ""
        self._editing = False  # the take directory's field has the keyboard

    def draw(self, win, st, renderer, dt: float) -> list[tuple[str, object]]:
        """Build the panel for the frame ``st`` (its :class:`viewer.frame.FrameStats`) and draw it with
        ``renderer`` (an ImGui renderer: ``render(draw_data)``); returns the user's actions.

        win : the window (read only: ``session``, ``take``, ``options.takes``, ``takes_done``,
            ``hysteresis_margin``, ``look_toggled``, ``start_speed``); dt : seconds since the last frame
            (ImGui's clock)
        """
        t0 = perf_counter()
        self.history.push(st, self.panel_ms)
        io = imgui.get_io()
        io.delta_time = max(float(dt), 1e-4)
        imgui.new_frame()
        actions: list[tuple[str, object]] = []
        imgui.set_next_window_pos(imgui.ImVec2(*PANEL_POS), imgui.Cond_.first_use_ever)
        # as tall as its content, at most the window's height (then it scrolls)
        imgui.set_next_window_size_constraints(imgui.ImVec2(PANEL_WIDTH, 0), imgui.ImVec2(PANEL_WIDTH, io.display_size.y))
        imgui.set_next_window_bg_alpha(0.8)
        if imgui.begin(f"inspector ({self.keys['hud']} hides)###inspector", None, imgui.WindowFlags_.always_auto_resize)[0]:
            self._sliders(win, actions)
            self._cullers(win, st, actions)
            self._toggles(win, actions)
            self._takes(win, actions)
            if self.show_graphs:
                self._graphs()
            self._figures(win, st)
            if imgui.collapsing_header("minimap: visible objects on the camera's plane",
                                       imgui.TreeNodeFlags_.default_open.value):
                self.minimap.draw(win.session, st)
        imgui.end()
        imgui.render()
        renderer.render(imgui.get_draw_data())
        self.panel_ms = (perf_counter() - t0) * 1e3
        return actions

    # ----------------------------------------------------------------------------- sections
    def _sliders(self, win, actions: list) -> None:
        s = win.session
        o = s.options
        imgui.push_item_width(150)
        log = imgui.SliderFlags_.logarithmic.value
        changed, v = imgui.slider_float("view distance x", float(o.radius_scale), *SCALE_RANGE, "%.3f", log)
        if changed and v > 0:
            actions.append(("set", {"radius_scale": float(v)}))
        changed, v = imgui.slider_float("fade", float(o.fade), 0.0, 1.0, "%.2f")
        if changed:
            actions.append(("set", {"fade": min(max(float(v), 0.0), 1.0)}))
        margin, relative = win.hysteresis_margin
        if relative:
            changed, v = imgui.slider_float("hysteresis %", 100.0 * margin, 0.0, 100.0, "%.1f")
            if changed:
                actions.append(("margin", max(float(v), 0.0) / 100.0))
        else:
            imgui.text(f"hysteresis margin {margin:g} world units (--hysteresis)")
        speed = float(s.camera.speed)
        lo, hi = max(win.start_speed / 100.0, SPEED_RANGE[0]), min(win.start_speed * 100.0, SPEED_RANGE[1])
        if lo <= speed <= hi:
            changed, v = imgui.slider_float("speed /s", speed, lo, hi, "%.3g", log)
            if changed and v > 0:
                actions.append(("speed", float(v)))
        else:  # beyond what a float32 slider holds (--speed 1e300): the wheel and Shift still change it
            imgui.text(f"speed {speed:.3g}/s (the wheel changes it)")
        imgui.pop_item_width()

    def _cullers(self, win, st, actions: list) -> None:
        s = win.session
        imgui.separator_text(f"culling ({self.keys['next_index']})")
        if imgui.begin_table("cullers", CULLER_COLUMNS, imgui.TableFlags_.sizing_stretch_same.value):
            for name in s.options.indexes or [s.index_name]:
                imgui.table_next_column()
                if imgui.selectable(name, name == s.index_name)[0] and name != s.index_name:
                    actions.append(("index", name))
            imgui.end_table()
        build = s.run_info()["build_s"]
        imgui.text_disabled(f"{s.index_name}: {st.objects} objects" + (f", built in {build:.3f} s" if build else ""))

    def _toggles(self, win, actions: list) -> None:
        s = win.session
        o = s.options
        state = {"freeze": o.frozen, "boxes": o.boxes, "colour": o.colour == "level", "draw_mode": o.draw == "mesh",
                 "hysteresis": s.hysteresis != "off", "mouse_look": win.look_toggled, "graph": self.show_graphs}
        imgui.separator_text("toggles")
        for k, (label, cmd) in enumerate(TOGGLES):
            if k % 3:
                imgui.same_line(8 + (k % 3) * (PANEL_WIDTH - 16) // 3)
            if imgui.checkbox(f"{label} ({self.keys[cmd]})", state[cmd])[0]:
                actions.append(("command", cmd))
        for k, (label, cmd) in enumerate(BUTTONS):
            if k:
                imgui.same_line()
            if imgui.button(f"{label} ({self.keys[cmd].split(' / ')[0]})"):
                actions.append(("command", cmd))

    def _takes(self, win, actions: list) -> None:
        imgui.separator_text(f"takes ({self.keys['record']})")
        take = win.take
        where = str(win.options.takes.directory) if win.options.takes is not None else "."
        if take is None:
            if imgui.button("record"):
                actions.append(("command", "record"))
            imgui.same_line()
            imgui.push_item_width(200)
            if not self._editing:
                self._takes_text = where
            changed, self._takes_text = imgui.input_text("into", self._takes_text,
                                                         imgui.InputTextFlags_.enter_returns_true.value)
            self._editing = imgui.is_item_active()
            if (changed or imgui.is_item_deactivated_after_edit()) and self._takes_text.strip():
                actions.append(("takes", self._takes_text.strip()))
            imgui.pop_item_width()
            if win.takes_done:
                imgui.text_wrapped(f"last: {win.takes_done[-1]}")
        else:
            if imgui.button("stop"):
                actions.append(("command", "record"))
            imgui.same_line()
            imgui.text_colored(imgui.ImVec4(1.0, 0.35, 0.3, 1.0),
                               f"REC {take.name}  {take.elapsed:.1f} s  {take.frames} frames")
            imgui.text_wrapped(f"-> {take.directory}")

    def _figures(self, win, st) -> None:
        s = win.session
        imgui.separator_text("this frame")
        fps = 1000.0 / st.frame_ms if st.frame_ms > 0 else 0.0
        imgui.text(f"{fps:.1f} fps  frame {st.frame_ms:.2f} ms  panel {self.panel_ms:.2f} ms")
        for k in range(0, len(STAGES), 3):
            imgui.text("  ".join(f"{stage.name} {getattr(st, stage.column):.2f}" for stage in STAGES[k:k + 3]) + " ms")
        for k in range(0, len(HUD_COUNTS), 3):
            imgui.text("  ".join(f"{label} {getattr(st, name)}" for name, label in HUD_COUNTS[k:k + 3]))
        moving = f"moving {s.moving}  moved {st.moved}  " if s.moving else ""
        imgui.text(f"{moving}entered {st.entered}  left {st.left}  in {s.in_view}  hysteresis {s.hysteresis}")
        imgui.text(f"pos ({st.cam_x:.1f}, {st.cam_y:.1f}, {st.cam_z:.1f})  yaw {st.yaw:.0f}  pitch {st.pitch:.0f}")
        if s.notice:
            imgui.text_wrapped(s.notice)

    def _graphs(self) -> None:
        h = self.history
        if h.times.shape[0] < 2:
            return
        self._plot("ms a frame (log)", h.times, _PLOTTED_LABELS, _LINE_COLOURS, 140)
        self._plot("objects (log)", h.counts, _COUNT_LABELS, None, 100)

    @staticmethod
    def _plot(title: str, values: np.ndarray, labels, colours, height: int) -> None:
        """One ImPlot graph of ``values`` (frames, len(labels)) on a log axis, its legend beside it."""
        if not implot.begin_plot(title, imgui.ImVec2(PANEL_WIDTH - 16, height)):
            return
        fit = implot.AxisFlags_.auto_fit.value
        implot.setup_axes("", "", implot.AxisFlags_.no_tick_labels.value | fit, fit)
        implot.setup_axis_scale(implot.ImAxis_.y1.value, implot.Scale_.log10.value)
        implot.setup_legend(implot.Location_.east.value, implot.LegendFlags_.outside.value)
        x = np.arange(values.shape[0], dtype=np.float64)
        for j, label in enumerate(labels):
            # a log axis has no 0: an idle stage sits at 1 us (or 1 object) rather than vanishing
            y = np.maximum(values[:, j], 1e-3 if colours is not None else 1.0)
            spec = implot.Spec(line_color=colours[j]) if colours is not None else implot.Spec()
            implot.plot_line(label, x, y, spec)
        implot.end_plot()

    def shutdown(self) -> None:
        """Free the ImPlot and ImGui contexts."""
        implot.destroy_context()
        imgui.destroy_context(self.context)


#: samples a side of the minimap, and its side in pixels
MINIMAP_RES = 48
MINIMAP_SIDE = 240


class Minimap:
    """The cost map of ``viewer map`` in the panel: the exact number of objects in view distance at
    ``MINIMAP_RES`` x ``MINIMAP_RES`` camera positions on the horizontal plane through the camera (x across, z
    down, over the objects' box), counted by the session's own index at the current view-distance scale
    (:func:`viewer.reports.costmap.frame_counts`; in a scene with visibility ranges, the objects in range, as the
    frame's ``visible``), on a log colour ramp; the camera's position is a dot and its
    heading a line. Sampled again only when the index, the scale or the plane (the camera's height, in steps
    of a sixteenth of the box) changes: a few thousand queries, then nothing per frame but the drawing."""

    def __init__(self) -> None:
        self.key = None
        self.counts: np.ndarray | None = None
        self.box: tuple[np.ndarray, np.ndarray] | None = None
        self.note = ""

    def _sample(self, session, cam_y: float) -> None:
        world = session.world
        index = world.index
        c = world.centres
        lo, hi = c.min(axis=0), c.max(axis=0)
        step = max(float(hi[1] - lo[1]) / 16.0, 1e-9)
        y = float(np.clip(round(cam_y / step) * step, lo[1], hi[1]))
        key = (session.index_name, session.options.radius_scale, session.options.fade, y)
        if key == self.key:
            return
        self.key, self.box = key, (lo, hi)
        if index is None:  # the GPU mode: no index on the CPU to ask
            self.counts, self.note = None, f"{session.index_name}: no CPU index to sample (pick one above)"
            return
        t0 = perf_counter()
        us, vs, pts = plane_grid(lo, hi, 1, y, MINIMAP_RES)
        # the frame's own index, radius scale and range filter (begin distances, HLOD): what its visible counts
        self.counts = frame_counts(world, pts).reshape(MINIMAP_RES, MINIMAP_RES)
        self.note = (f"y = {y:.0f}: most visible {int(self.counts.max()):,}, sampled by {session.index_name} in "
                     f"{(perf_counter() - t0) * 1e3:.0f} ms")

    def draw(self, session, st) -> None:
        self._sample(session, st.cam_y)
        imgui.text(self.note)
        if self.counts is None:
            return
        lo, hi = self.box
        dl = imgui.get_window_draw_list()
        p0 = imgui.get_cursor_screen_pos()
        cell = MINIMAP_SIDE / MINIMAP_RES
        top = max(float(np.log1p(self.counts.max())), 1e-9)
        shade = np.log1p(self.counts) / top
        for j in range(MINIMAP_RES):  # row j: the j-th z from the box's low side, drawn top down
            for i in range(MINIMAP_RES):
                t = float(shade[j, i])
                col = imgui.color_convert_float4_to_u32(imgui.ImVec4(0.15 + 0.85 * t, 0.2 + 0.6 * t * t, 0.45 - 0.35 * t, 1.0))
                a = imgui.ImVec2(p0.x + i * cell, p0.y + j * cell)
                dl.add_rect_filled(a, imgui.ImVec2(a.x + cell, a.y + cell), col)
        span = np.maximum(hi - lo, 1e-9)
        cx = p0.x + float(np.clip((st.cam_x - lo[0]) / span[0], 0, 1)) * MINIMAP_SIDE
        cz = p0.y + float(np.clip((st.cam_z - lo[2]) / span[2], 0, 1)) * MINIMAP_SIDE
        yaw = np.radians(st.yaw)  # heading in x-z (viewer.camera.forward_vector): (sin yaw, -cos yaw)
        white = imgui.color_convert_float4_to_u32(imgui.ImVec4(1, 1, 1, 1))
        dl.add_line(imgui.ImVec2(cx, cz), imgui.ImVec2(cx + 18 * float(np.sin(yaw)), cz - 18 * float(np.cos(yaw))), white, 2.0)
        dl.add_circle_filled(imgui.ImVec2(cx, cz), 4.0, white)
        imgui.dummy(imgui.ImVec2(MINIMAP_SIDE, MINIMAP_SIDE))
