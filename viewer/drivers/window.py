"""The window: a thin moderngl-window adapter around :class:`viewer.render.ViewerSession`.

It only translates the toolkit's events into the camera's toolkit-neutral input (key names through
:data:`KEY_NAMES`, actions through :class:`viewer.camera.KeyBindings`, commands through
:data:`COMMAND_KEYS`) and calls the session once per frame; then it hands the frame's stats to the take
being recorded (R, :mod:`viewer.recording.takes`) and to the inspector panel (:mod:`viewer.drivers.panel`,
Dear ImGui through moderngl-window's ``integrations.imgui_bundle``; H shows or hides it), and applies what
the user did in the panel. Every mouse and keyboard event goes to ImGui first, and to the camera and the
key commands only when ImGui does not want it (``io.want_capture_mouse`` / ``want_capture_keyboard``: the
pointer over the panel, a slider being dragged, the take directory being typed); a key's release always
reaches the camera, so no key sticks. In the window the panel replaces the text HUD and the stage graph;
headless images keep the text HUD (:mod:`viewer.drivers.panel` says why).

This is the only module that imports moderngl_window; it opens an X window (GLX), so never import it in a
process that created an EGL context.
"""

from __future__ import annotations

import statistics
import sys
import time
from dataclasses import dataclass, field, replace

import numpy as np
import pyglet

# pyglet otherwise opens a hidden 1x1 "shadow" window to own a GL context, beside the real one (the first
# window `xdotool search` finds); moderngl-window makes the window's own context current, so it is not needed.
# Set before anything imports pyglet.gl / pyglet.window.
pyglet.options["shadow_window"] = False

import moderngl_window as mglw  # noqa: E402
from moderngl_window.integrations.imgui_bundle import ModernglWindowRenderer  # noqa: E402

from ..camera import DEFAULT_BINDINGS, InputState, KeyBindings, busy_spots
from ..errors import UserError
from ..system.display import WindowUnavailable, display_problem
from ..timing.heap import FrameCollector
from ..frame.pipeline import FrameStats
from ..frame.options import SessionOptions
from ..frame.views import VIEW_CYCLE
from ..recording.meta import build_meta, gl_info
from ..recording.takes import Take, TakeDir
from ..render import ViewerSession
from ..render.context import MAX_FRAMEBUFFER_PIXELS, MAX_FRAMEBUFFER_SIDE, capped_size, gl_max_side, save_png_new
from ..render.imgui_gl import ImGuiTextureProtocol
from .panel import Panel

__all__ = ["COMMAND_KEYS", "HELP_LINE", "ViewerWindow", "WindowLost", "WindowOptions", "WindowUnavailable",
           "run_window", "summary"]


class WindowLost(RuntimeError):
    """The X window was destroyed under the viewer (by another X client: a crashed compositor, a window
    manager, ``xdotool windowclose``); the take being recorded was closed with every row."""

#: key name -> viewer command (the camera's movement keys are in :data:`viewer.camera.DEFAULT_BINDINGS`)
COMMAND_KEYS: dict[str, str] = {
    "i": "next_index",
    "tab": "next_index",
    "f": "freeze",
    "b": "boxes",
    "c": "colour",
    "l": "bands",
    "v": "draw_mode",
    "h": "hud",
    "m": "mouse_look",
    "p": "screenshot",
    "y": "hysteresis",
    "r": "record",
    "g": "graph",
    "j": "jump",
    "n": "views",
    "o": "start",
    "home": "start",
    "f12": "screenshot",
    "escape": "quit",
}

HELP_LINE = ("WASD move  Q/E or Ctrl/Space down/up  Shift fast  drag or M: look  wheel: speed  "
             "J next busy spot  O/Home back to start\n"
             "I index  F freeze  B boxes  C colour  L LOD bands  V sprites/mesh  H panel  G graphs  Y hysteresis  R record  P shot  "
             "N split screen  Esc quit")

#: busy spots J cycles through (:func:`viewer.camera.busy_spots`)
JUMP_SPOTS = 8

#: seconds between two checks that the X window still exists
ALIVE_CHECK_S = 0.25

#: seconds a notice (a screenshot that could not be written, a capped window) stays on the HUD
NOTICE_S = 6.0

#: the margin Y switches to when ``viewer view`` got no --hysteresis: 10% of each view radius
DEFAULT_HYSTERESIS: tuple[float, bool] = (0.10, True)

# toolkit-neutral key name -> the attribute of moderngl-window's key table
_KEY_ATTRS = {
    **{c: c.upper() for c in "abcdefghijklmnopqrstuvwxyz"},
    "space": "SPACE",
    "left_shift": "LEFT_SHIFT",
    "right_shift": "RIGHT_SHIFT",
    "left_ctrl": "LEFT_CTRL",
    "right_ctrl": "RIGHT_CTRL",
    "tab": "TAB",
    "escape": "ESCAPE",
    "home": "HOME",
    "f12": "F12",
}


@dataclass
class WindowOptions:
    """What ``viewer view`` passes to the window.

    scene : the :class:`viewer.scenes.Scene`; session : the :class:`viewer.frame.options.SessionOptions` the window's
    session starts with (index, draw, colour, fade, fog, hud, boxes); screenshot : the path the screenshot key writes
    (None: ``screenshot-<time>.png`` in the working directory); fixed_dt : seconds per frame instead of
    the wall clock (replayable flights); max_frames : close after this many frames (0: never);
    pose : the starting (x, y, z, yaw, pitch) (default: fitted to the scene); speed : world units per second
    hysteresis : ``(margin, relative)`` of the visibility events to start with (None: off); the Y key
        toggles between off and this margin (or :data:`DEFAULT_HYSTERESIS`)
    takes : where R records takes (None: the working directory, made on the first R);
        record : start a take at the first frame
    vsync : wait for the display's refresh at each swap (recorded in each take's metadata)
    max_fps : draw at most this many frames a second, waiting between frames, outside every timed stage (None: as
        fast as the display allows; recorded in each take's metadata)
    views : split screen into this many views (1, 2 or 4; N cycles them): the first flown by the user, view j
        on the scene's generated fly-through j/K of its duration ahead; a take then has one row per view a frame
    """

    scene: object
    session: SessionOptions = field(default_factory=lambda: SessionOptions(index="octree"))
    screenshot: str | None = None
    fixed_dt: float | None = None
    max_frames: int = 0
    pose: tuple[float, float, float, float, float] | None = None
    speed: float | None = None
    hysteresis: tuple[float, bool] | None = None
    takes: TakeDir | None = None
    record: bool = False
    vsync: bool = False
    max_fps: float | None = None
    bindings: KeyBindings = field(default_factory=lambda: DEFAULT_BINDINGS)
    views: int = 1


class EventsSession(ViewerSession):
    """The window's session: its HUD also shows the visibility events (and the moving objects), and
    first of all the take being recorded (:attr:`status`)."""

    status = ""
    notice = ""  # a passing message (a screenshot that could not be written), under the status

    def hud_lines(self, st: FrameStats) -> list[str]:
        lines = super().hud_lines(st)
        moving = f"moving {self.moving}  moved {st.moved}  " if self.moving else ""
        lines.insert(3, f"{moving}entered {st.entered:5d}  left {st.left:5d}  in {self.in_view}"
                        f"  hysteresis {self.hysteresis} (Y)")
        if self.notice:
            lines.insert(0, self.notice)
        if self.status:
            lines.insert(0, self.status)
        return lines


class PanelRenderer(ImGuiTextureProtocol, ModernglWindowRenderer):
    """moderngl-window's ImGui renderer and keyboard handling, with Dear ImGui 1.92's texture protocol
    (:mod:`viewer.render.imgui_gl`: the integration predates it) and the mouse through ImGui's input queue:
    the integration writes ``io.mouse_down``, which ImGui reads once a frame, so a click whose press and
    release fall between two frames (a quick click on a slow frame, xdotool's ``click``) was lost."""

    def _button(self, button) -> int | None:
        m = self.wnd.mouse
        return {m.left: 0, m.right: 1, m.middle: 2}.get(button)

    def mouse_position_event(self, x, y, dx, dy) -> None:
        self.io.add_mouse_pos_event(*self._mouse_pos_viewport(x, y))

    def mouse_drag_event(self, x, y, dx, dy) -> None:
        self.io.add_mouse_pos_event(*self._mouse_pos_viewport(x, y))

    def mouse_press_event(self, x, y, button) -> None:
        self.mouse_position_event(x, y, 0, 0)
        if (b := self._button(button)) is not None:
            self.io.add_mouse_button_event(b, True)

    def mouse_release_event(self, x, y, button) -> None:
        self.mouse_position_event(x, y, 0, 0)
        if (b := self._button(button)) is not None:
            self.io.add_mouse_button_event(b, False)

    def mouse_scroll_event(self, x_offset, y_offset) -> None:
        self.io.add_mouse_wheel_event(x_offset, y_offset)


class ViewerWindow(mglw.WindowConfig):
    """The viewer's window (moderngl-window ``WindowConfig``); set :attr:`options` before running."""

    gl_version = (3, 3)
    title = "viewer"
    window_size = (1280, 720)
    aspect_ratio = None
    resizable = True
    vsync = False
    clear_color = None  # the session clears with its fog colour
    options: WindowOptions | None = None
    #: the collector kept out of the frames (:func:`run_window` sets it): a take's rows never hold a collection
    frames_gc: FrameCollector | None = None

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        o = self.options
        if o is None:
            raise RuntimeError("ViewerWindow.options must be set before the window is created")
        self.wnd.exit_key = None  # Escape is our "quit", so the summary is printed
        self._set_wm_pid()
        on = o.hysteresis is not None and o.hysteresis[0] > 0
        self.hysteresis_margin = o.hysteresis if on else DEFAULT_HYSTERESIS
        # the panel is the window's HUD (--no-hud: it starts hidden); the session draws no text HUD here
        self.panel_shown = bool(o.session.hud)
        self.session = EventsSession(self.ctx, self.wnd.fbo, o.scene, replace(o.session, hud=False),
                                     hysteresis=self.hysteresis_margin if on else None)
        self.session.help_line = HELP_LINE
        if o.pose is not None:
            self.session.camera.set_pose(o.pose)
        if o.speed:
            self.session.camera.speed = o.speed
        self.start_pose = self.session.camera.pose
        self.start_speed = self.session.camera.speed
        # J's stops: the scene's busiest spots, densest first (the default start is the first)
        self.spots = [sp.pose for sp in busy_spots(o.scene.centres, o.scene.radii, JUMP_SPOTS)]
        self.spot = -1 if o.pose is not None else 0  # the spot the camera was last put at
        # compile every kernel a frame runs and render two unrecorded frames, so no frame of a take (even
        # one started at launch) pays for compilation
        self.session.warm_up(frames=2)
        keys = self.wnd.keys
        self.key_names = {getattr(keys, attr): name for name, attr in _KEY_ATTRS.items() if hasattr(keys, attr)}
        self.held: set[str] = set()
        self.tapped: set[str] = set()  # pressed since the last frame: a tap moves for at least one frame
        self.mouse_dx = 0.0
        self.mouse_dy = 0.0
        self.scroll = 0.0
        self.look_toggled = False
        self.frames = 0
        self.screenshots: list[str] = []
        self.messages: list[str] = []
        self.panel = Panel(COMMAND_KEYS)
        self.panel_renderer = PanelRenderer(self.wnd)
        self.panel_times: list[float] = []  # ms, each frame the panel was drawn (outside frame_ms)
        self.base_title = self.title
        self.take: Take | None = None
        self.takes_done: list[str] = []
        self._title_at = 0.0
        self._shots: list[str | None] = []  # screenshots asked for (None: an automatic name), saved after a frame
        self._next_frame_at = 0.0  # time.monotonic() of this frame's slot under --max-fps
        self._notice_until = 0.0
        self.lost: str | None = None  # why the window is gone, when it was destroyed under us
        self._alive_at = time.monotonic()
        self.max_side = gl_max_side(self.ctx)
        self._cap_window(*self.wnd.buffer_size)
        self._say(startup_line(self.session, o.scene))
        self.view_path = None  # the generated path the other views fly (made when first needed)
        self.set_views(o.views)
        if o.record:
            self.start_take()  # before any key is handled, so the first R always stops it

    # ----------------------------------------------------------------------------- frame
    def on_render(self, time_: float, frametime: float) -> None:
        o = self.options
        now = time.monotonic()
        if now - self._alive_at >= ALIVE_CHECK_S:
            self._alive_at = now
            if not self._window_exists():
                self.window_lost("the window was destroyed by another X client (a window manager, a crashed "
                                 "compositor, xdotool windowclose)")
                return
        if self._notice_until and now >= self._notice_until:
            self.session.notice, self._notice_until = "", 0.0
        dt = o.fixed_dt if o.fixed_dt is not None else min(max(frametime, 0.0), 0.25)
        state = InputState(actions=o.bindings.actions(self.held | self.tapped), mouse_dx=self.mouse_dx, mouse_dy=self.mouse_dy,
                           scroll=self.scroll)
        self.mouse_dx = self.mouse_dy = self.scroll = 0.0
        self.tapped.clear()
        s = self.session
        s.fbo = self.wnd.fbo
        if s.views > 1:
            rows = s.frame_views(dt, poses=self._view_poses(s.views), input_state=state)
            st = rows[0]
        else:
            st = s.frame(dt, input_state=state)
            rows = [st]
        if self.take is not None:
            for row in rows:
                self.take.append(row)
        if self.panel_shown:  # after the frame's row: its frame_ms has ended (the panel times itself)
            actions = self.panel.draw(self, st, self.panel_renderer, frametime)
            self.panel_times.append(self.panel.panel_ms)
            for what, value in actions:
                self.apply(what, value)
        while self._shots:
            self._save_screenshot(self._shots.pop(0))
        self._show_status()
        self.frames += 1
        if self.frames_gc is not None:
            self.frames_gc.between_frames()  # after the frame's rows and the panel: in no timed stage
        if o.max_frames and self.frames >= o.max_frames:
            self.wnd.close()
        if o.max_fps:
            self._pace(1.0 / o.max_fps)

    def _pace(self, period: float) -> None:
        """Wait for this frame's slot of ``period`` seconds (``--max-fps``), after its rows: no timed stage holds
        the wait. A frame that overran its slot starts the next at once, and the slots start again from it (no
        burst of frames to catch up)."""
        now = time.monotonic()
        due = self._next_frame_at + period
        if due <= now:
            self._next_frame_at = now
            return
        time.sleep(due - now)
        self._next_frame_at = due

    def set_views(self, k: int) -> None:
        """Split the window among ``k`` views (:meth:`viewer.render.ViewerSession.set_views`): the first is
        flown, view j follows the scene's generated fly-through j/k of its duration ahead."""
        if k > 1 and self.view_path is None:
            from ..paths import generated_path, probe_index

            self.view_path = generated_path(self.options.scene, index=probe_index([self.session.index_name]))
        self.session.set_views(k)

    def _view_poses(self, k: int) -> list:
        """This frame's poses of views 0..k-1: None for the flown first, then the generated path's."""
        path = self.view_path
        span = max(float(path.duration), 1e-9)
        t = self.session.last.t if self.session.last is not None else 0.0
        poses: list = [None]
        for j in range(1, k):
            pos, yaw, pitch = path.evaluate(path.start + (t + j * span / k) % span)
            poses.append((*pos.reshape(3).tolist(), float(np.ravel(yaw)[0]), float(np.ravel(pitch)[0])))
        return poses

    def _save_screenshot(self, path: str | None) -> str | None:
        """Save the frame just rendered at --screenshot PATH or ``screenshot-<time>.png``, never over an
        existing file: when the name is taken, beside it as PATH-2.png, PATH-3.png, ... (two shots in one
        second, a second shot to --screenshot). A file that cannot be written is a message on the HUD and
        in the terminal; the window goes on. Returns the path written (None: not saved)."""
        if path is None:
            path = f"screenshot-{time.strftime('%Y%m%d-%H%M%S')}.png"
        try:
            written = save_png_new(path, self.session.image())
        except (OSError, ValueError) as exc:
            why = getattr(exc, "strerror", None) or str(exc)
            self._notify(f"screenshot not saved: cannot write {path}: {why}")
            return None
        self.screenshots.append(written)
        self._say(f"screenshot: {written}")
        return written

    def _notify(self, msg: str) -> None:
        """``msg`` in the terminal and, for :data:`NOTICE_S` seconds, on the HUD."""
        self._say(msg)
        self.session.notice = msg
        self._notice_until = time.monotonic() + NOTICE_S

    # ----------------------------------------------------------------------------- the window itself
    def _window_exists(self) -> bool:
        """Whether the X window is still there (another client may destroy it: then no key, no close
        button and no frame ever reaches us again). True when this is not an Xlib window."""
        win = getattr(self.wnd, "_window", None)
        display, xid = getattr(win, "_x_display", None), getattr(win, "_window", None)
        if not display or not xid or self.wnd.is_closing:
            return True
        try:
            from ctypes import byref

            from pyglet.libs.x11 import xlib
        except ImportError:
            return True
        attrs = xlib.XWindowAttributes()
        # a destroyed window is a BadWindow error (pyglet's error handler ignores it) and status 0
        return bool(xlib.XGetWindowAttributes(display, xid, byref(attrs)))

    def _set_wm_pid(self) -> None:
        """Name this process in the X window's ``_NET_WM_PID`` (pyglet does not), so ``xdotool search --pid``
        and window managers find the window by its process. Nothing when this is not an Xlib window."""
        win = getattr(self.wnd, "_window", None)
        display, xid = getattr(win, "_x_display", None), getattr(win, "_window", None)
        if not display or not xid:
            return
        try:
            import ctypes
            import os

            from pyglet.libs.x11 import xlib
        except ImportError:
            return
        atom = xlib.XInternAtom(display, b"_NET_WM_PID", False)
        pid = ctypes.c_ulong(os.getpid())  # format 32 properties are C longs
        cardinal = xlib.XInternAtom(display, b"CARDINAL", False)
        xlib.XChangeProperty(display, xid, atom, cardinal, 32, xlib.PropModeReplace,
                             ctypes.cast(ctypes.byref(pid), ctypes.POINTER(ctypes.c_ubyte)), 1)
        xlib.XFlush(display)

    def window_lost(self, why: str) -> None:
        """The window is gone: stop flying (the take is closed on the way out, complete)."""
        if self.lost is None:
            self.lost = why
            try:
                self.wnd.close()
            except Exception:  # noqa: BLE001 - the X resources are gone already; the loop ends on is_closing
                self.wnd.is_closing = True

    def _cap_window(self, width: int, height: int) -> bool:
        """Resize a window larger than the framebuffer this viewer renders (:func:`capped_size`: at most
        :attr:`max_side` pixels a side, the GL's limits, and :data:`MAX_FRAMEBUFFER_PIXELS` pixels) back
        to that size, and say so; True when it did."""
        w, h = int(width), int(height)
        cw, ch = capped_size((w, h), self.max_side)
        if (cw, ch) == (w, h) or self.wnd.is_closing:
            return False
        self._notify(f"the window is {w}x{h} pixels, more than this viewer renders (at most {self.max_side} "
                     f"a side and {MAX_FRAMEBUFFER_PIXELS / 1e6:.1f} megapixels): resized to {cw}x{ch}")
        ratio = getattr(self.wnd, "pixel_ratio", 1.0) or 1.0
        self.wnd.size = (max(1, int(cw / ratio)), max(1, int(ch / ratio)))
        return True

    # ----------------------------------------------------------------------------- takes
    def start_take(self) -> Take:
        """Start recording the next take (``take-N`` in the take directory); returns it."""
        if self.take is not None:
            return self.take
        o = self.options
        if o.takes is None:
            o.takes = TakeDir(".")
        s = self.session
        info = s.run_info()
        fbo = s.fbo
        meta = build_meta(
            scene=o.scene,
            index=s.index_name,
            index_options=info["index_options"],
            window_size=(fbo.viewport[2], fbo.viewport[3]),
            gl=gl_info(self.ctx),
            headless=False,
            vsync=bool(o.vsync),
            max_fps=o.max_fps,
            path={"flown": "window", "fixed_dt": o.fixed_dt},
            dt=o.fixed_dt,
            draw=s.options.draw,
            build_s=info["build_s"],
            camera={"fov": s.camera.fov, "near": s.camera.near, "far": s.camera.far},
            hysteresis=info["hysteresis"],
            moving=info["moving"],
            culling=info["culling"],
            radius_scale=s.options.radius_scale,
        )
        # a moving world is kept as it is now, before the take's first frame advances it, so that a replay of
        # the take starts the world here (take-N.world.npz); and the take's first row counts every visible
        # object as entered (the events afresh), as a replay's first frame does
        mo = s.motion_state
        self.take = o.takes.start(meta, world=None if mo is None else mo.snapshot())
        s.restart()
        self._say(f"recording {self.take.name} into {o.takes.directory} (R stops)"
                  + (f"; world clock {mo.t:.1f} s" if mo is not None else ""))
        self._show_status(force=True)
        return self.take

    def stop_take(self, ended: str = "closed") -> str | None:
        """Stop the take being recorded (its files complete); returns what was written."""
        take, self.take = self.take, None
        if take is None:
            return None
        line = take.close(ended=ended)
        if take.frames:  # an empty take leaves no files
            self.takes_done.append(str(take.csv_path))
        self._say(line)
        self._show_status(force=True)
        return line

    def _show_status(self, force: bool = False) -> None:
        """REC, elapsed seconds, frames and the directory in the HUD and (four times a second) the title."""
        take = self.take
        if take is None:
            self.session.status = ""
            title = self.base_title
        else:
            rec = f"REC {take.name}  {take.elapsed:6.1f} s  {take.frames} frames  -> {take.directory}"
            self.session.status = rec + "  (R stops)"
            title = f"{self.base_title}  [{rec}]"
        now = time.monotonic()
        if (force or now - self._title_at >= 0.25) and not self.wnd.is_closing:
            self._title_at = now
            self.wnd.title = title

    # ----------------------------------------------------------------------------- events
    def on_key_event(self, key, action, modifiers) -> None:
        keys = self.wnd.keys
        if self.panel_shown:
            self.panel_renderer.key_event(key, action, modifiers)
        name = self.key_names.get(key)
        if name is None:
            return
        if action == keys.ACTION_PRESS and not self._panel_wants("keyboard"):
            self.held.add(name)
            self.tapped.add(name)
            cmd = COMMAND_KEYS.get(name)
            if cmd is not None:
                self.command(cmd)
        elif action == keys.ACTION_RELEASE:
            self.held.discard(name)

    def command(self, cmd: str) -> None:
        """Run a viewer command (a value of :data:`COMMAND_KEYS`)."""
        s = self.session
        if cmd == "next_index":
            name = s.cycle_index()  # its kernels compiled now, not in the next recorded frame's query
            self._say(f"index: {name}")
        elif cmd == "freeze":
            self._say("culling frozen" if s.toggle_frozen() else "culling live")
        elif cmd == "boxes":
            s.toggle_boxes()
        elif cmd == "colour":
            self._say(f"colour: {s.toggle_colour()}")
        elif cmd == "bands":
            self._say(f"colour: {s.toggle_band_colours()}")
        elif cmd == "draw_mode":
            self._say(f"draw: {s.toggle_draw_mode()}")
        elif cmd == "hysteresis":
            self._say(f"hysteresis: {s.toggle_hysteresis(self.hysteresis_margin)}")
        elif cmd == "hud":
            self.panel_shown = not self.panel_shown
        elif cmd == "graph":
            self.panel.show_graphs = not self.panel.show_graphs
        elif cmd == "record":
            if self.take is None:
                self.start_take()
            else:
                self.stop_take()
        elif cmd == "mouse_look":
            self.look_toggled = not self.look_toggled
            self.wnd.mouse_exclusivity = self.look_toggled
            self.wnd.cursor = not self.look_toggled
        elif cmd == "screenshot":
            # saved at the end of the next frame, before its buffers swap: a read between frames may see a
            # stale back buffer; every press is a file of its own
            self._shots.append(self.options.screenshot)
        elif cmd == "jump":
            if self.spots:
                self.spot = (self.spot + 1) % len(self.spots)
                s.camera.set_pose(self.spots[self.spot])
                self._say(f"busy spot {self.spot + 1} of {len(self.spots)}: {_pose_text(s.camera.pose)}")
        elif cmd == "start":
            s.camera.set_pose(self.start_pose)
            s.camera.speed = self.start_speed
            self.spot = 0 if self.options.pose is None else -1
            self._say(f"back to the start: {_pose_text(s.camera.pose)}")
        elif cmd == "views":
            cycle = VIEW_CYCLE
            k = cycle[(cycle.index(s.views) + 1) % len(cycle)] if s.views in cycle else 1
            self.set_views(k)
            self._say(f"views: {k}" + (" (split screen; the others fly the generated path)" if k > 1 else ""))
        elif cmd == "quit":
            self.wnd.close()

    def apply(self, what: str, value) -> None:
        """Apply one of the panel's actions (:data:`viewer.drivers.panel.ACTIONS`)."""
        s = self.session
        if what == "index":
            s.use_index(value)  # its kernels compiled now, not in the next recorded frame's query
            self._say(f"index: {s.index_name}")
        elif what == "command":
            self.command(value)
        elif what == "set":
            s.set(**value)
            if "radius_scale" in value:
                self._say(f"view distance x{s.options.radius_scale!r}: every view radius scaled, {s.index_name} told "
                          f"in {s.rescale_s * 1e3:.1f} ms")
        elif what == "margin":
            self.hysteresis_margin = (value, True)
            if s.hysteresis != "off":
                s.set(hysteresis=self.hysteresis_margin)
        elif what == "speed":
            s.camera.speed = value
        elif what == "takes":
            try:
                self.options.takes = TakeDir(value)
                self._say(f"takes go to {self.options.takes.directory}")
            except UserError as exc:
                self._notify(f"takes: {exc}")

    def _say(self, msg: str) -> None:
        self.messages.append(msg)
        print(f"viewer: {msg}", file=sys.stderr, flush=True)

    def _panel_wants(self, what: str) -> bool:
        """Whether ImGui wants the ``"mouse"`` or the ``"keyboard"`` now (then the camera does not get it)."""
        io = self.panel_renderer.io
        return self.panel_shown and bool(io.want_capture_mouse if what == "mouse" else io.want_capture_keyboard)

    def on_mouse_drag_event(self, x, y, dx, dy) -> None:
        if self.panel_shown:
            self.panel_renderer.mouse_drag_event(x, y, dx, dy)
        if not self._panel_wants("mouse"):
            self.mouse_dx += dx
            self.mouse_dy += dy

    def on_mouse_position_event(self, x, y, dx, dy) -> None:
        if self.panel_shown:
            self.panel_renderer.mouse_position_event(x, y, dx, dy)
        if self.look_toggled and not self._panel_wants("mouse"):
            self.mouse_dx += dx
            self.mouse_dy += dy

    def on_mouse_press_event(self, x, y, button) -> None:
        if self.panel_shown:
            self.panel_renderer.mouse_press_event(x, y, button)

    def on_mouse_release_event(self, x, y, button) -> None:
        self.panel_renderer.mouse_release_event(x, y, button)  # even hidden: no button stays down in ImGui

    def on_mouse_scroll_event(self, x_offset: float, y_offset: float) -> None:
        if self.panel_shown:
            self.panel_renderer.mouse_scroll_event(x_offset, y_offset)
        if not self._panel_wants("mouse"):
            self.scroll += y_offset

    def on_unicode_char_entered(self, char: str) -> None:
        if self.panel_shown:
            self.panel_renderer.unicode_char_entered(char)

    def on_resize(self, width: int, height: int) -> None:
        if self._cap_window(width, height):
            return  # resized back: its own resize event follows
        self.session.resize(self.wnd.fbo)
        self.panel_renderer.resize(width, height)


#: tries to open the window on a display whose socket answered (a loaded Xvfb has refused a connection once)
CONNECT_ATTEMPTS = 3


def run_window(options: WindowOptions, *, size: tuple[int, int] = (1280, 720), backend: str = "pyglet") -> ViewerWindow:
    """Open the window, fly until it closes, return the finished :class:`ViewerWindow` (its session,
    frame count, screenshots and takes).

    A take still recording when the window closes, or when Ctrl-C or SIGTERM ends the process (the
    recorder turns them into exceptions), is stopped on the way out, its files complete.
    :class:`WindowUnavailable` when the display cannot be reached; :class:`WindowLost` (the take closed,
    complete) when another X client destroyed the window. A ``size`` larger than the framebuffer this
    viewer renders (:func:`viewer.render.context.capped_size`) opens at the capped size, said on stderr.
    """
    why = display_problem()
    if why:
        raise WindowUnavailable(why)
    capped = capped_size(size)
    if capped != tuple(size):
        print(f"viewer: {size[0]}x{size[1]} is more than this viewer renders (at most {MAX_FRAMEBUFFER_SIDE} a side "
              f"and {MAX_FRAMEBUFFER_PIXELS / 1e6:.1f} megapixels): the window opens at {capped[0]}x{capped[1]}",
              file=sys.stderr, flush=True)
        size = capped
    cls = type("ViewerWindow", (ViewerWindow,), {"options": options, "window_size": tuple(size),
                                                  "title": f"viewer - {getattr(options.scene, 'name', 'scene')}",
                                                  "vsync": bool(options.vsync)})
    args = ["--window", backend, "--size", f"{size[0]}x{size[1]}", "--vsync", "true" if options.vsync else "false"]
    for attempt in range(CONNECT_ATTEMPTS):
        try:
            config = mglw.create_window_config_instance(cls, args=args)
            break
        except Exception as exc:
            why = display_problem(exc)
            if not why:
                raise
            if attempt + 1 == CONNECT_ATTEMPTS:
                raise WindowUnavailable(why) from None
            print(f"viewer: {why}; trying again", file=sys.stderr, flush=True)
            time.sleep(0.5 * (attempt + 1))
    ended = "error"
    try:
        with FrameCollector() as config.frames_gc:  # no collection inside a frame (viewer.timing.heap)
            mglw.run_window_config_instance(config)
        ended = "closed"
    except KeyboardInterrupt:
        ended = "SIGINT"
        raise
    except SystemExit:
        ended = "SIGTERM"
        raise
    finally:
        config.stop_take(ended=ended)
    if config.lost:
        raise WindowLost(config.lost)
    return config


def _pose_text(p) -> str:
    return f"pos ({p[0]:.1f}, {p[1]:.1f}, {p[2]:.1f})  yaw {p[3]:.0f}  pitch {p[4]:.0f}"


def startup_line(session: ViewerSession, scene) -> str:
    """What the window says when it opens: the scene, its objects, the index and its build time (seconds),
    what is drawn, the start pose and speed, and the jump keys."""
    info = session.run_info()
    build = info["build_s"]
    built = f" built in {build:.3f} s" if build is not None else ""
    cam = session.camera
    return (f"{getattr(scene, 'name', 'scene')}: {len(scene.centres)} objects; index {session.index_name}{built}; "
            f"draw {session.options.draw}; start {_pose_text(cam.pose)}  speed {cam.speed:.3g}/s "
            f"(J: next busy spot, O/Home: back here)")


def summary(win: ViewerWindow) -> str:
    """One line: frames drawn, the start and final poses (exact: repr of the floats), the index, and the
    inspector panel's median time a frame it was drawn (ms, outside every frame's ``frame_ms``)."""
    p, s = win.session.camera.pose, win.start_pose
    t = win.panel_times
    panel = (f"; panel drawn {len(t)} frames, median {statistics.median(t):.3f} ms a frame (outside frame_ms)"
             if t else "; panel not drawn")
    return (f"viewer: quit after {win.frames} frames; camera from {tuple(s)!r} to {tuple(p)!r} "
            f"(x, y, z, yaw, pitch); index {win.session.index_name}{panel}")

