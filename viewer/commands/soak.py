"""``viewer soak SCENE``: a long headless run of a moving world (index + motion + events, no rendering),
checking sampled frames against brute force and reporting memory; the frames run in
:mod:`viewer.drivers.soak`."""

from __future__ import annotations

import argparse

from ..drivers import options
from ..drivers.soak import INSIDE_PROBES
from . import _args

HELP = "reliability run: many frames of a moving world headless (no rendering), checked against brute force"

DESCRIPTION = f"""\
Run SCENE's moving objects for N frames with a fixed dt, without rendering: each frame the movers
advance (viewer.frame.motion), the index moves them (move_many), the camera (the scene's generated
fly-through, looped) queries it, and the visibility tracker turns the answer into entered / left events.

Every --check-every frames the visible set is compared exactly with brute force over the world as it is
then, and so are the index's answers at {INSIDE_PROBES} points inside the spheres of movers picked at random (where a
moved object's boxes would go wrong; the camera rarely stands there), and the tracker's in-set with the
rule (no margin: equal to the visible set; with --hysteresis: a superset whose extra objects are within
r + margin). Every --report-every frames the process's
resident memory (RSS) and the index's own arrays (nbytes) are printed to stderr, so growth shows. The
summary's frame times are followed by the machine line (CPU, logical CPUs) they were measured on.

The camera flies the path sampled at --dt (at most --frames poses of it are computed: the run reaches no
further). A --dt that would sample the path into more than 1e7 poses is refused: give a larger --dt.

Ctrl-C (SIGINT) stops the run at the end of the frame being computed: the summary of the frames done
and checked is printed as at the end of a full run, then the exit status is 130 (or 1 if a checked
frame mismatched). A second Ctrl-C stops at once.

Exit status 0 when every checked frame matched, 1 on any mismatch (the first few are printed), 2 for a
bad argument, 130 when stopped by Ctrl-C with no mismatch. A scene without [motion], or whose share rounds
to no mover, is refused (nothing would move).
"""

def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("soak", help=HELP, description=DESCRIPTION,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scene", metavar="SCENE", help="a scene with a [motion] table (.toml, .npz or a bundled name, "
                                                  "e.g. dynamic-100k)")
    _args.add_import_options(p)
    p.add_argument("--index", default="octree", metavar="SPEC",
                   help="the index to soak (default: %(default)s): " + _args.INDEX_HELP)
    p.add_argument("--frames", type=_args.frame_count, default=100_000, metavar="N",
                   help="frames to run (default 100000; 1e5 is accepted)")
    p.add_argument("--dt", type=_args.positive_float, default=1.0 / 60.0, metavar="SECONDS",
                   help="fixed time step per frame (default 1/60 s)")
    p.add_argument("--check-every", type=_args.positive_int, default=100, metavar="K",
                   help=f"compare every K-th frame with brute force, at the camera and inside {INSIDE_PROBES} movers' spheres "
                        "(default %(default)s)")
    p.add_argument("--report-every", type=_args.positive_int, default=10_000, metavar="K",
                   help="print memory every K frames (default %(default)s)")
    p.add_argument("--hysteresis", type=options.margin, default=(0.0, False), metavar="MARGIN",
                   help="events' margin: world units, or 'P%%' of each view radius (default 0)")
    p.add_argument("--time-limit", type=_args.positive_float, metavar="SECONDS",
                   help="stop after this much wall time, reporting the frames done (the run still passes "
                        "or fails on the frames checked)")
    p.add_argument("-q", "--quiet", action="store_true", help="only the final summary")
    p.set_defaults(func=run)
    return p


def run(args) -> int:
    from ..drivers.soak import soak

    return soak(args.scene, _args.import_options(args), index=args.index, frames=args.frames, dt=args.dt,
                check_every=args.check_every, report_every=args.report_every, hysteresis=args.hysteresis,
                time_limit=args.time_limit, quiet=args.quiet)
