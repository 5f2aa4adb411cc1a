"""``viewer record SCENE -o DIR``: replay a camera path headless and record one CSV per index."""

from __future__ import annotations

import argparse

from ..drivers.options import DEMO_FRAMES
from ..drivers import options
from . import _args

HELP = "replay a camera path headless, recording per-frame timings (one CSV per index)"

DESCRIPTION = """\
Replay a camera path through the scene offscreen (EGL, no display needed), rendering every frame
with a fixed time step, and record one row per frame (stage times, counts, camera pose) into
DIR/INDEX.csv with DIR/INDEX.meta.json beside it. Two runs of the same path see exactly the same
camera poses and visible sets. With several --index, the indexes run interleaved (frame k by each
index in turn) so a noisy machine slows them alike.

A scene with a [motion] table moves every frame by the same fixed dt (each index its own copy of the
world, from the same seed), and the CSV's moved / update_ms columns carry the cost; entered / left count
the visibility events (--hysteresis MARGIN: leave only beyond r + MARGIN, or r * (1 + P%) for "P%").

Without --path the scene's generated fly-through is used (--generated picks another: it crosses
the clusters, runs along the diagonal, passes near the remote cluster). By default that is a demo:
the whole flight in at most 1800 frames (a larger step than 1/60 s when the flight is longer, about
a minute on a 2-core machine even on a first run); --full records every frame at 1/60 s (the
fly-through of clustered-100k: 5401 frames); --frames and --dt choose the frames themselves. Read the results with
'viewer plot DIR/*.csv -o fig.png' and 'viewer compare DIR/*.csv'.

The first run compiles the numba kernels the recording runs (tens of seconds, said on stderr as it
happens; only the chosen indexes' build and query, their batch move in a moving world); later runs
load them from the cache.

--trace FILE.json also writes every frame's stage spans as a Chrome Trace Event file for Perfetto (a
process per index, a track per stage). --gpu-time fills the gpu_ms column with the device's time of the
frame's GL work (GL timer queries: the draw, and the gpu and coherent modes' dispatches); on llvmpipe that is
the CPU renderer's own clock, and the summary says so. It is off by default: on llvmpipe a timer query's end
waits for the work it brackets, which moves that wait into the stage around it.

A recording is never overwritten by accident: when DIR already holds INDEX.csv or INDEX.meta.json for
one of the indexes to record (or a link by that name), the command stops before the scene loads and
says so; --force replaces them (a symbolic link is replaced by the new file, never written through).
Replaying a take's path (--path DIR/take-N.path.toml) on another scene than the take's warns.
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("record", help=HELP, description=DESCRIPTION,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scene", metavar="SCENE", help=_args.SCENE_HELP)
    _args.add_import_options(p)
    src = p.add_mutually_exclusive_group()
    src.add_argument("--path", type=_args.name, metavar="PATH", help="a camera path file (.toml or .json) to replay")
    src.add_argument("--generated", choices=options.GENERATED, default="flythrough",
                     help="which generated path to replay when no --path is given (default: %(default)s)")
    p.add_argument("--full", action="store_true",
                   help=f"record the generated path in full, every frame at 1/60 s (default: a demo of the whole "
                        f"flight in at most {DEMO_FRAMES} frames; a --path is always recorded in full)")
    p.add_argument("--frames", type=_args.frame_count, metavar="N",
                   help="render the whole path in N frames (dt = duration / (N - 1); N = 1: its start, dt 1/60 s); "
                        "default: as many frames as the path lasts at --dt (a generated path without --full: "
                        f"at most {DEMO_FRAMES})")
    p.add_argument("--dt", type=_args.time_step, metavar="SECONDS",
                   help="fixed time step per frame (default 1/60 s; with --frames: the first N frames at this step)")
    p.add_argument("--index", dest="indexes", nargs="+", action="extend", metavar="SPEC",
                   help="index(es) to record, interleaved, gpu for culling on the GPU; repeatable (default: scan and "
                        "octree: the baseline and the tree): " + _args.INDEX_HELP)
    p.add_argument("--size", type=_args.size, default=(1280, 720), metavar="WxH",
                   help="framebuffer size in pixels (default 1280x720)")
    p.add_argument("--draw", choices=options.DRAW_MODES, default="sprites",
                   help="how objects are drawn (default: %(default)s)")
    p.add_argument("--speed", type=_args.positive_float, metavar="UNITS_PER_S",
                   help="camera speed of a generated path, world units per second (default: world size / 10)")
    p.add_argument("--save-path", type=_args.name, metavar="FILE",
                   help="also write the path replayed to FILE (TOML), e.g. to edit a generated path by hand")
    p.add_argument("--hysteresis", type=options.margin, default=(0.0, False), metavar="MARGIN",
                   help="visibility events leave only beyond r + MARGIN world units, or r * (1 + P/100) for 'P%%' "
                        "(default 0: leave as soon as out of view distance)")
    p.add_argument("--views", type=options.record_views, default=1, metavar="K",
                   help="cull K views together every frame (split screen, 1..16): view 0 flies the path, view j "
                        "the same path j/K of its duration ahead (cyclic); each CSV then has K rows a frame, "
                        "told apart by its 'view' column")
    p.add_argument("-o", "--out", required=True, metavar="DIR", help="output directory (created if missing)")
    p.add_argument("--trace", type=_args.name, metavar="FILE.json",
                   help="also write every recorded frame's stage spans as a Chrome Trace Event file (open it in "
                        "Perfetto): a process per index, a track per stage, the frame numbers in the events' args, "
                        "and the gpu_ms counter (viewer/recording/trace.py)")
    p.add_argument("--gpu-time", action="store_true",
                   help="time each frame's GL work on the device (GL timer queries) into the gpu_ms column; off by "
                        "default (0): on llvmpipe a query's end waits for the work it brackets, inside the stage "
                        "around it")
    p.add_argument("--force", action="store_true",
                   help="replace the recordings of these indexes already in DIR, and an existing --save-path or "
                        "--trace file (without it, an existing DIR/INDEX.csv, INDEX.meta.json, --save-path or "
                        "--trace file stops the command before anything is written)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)
    return p




def run(args) -> int:
    """``viewer record``: :func:`viewer.drivers.record.record` with the parsed options."""
    from ..drivers.record import RecordOptions, record

    return record(RecordOptions(
        scene=args.scene, import_options=_args.import_options(args), path=args.path, generated=args.generated,
        full=args.full, frames=args.frames, dt=args.dt, indexes=args.indexes, size=args.size, draw=args.draw,
        speed=args.speed, save_path=args.save_path, hysteresis=args.hysteresis, views=args.views, out=args.out,
        trace=args.trace, gpu_time=args.gpu_time, force=args.force, quiet=args.quiet))
