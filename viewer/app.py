"""The window: a thin moderngl-window adapter around :class:`viewer.render.ViewerSession`.

It only translates the toolkit's events into the camera's toolkit-neutral input (key names through
:data:`KEY_NAMES`, actions through :class:`viewer.camera.KeyBindings`, commands through
:data:`COMMAND_KEYS`) and calls the session once per frame. This is the only module that imports
moderngl_window; it opens an X window (GLX), so never import it in a process that created an EGL
context.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

import moderngl_window as mglw

from .camera import DEFAULT_BINDINGS, InputState, KeyBindings
from .frame import FrameStats
from .render import ViewerSession

__all__ = ["COMMAND_KEYS", "HELP_LINE", "ViewerWindow", "WindowOptions", "run_window", "summary"]

#: key name -> viewer command (the camera's movement keys are in :data:`viewer.camera.DEFAULT_BINDINGS`)
COMMAND_KEYS: dict[str, str] = {
    "i": "next_index",
    "tab": "next_index",
    "f": "freeze",
    "b": "boxes",
    "c": "colour",
    "v": "draw_mode",
    "h": "hud",
    "m": "mouse_look",
    "p": "screenshot",
    "y": "hysteresis",
    "f12": "screenshot",
    "escape": "quit",
}

HELP_LINE = ("WASD move  Q/E or Ctrl/Space down/up  Shift fast  drag or M: look  wheel: speed  "
             "I index  F freeze  B boxes  C colour  V sprites/mesh  H hud  Y hysteresis  P shot  Esc quit")

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
    "f12": "F12",
}


@dataclass
class WindowOptions:
    """What ``viewer view`` passes to the window.

    scene : the :class:`viewer.scenes.Scene`; index : the index to start with; draw, colour, fade, fog, hud,
    boxes : as :class:`viewer.render.ViewerSession`; screenshot : the path the screenshot key writes
    (None: ``screenshot-<time>.png`` in the working directory); fixed_dt : seconds per frame instead of
    the wall clock (replayable flights); max_frames : close after this many frames (0: never);
    pose : the starting (x, y, z, yaw, pitch) (default: fitted to the scene); speed : world units per second
    hysteresis : ``(margin, relative)`` of the visibility events to start with (None: off); the Y key
        toggles between off and this margin (or :data:`DEFAULT_HYSTERESIS`)
    """

    scene: object
    index: str = "octree"
    draw: str = "sprites"
    colour: str = "category"
    fade: float = 0.15
    fog: float = 1.5
    hud: bool = True
    boxes: bool = False
    screenshot: str | None = None
    fixed_dt: float | None = None
    max_frames: int = 0
    pose: tuple[float, float, float, float, float] | None = None
    speed: float | None = None
    hysteresis: tuple[float, bool] | None = None
    bindings: KeyBindings = field(default_factory=lambda: DEFAULT_BINDINGS)


class EventsSession(ViewerSession):
    """The window's session: its HUD also shows the visibility events (and the moving objects)."""

    def hud_lines(self, st: FrameStats) -> list[str]:
        lines = super().hud_lines(st)
        moving = f"moving {self.moving}  moved {st.moved}  " if self.moving else ""
        lines.insert(3, f"{moving}entered {st.entered:5d}  left {st.left:5d}  in {self.in_view}"
                        f"  hysteresis {self.hysteresis} (Y)")
        return lines


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

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        o = self.options
        if o is None:
            raise RuntimeError("ViewerWindow.options must be set before the window is created")
        self.wnd.exit_key = None  # Escape is our "quit", so the summary is printed
        on = o.hysteresis is not None and o.hysteresis[0] > 0
        self.hysteresis_margin = o.hysteresis if on else DEFAULT_HYSTERESIS
        self.session = EventsSession(self.ctx, self.wnd.fbo, o.scene, index=o.index, draw=o.draw, colour=o.colour,
                                     fade=o.fade, fog=o.fog, hud=o.hud, boxes=o.boxes,
                                     hysteresis=self.hysteresis_margin if on else None)
        self.session.help_line = HELP_LINE
        if o.pose is not None:
            self.session.camera.set_pose(o.pose)
        if o.speed:
            self.session.camera.speed = o.speed
        self.start_pose = self.session.camera.pose
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

    # ----------------------------------------------------------------------------- frame
    def on_render(self, time_: float, frametime: float) -> None:
        o = self.options
        dt = o.fixed_dt if o.fixed_dt is not None else min(max(frametime, 0.0), 0.25)
        state = InputState(actions=o.bindings.actions(self.held | self.tapped), mouse_dx=self.mouse_dx, mouse_dy=self.mouse_dy,
                           scroll=self.scroll)
        self.mouse_dx = self.mouse_dy = self.scroll = 0.0
        self.tapped.clear()
        self.session.fbo = self.wnd.fbo
        self.session.frame(dt, input_state=state)
        self.frames += 1
        if o.max_frames and self.frames >= o.max_frames:
            self.wnd.close()

    # ----------------------------------------------------------------------------- events
    def on_key_event(self, key, action, modifiers) -> None:
        name = self.key_names.get(key)
        if name is None:
            return
        keys = self.wnd.keys
        if action == keys.ACTION_PRESS:
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
            self._say(f"index: {s.cycle_index()}")
        elif cmd == "freeze":
            self._say("culling frozen" if s.toggle_frozen() else "culling live")
        elif cmd == "boxes":
            s.toggle_boxes()
        elif cmd == "colour":
            self._say(f"colour: {s.toggle_colour()}")
        elif cmd == "draw_mode":
            self._say(f"draw: {s.toggle_draw_mode()}")
        elif cmd == "hysteresis":
            self._say(f"hysteresis: {s.toggle_hysteresis(self.hysteresis_margin)}")
        elif cmd == "hud":
            s.toggle_hud()
        elif cmd == "mouse_look":
            self.look_toggled = not self.look_toggled
            self.wnd.mouse_exclusivity = self.look_toggled
            self.wnd.cursor = not self.look_toggled
        elif cmd == "screenshot":
            path = self.options.screenshot or f"screenshot-{time.strftime('%Y%m%d-%H%M%S')}.png"
            self.screenshots.append(s.screenshot(path))
            self._say(f"screenshot: {path}")
        elif cmd == "quit":
            self.wnd.close()

    def _say(self, msg: str) -> None:
        self.messages.append(msg)
        print(f"viewer: {msg}", file=sys.stderr, flush=True)

    def on_mouse_drag_event(self, x, y, dx, dy) -> None:
        self.mouse_dx += dx
        self.mouse_dy += dy

    def on_mouse_position_event(self, x, y, dx, dy) -> None:
        if self.look_toggled:
            self.mouse_dx += dx
            self.mouse_dy += dy

    def on_mouse_scroll_event(self, x_offset: float, y_offset: float) -> None:
        self.scroll += y_offset

    def on_resize(self, width: int, height: int) -> None:
        self.session.resize(self.wnd.fbo)


def run_window(options: WindowOptions, *, size: tuple[int, int] = (1280, 720), backend: str = "pyglet") -> ViewerWindow:
    """Open the window, fly until it closes, return the finished :class:`ViewerWindow` (its session,
    frame count and screenshots)."""
    cls = type("ViewerWindow", (ViewerWindow,), {"options": options, "window_size": tuple(size),
                                                  "title": f"viewer - {getattr(options.scene, 'name', 'scene')}"})
    args = ["--window", backend, "--size", f"{size[0]}x{size[1]}", "--vsync", "false"]
    config = mglw.create_window_config_instance(cls, args=args)
    mglw.run_window_config_instance(config)
    return config


def summary(win: ViewerWindow) -> str:
    """One line: frames drawn, the start and final poses (exact: repr of the floats), the index."""
    p, s = win.session.camera.pose, win.start_pose
    return (f"viewer: quit after {win.frames} frames; camera from {tuple(s)!r} to {tuple(p)!r} "
            f"(x, y, z, yaw, pitch); index {win.session.index_name}")

