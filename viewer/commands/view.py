"""``viewer view SCENE``: fly through a scene in a window, or render frames headless."""

from __future__ import annotations

import argparse

from ..errors import UserError
from ..drivers import options
from . import _args

HELP = "fly through a scene on the GPU (a window, or --headless frames through EGL)"

DESCRIPTION = """\
Open SCENE (a recipe .toml, scene data .npz, or a bundled recipe name such as clustered-100k) and fly
through it. Every frame the camera position is the query: the index returns the objects whose view
distance holds the camera, a frustum cull keeps those in sight, and their instance records stream into
one GPU buffer for one instanced draw.

Keys: WASD move, Q/E or Ctrl/Space down/up, Shift faster, mouse look while a button is held (or M to
toggle), wheel changes speed; I/Tab next index, F freeze culling (fly out and look at what the frozen
camera sees), B node boxes (the nodes the last query visited highlighted), C colour by category or
octree level, V sprites/mesh, H inspector panel, G its graphs, P/F12 screenshot, Y hysteresis on/off, R record,
J jump to the next busy spot (the scene's densest places, densest first), O or Home back to the start,
N split screen (1, 2, 4 views culled together; --views K starts with K), Esc quit.

The window starts inside the scene's densest spot, looking at its middle, at a speed at which two seconds
of W stay among its objects (wheel or Shift to go faster); --pose and --speed override both. It prints the
index's build time and the start pose when it opens.

R starts and stops a recording take: take-N.csv + take-N.meta.json (one row per frame as flown, the
schema of 'viewer record') and take-N.path.toml (the flight as a camera path: replay it for any index
with 'viewer record SCENE --path DIR/take-N.path.toml --index ...') in --record DIR (default: the
working directory); --record DIR also starts the first take at launch. The inspector panel (an ImGui
window over the scene, on by default, --no-hud starts it hidden) shows REC, the take's time, frames and
directory, graphs of the last 300 frames' stage times and counts, the index list, the key toggles, and
sliders for a global view-distance scale (exact: the index is told), the fade, the hysteresis and the speed.

A scene with a [motion] table moves while you fly; the panel counts the objects that entered and left view
distance each frame. --hysteresis MARGIN makes them leave only beyond r + MARGIN (or r * (1 + P%) for
"P%"); Y toggles it (default margin when none is given: 10%).

P/F12 saves the frame as screenshot-<time>.png in the working directory (or --screenshot PNG), never
over an existing file (a name taken: PNG-2.png, PNG-3.png, ... beside it); a file that cannot be written is a
message on the HUD and in the terminal. The window renders at most 8192 pixels a side and 33.5
megapixels (2**25; less if the GL allows less): a larger window is resized back to that, and says so.
A window destroyed by another X client closes the take being recorded (complete) and exits with status 1.
--headless, --path, --frames and --dt are headless flags; --fixed-dt, --vsync, --max-frames and --record
window flags: given to the other mode they are refused, not ignored.

With --headless no display is needed: N frames are rendered offscreen through EGL along the scene's
generated fly-through (or --path FILE), a summary of stage timings is printed, and --screenshot saves
the last frame (a generated fly-through ends at its busiest view: the pose along it that drew the most
objects), never over an existing file either (a name taken: PNG-2.png, ... beside it, named in the output).
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    from ..drivers.view import parse_pose

    p = subparsers.add_parser("view", help=HELP, description=DESCRIPTION,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scene", metavar="SCENE", help=_args.SCENE_HELP)
    _args.add_import_options(p)
    p.add_argument("--index", metavar="SPEC",
                   help="the index to start with, or gpu (culling on the GPU; default: octree when available, "
                        "else brute); I cycles at run time through it, the registered indexes and the installed "
                        "plugins. " + _args.INDEX_HELP)
    p.add_argument("--size", type=_args.size, default=(1280, 720), metavar="WxH",
                   help="window / framebuffer size in pixels (default 1280x720)")
    p.add_argument("--draw", choices=options.DRAW_MODES, default="sprites",
                   help="point-sprite impostors (cheaper) or instanced cubes (default: %(default)s)")
    p.add_argument("--colour", choices=options.COLOUR_MODES, default="category",
                   help="colour by the scene's category or by the octree level holding each object")
    p.add_argument("--fade", type=_args.fraction, default=0.15, metavar="FRACTION",
                   help="objects fade in over this last fraction of their view distance (default 0.15; 0: pop)")
    p.add_argument("--boxes", action="store_true", help="start with the index's node boxes shown")
    p.add_argument("--no-hud", dest="hud", action="store_false", default=None, help="start with the HUD hidden")
    p.add_argument("--hud", dest="hud", action="store_true", help="draw the HUD (default on in a window, off headless)")
    p.add_argument("--pose", type=parse_pose, metavar="X,Y,Z,YAW,PITCH",
                   help="camera pose to start at (world units, degrees); headless: render every frame there "
                        "instead of flying a path")
    p.add_argument("--speed", type=_args.positive_float, metavar="UNITS_PER_S",
                   help="camera speed, world units per second (default: fitted to the scene); headless: the "
                        "generated fly-through's speed (as 'viewer record --speed')")
    p.add_argument("--hysteresis", type=options.margin, metavar="MARGIN",
                   help="visibility events leave only beyond r + MARGIN world units, or r * (1 + P/100) for 'P%%' "
                        "(default: off; Y toggles it in the window)")
    p.add_argument("--screenshot", metavar="PNG",
                   help="headless: save the last frame here; window: where the screenshot key saves (either: "
                        "never over a file, a name taken: PNG-2.png, PNG-3.png, ... beside it)")
    g = p.add_argument_group("headless")
    g.add_argument("--headless", action="store_true", help="render offscreen through EGL, no display needed")
    g.add_argument("--frames", type=_args.frame_count, metavar="N",
                   help="frames to render headless: the whole path in N frames (default 120; with --dt: the "
                        "first N frames at that step)")
    g.add_argument("--path", type=_args.name, metavar="FILE", help="camera path (.toml/.json) to fly headless (default: the generated fly-through)")
    g.add_argument("--dt", type=_args.time_step, metavar="SECONDS",
                   help="seconds of path per frame (alone: the whole path at this step, e.g. 0.016667 to fly it in real time)")
    p.add_argument("--record", type=_args.name, metavar="DIR",
                   help="window: record a take from the first frame into DIR (created if missing); R stops it and "
                        "starts the next (take-1, take-2, ...: nothing is overwritten)")
    p.add_argument("--vsync", action="store_true",
                   help="window: wait for the display's refresh at each frame (default off; recorded in each take)")
    p.add_argument("--max-fps", type=_args.frame_rate, metavar="FPS",
                   help="window: draw at most FPS frames a second, waiting between frames (a shared machine, a "
                        "virtual display without a refresh to wait for; the wait is in no timed stage; recorded in "
                        "each take)")
    w = p.add_argument_group("window (for scripted runs)")
    w.add_argument("--fixed-dt", type=_args.time_step, metavar="SECONDS",
                   help=f"advance the camera by this fixed step per frame instead of the wall clock "
                        f"(at most {_args.MAX_DT:g} s)")
    w.add_argument("--max-frames", type=_args.positive_int, metavar="N", help="close the window after N frames")
    w.add_argument("--views", type=options.window_views, metavar="K",
                   help="split the window into K views (1, 2 or 4; N cycles them), culled together every frame: "
                        "the first flown by you, view j on the generated fly-through j/K of its duration ahead")
    p.set_defaults(func=run)
    return p




#: flags only one of the two modes reads: (flag, its attribute, what it is for)
WINDOW_ONLY = (("--fixed-dt", "fixed_dt", "steps the window's camera"),
               ("--vsync", "vsync", "waits for the display's refresh"),
               ("--max-fps", "max_fps", "paces the window's frames"),
               ("--max-frames", "max_frames", "closes the window"),
               ("--record", "record", "records takes from the window; headless, use 'viewer record SCENE -o DIR'"),
               ("--views", "views", "splits the window; headless, use 'viewer record SCENE --views K'"))
HEADLESS_ONLY = (("--path", "path", "flies a camera path offscreen; in the window you fly yourself; to record a "
                                    "path's frames use 'viewer record SCENE --path FILE'"),
                 ("--frames", "frames", "counts headless frames; in the window use --max-frames"),
                 ("--dt", "dt", "steps a headless path; in the window use --fixed-dt"))


def check_mode_flags(args) -> None:
    """Refuse a flag the chosen mode would ignore (a UserError naming it and what it is for)."""
    if args.headless:
        for flag, attr, what in WINDOW_ONLY:
            if getattr(args, attr, None):
                raise UserError(f"{flag} is for the window (it {what}); --headless would ignore it")
        if args.pose is not None and args.path is not None:
            raise UserError("--pose renders every headless frame at one pose; --path would be ignored: give one")
        if args.speed is not None and (args.pose is not None or args.path is not None):
            held = "--pose holds the camera still" if args.pose is not None else "--path FILE keeps its own times"
            raise UserError(f"--speed paces the generated fly-through; {held}, so --headless would ignore it")
    else:
        for flag, attr, what in HEADLESS_ONLY:
            if getattr(args, attr, None) is not None:
                raise UserError(f"{flag} is for --headless (it {what}); the window would ignore it")


def run(args) -> int:
    """``viewer view``: the mode's flags checked, then :func:`viewer.drivers.view.view` with the parsed options."""
    from ..drivers.view import ViewOptions, view

    check_mode_flags(args)
    return view(ViewOptions(
        scene=args.scene, import_options=_args.import_options(args), index=args.index, size=args.size,
        draw=args.draw, colour=args.colour, fade=args.fade, boxes=args.boxes, hud=args.hud, pose=args.pose,
        speed=args.speed, hysteresis=args.hysteresis, screenshot=args.screenshot, headless=args.headless,
        frames=args.frames, path=args.path, dt=args.dt, record=args.record, vsync=args.vsync, max_fps=args.max_fps,
        fixed_dt=args.fixed_dt, max_frames=args.max_frames, views=args.views))
