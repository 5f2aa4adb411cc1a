"""``viewer soak SCENE``: a long headless run of a moving world (index + motion + events, no rendering),
checking sampled frames against brute force and reporting memory."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time

from ..errors import UserError
from . import _args

HELP = "reliability run: many frames of a moving world headless (no rendering), checked against brute force"

DESCRIPTION = """\
Run SCENE's moving objects for N frames with a fixed dt, without rendering: each frame the movers
advance (viewer.frame.motion), the index moves them (move_many), the camera (the scene's generated
fly-through, looped) queries it, and the visibility tracker turns the answer into entered / left events.

Every --check-every frames the visible set is compared exactly with brute force over the world as it is
then, and the tracker's in-set with the rule (no margin: equal to the visible set; with --hysteresis:
a superset whose extra objects are within r + margin). Every --report-every frames the process's
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
    p.add_argument("--index", default="octree", metavar="NAME", help="the index to soak (default: %(default)s)")
    p.add_argument("--frames", type=_args.frame_count, default=100_000, metavar="N",
                   help="frames to run (default 100000; 1e5 is accepted)")
    p.add_argument("--dt", type=_args.positive_float, default=1.0 / 60.0, metavar="SECONDS",
                   help="fixed time step per frame (default 1/60 s)")
    p.add_argument("--check-every", type=_args.positive_int, default=100, metavar="K",
                   help="compare every K-th frame with brute force (default %(default)s)")
    p.add_argument("--report-every", type=_args.positive_int, default=10_000, metavar="K",
                   help="print memory every K frames (default %(default)s)")
    p.add_argument("--hysteresis", type=_args.margin, default=(0.0, False), metavar="MARGIN",
                   help="events' margin: world units, or 'P%%' of each view radius (default 0)")
    p.add_argument("--time-limit", type=_args.positive_float, metavar="SECONDS",
                   help="stop after this much wall time, reporting the frames done (the run still passes "
                        "or fails on the frames checked)")
    p.add_argument("-q", "--quiet", action="store_true", help="only the final summary")
    p.set_defaults(func=run)
    return p


def rss_bytes() -> int:
    """The process's resident set size now, bytes (Linux /proc; elsewhere the peak from getrusage)."""
    try:
        with open("/proc/self/statm") as fh:
            pages = int(fh.read().split()[1])
        import os

        return pages * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _mib(b: int) -> str:
    return f"{b / 2**20:.1f} MiB"


def run(args) -> int:
    from ..index import warm_scope

    # a soak moves, queries and builds (and checks): the rest of an index (a single insert, remove or move, a
    # batch of points) is not compiled
    with warm_scope(("build", "query", "move_many")):
        return _soak(args)


def _soak(args) -> int:
    import numpy as np

    from ..bench.report import machine_line
    from ..frame.events import VisibilityTracker, warm as warm_events
    from ..timing.heap import FrameCollector, settle
    from ..system.machine import machine
    from ..kernels.compile import reporting
    from ..index import INDEXES, QueryOverflow, brute_query, make_index, warm_up
    from ..frame.motion import MotionState, advance, warm as warm_motion
    from ..paths import generated_path

    if args.index not in INDEXES:
        raise UserError(f"--index {args.index}: unknown index; choose from {', '.join(INDEXES)}")
    why = INDEXES[args.index].unavailable()
    if why:
        raise UserError(f"--index {args.index}: not available here: {why}")
    say = (lambda *a: None) if args.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))

    scene = _args.load_scene(args, quiet=args.quiet)
    state = MotionState.from_scene(scene)
    if state is None:
        if (scene.recipe or {}).get("import"):  # glTF, PLY, CSV, Parquet: placements, never motion
            raise UserError(f"{args.scene}: an imported file has no moving objects, nothing would move (soak runs a "
                            "recipe with a [motion] table, e.g. dynamic-100k)")
        raise UserError(f"{args.scene}: the scene has no [motion] table, nothing would move (try dynamic-100k)")
    if not state.ids.size:
        raise UserError(f"{args.scene}: field 'motion.share' moves none of its {len(scene.centres):,} objects, nothing "
                        "would move (try dynamic-100k)")
    with reporting(sys.stderr, enabled=not args.quiet):  # a first run says that it compiles (not in the build time)
        warm_motion()
        warm_events()
        warm_up([args.index])
    path = generated_path(scene)
    # the path at --dt, but never more poses than the run has frames (it loops back and forth only when
    # the path is the shorter): a tiny --dt is a slow camera, not a sampling of billions of poses
    path_frames = _args.sampled_frames(path.duration, args.dt)
    if path_frames > _args.MAX_FRAMES:  # --frames is how long the soak runs: only --dt fixes this
        raise UserError(
            f"--dt {args.dt:g}: the generated path lasts {path.duration:.4g} s, which at --dt {args.dt:g} s per "
            f"frame is {_args.over_limit(path_frames, 'poses')}; give a larger --dt (--frames sets how many frames "
            "the soak runs, not how finely the path is sampled)")
    if path_frames > args.frames:
        samples = path.sample(frames=args.frames, dt=args.dt)
    else:
        samples = path.sample(dt=args.dt)
    cams = np.array([samples.pose(k)[:3] for k in range(len(samples))], dtype=np.float64)
    f_path = len(cams)

    t0 = time.perf_counter()
    index = make_index(args.index, state.centres.copy(), state.radii.copy())
    build_s = time.perf_counter() - t0
    tracker = VisibilityTracker(scene.n, *args.hysteresis)
    margin, relative = args.hysteresis
    out = np.empty(4096, dtype=np.int64)
    node_count = lambda: getattr(index, "node_count", None)  # noqa: E731

    settle()  # the setup's objects out of the collector's scans: no frame pays for walking them
    rss0, nb0 = rss_bytes(), index.nbytes()
    say(f"{scene.name}: {scene.n} objects, {state.m} moving; index {args.index} built in {build_s:.2f} s; "
        f"{args.frames} frames at dt {args.dt:.4g} s, path {f_path} frames (looped back and forth); "
        f"check every {args.check_every}, hysteresis {tracker.hysteresis}")
    say(f"frame 0: RSS {_mib(rss0)}  index {_mib(nb0)}" + (f"  nodes {node_count()}" if node_count() else ""))
    checked = 0
    mismatches: list[str] = []
    total_visible = 0
    frame_times = np.empty(args.frames)  # preallocated: the soak's own bookkeeping must not grow RSS
    start = time.perf_counter()
    done = 0
    stop = _CtrlC()  # the first Ctrl-C ends the loop after its frame; the summary below still runs
    with FrameCollector() as frames_gc:  # no collection inside a timed frame (viewer.timing.heap)
        try:
            for f in range(args.frames):
                frames_gc.between_frames()
                if stop.requested:
                    break
                if args.time_limit and f % 256 == 0 and time.perf_counter() - start > args.time_limit:
                    break
                period = 2 * f_path - 2 if f_path > 1 else 1
                j = f % period
                p = cams[j if j < f_path else period - j]  # back and forth: no jump at the end of the path
                t_f = time.perf_counter()
                ids, c, r = advance(state, args.dt)
                index.move_many(ids, c, r)
                while True:
                    try:
                        k = index.query_into(p, out)
                        break
                    except QueryOverflow as exc:
                        out = np.empty(max(exc.needed, 2 * out.size), dtype=np.int64)
                tracker.update(out, k, p, state.centres, state.radii)
                frame_times[f] = time.perf_counter() - t_f
                total_visible += k
                done = f + 1
                if f % args.check_every == 0:
                    checked += 1
                    exact = brute_query(state.centres, state.radii, p)
                    got = np.sort(out[:k])
                    inside = np.sort(tracker.inside())
                    problem = None
                    if not np.array_equal(got, exact):
                        problem = (f"query gave {k} ids, brute force {exact.size} "
                                   f"(missing {np.setdiff1d(exact, got)[:5].tolist()}, "
                                   f"extra {np.setdiff1d(got, exact)[:5].tolist()})")
                    elif margin == 0.0 and not np.array_equal(inside, exact):
                        problem = f"events' in-set ({inside.size}) differs from the visible set ({exact.size})"
                    elif margin > 0.0:
                        extra = np.setdiff1d(inside, exact)
                        d = np.asarray(p) - state.centres[extra]
                        d2 = (d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]) + d[:, 2] * d[:, 2]
                        rr = state.radii[extra]
                        big = rr * (1.0 + margin) if relative else rr + margin
                        if np.setdiff1d(exact, inside).size or (d2 > big * big).any():
                            problem = "events' in-set breaks the hysteresis rule"
                    if problem:
                        mismatches.append(f"frame {f}: {problem}")
                        if len(mismatches) <= 5:
                            print(f"viewer soak: MISMATCH {mismatches[-1]}", file=sys.stderr)
                if (f + 1) % args.report_every == 0:
                    el = time.perf_counter() - start
                    say(f"frame {f + 1}: RSS {_mib(rss_bytes())}  index {_mib(index.nbytes())}"
                        + (f"  nodes {node_count()}" if node_count() else "")
                        + f"  checked {checked}  mismatches {len(mismatches)}  {(f + 1) / el:.0f} frames/s")
        finally:
            stop.restore()
    interrupted = stop.requested
    elapsed = time.perf_counter() - start
    rss1, nb1 = rss_bytes(), index.nbytes()
    ft = frame_times[:done] * 1e3
    med = float(np.median(ft)) if ft.size else float("nan")
    p99 = float(np.percentile(ft, 99)) if ft.size else float("nan")
    print(f"soak {scene.name} ({scene.n} objects, {state.m} moving) index {args.index}: {done} frames in "
          f"{elapsed:.1f} s (median frame {med:.3f} ms, p99 {p99:.3f} ms); checked {checked} frames against "
          f"brute force, {len(mismatches)} mismatches; events entered {tracker.total_entered} left "
          f"{tracker.total_left} (hysteresis {tracker.hysteresis}); mean visible {total_visible / max(done, 1):.1f}")
    print(f"memory: RSS {_mib(rss0)} -> {_mib(rss1)} ({(rss1 - rss0) / 2**20:+.1f} MiB); index nbytes "
          f"{_mib(nb0)} -> {_mib(nb1)} ({nb1 - nb0:+d} bytes)"
          + (f"; nodes {node_count()}" if node_count() else ""))
    print(machine_line(machine()))  # the frame times above are this CPU's
    if interrupted:
        print(f"interrupted by Ctrl-C after {done} of {args.frames} frames: the figures above are of those frames")
    if node_count():
        fresh = make_index(args.index, state.centres.copy(), state.radii.copy())
        print(f"nodes: {node_count()} live after {done} frames; a fresh build of the world as it is now has "
              f"{fresh.node_count} (the difference is what moves left behind, not a leak, when it stays bounded)")
        del fresh
    check = getattr(index, "check", None)
    if callable(check):
        try:
            check()
        except Exception as exc:  # an invariant of the index broke: a failure like a mismatch
            mismatches.append(f"index check: {exc}")
            print(f"viewer soak: index check failed: {exc}", file=sys.stderr)
    if mismatches:
        return 1
    if interrupted:
        print("viewer soak: interrupted", file=sys.stderr)
        return 130
    return 0


class _CtrlC:
    """While it is installed (made in the main thread, SIGINT at Python's default handler), the first Ctrl-C
    only sets :attr:`requested` (the frame loop stops at the end of its frame, leaving the index whole);
    a second one raises ``KeyboardInterrupt`` at once. :meth:`restore` puts the previous handler back."""

    def __init__(self) -> None:
        self.requested = False
        self._previous = None
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self._previous = signal.signal(signal.SIGINT, self._on_sigint)

    def _on_sigint(self, signum, frame) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    def restore(self) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None
