"""``viewer record SCENE -o DIR``: replay a camera path headless and record one CSV per index."""

from __future__ import annotations

import argparse
import hashlib
import os
from pathlib import Path

import numpy as np

from ..errors import UserError
from ..frame.options import DRAW_MODES
from ..index.specs import label_stem
from . import _args

HELP = "replay a camera path headless, recording per-frame timings (one CSV per index)"

#: frames of the default recording of a generated path (a demo: the whole flight at a larger step; --full: every
#: frame at 1/60 s): few enough that a first run, compiling included, stays short on a 2-core machine.
DEMO_FRAMES = 1800

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
    from ..paths import GENERATED

    p = subparsers.add_parser("record", help=HELP, description=DESCRIPTION,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scene", metavar="SCENE", help=_args.SCENE_HELP)
    _args.add_import_options(p)
    src = p.add_mutually_exclusive_group()
    src.add_argument("--path", type=_args.name, metavar="PATH", help="a camera path file (.toml or .json) to replay")
    src.add_argument("--generated", choices=GENERATED, default="flythrough",
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
    p.add_argument("--draw", choices=DRAW_MODES, default="sprites",
                   help="how objects are drawn (default: %(default)s)")
    p.add_argument("--speed", type=_args.positive_float, metavar="UNITS_PER_S",
                   help="camera speed of a generated path, world units per second (default: world size / 10)")
    p.add_argument("--save-path", type=_args.name, metavar="FILE",
                   help="also write the path replayed to FILE (TOML), e.g. to edit a generated path by hand")
    p.add_argument("--hysteresis", type=_args.margin, default=(0.0, False), metavar="MARGIN",
                   help="visibility events leave only beyond r + MARGIN world units, or r * (1 + P/100) for 'P%%' "
                        "(default 0: leave as soon as out of view distance)")
    p.add_argument("--views", type=_views, default=1, metavar="K",
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


def _views(text: str) -> int:
    from ..frame.views import MAX_VIEWS

    try:
        v = int(text)
    except ValueError:
        v = 0
    if not 1 <= v <= MAX_VIEWS:
        raise argparse.ArgumentTypeError(f"views are a whole number 1..{MAX_VIEWS}, got {text!r}")
    return v


def view_samples(cam_path, samples, k: int) -> list:
    """The poses of views 1..k-1 beside ``samples`` (view 0's, on ``cam_path``): view j flies the same path
    j/k of its duration ahead, wrapping round to its start (:class:`viewer.paths.PoseSamples` each)."""
    from ..paths import PoseSamples

    out = []
    span = float(cam_path.duration)
    for j in range(1, k):
        t = np.mod(samples.t + j * span / k, span) if span > 0 else samples.t.copy()
        pos, yaw, pitch = cam_path.evaluate(cam_path.start + t)
        out.append(PoseSamples(samples.t.copy(), samples.dt, pos, yaw, pitch))
    return out


def _check_not_recording(out: Path, names) -> None:
    """Refuse early when another run is writing one of this run's CSVs (the recorder's lock is what
    guarantees it; this says so before the scene loads)."""
    from ..recording.writer import check_not_in_use

    for name in names:
        check_not_in_use(out / f"{label_stem(name)}.csv")


def _check_no_recording(out: Path, names) -> None:
    """Refuse when ``out`` already holds a recording (CSV or metadata, or a link by either name) of one of
    the indexes ``names``: a run is replaced only with ``--force``."""
    from ..recording.meta import describe_scene, meta_path_for, read_meta

    found = [(out / f"{label_stem(n)}.csv", f) for n in names
             for f in (out / f"{label_stem(n)}.csv", meta_path_for(out / f"{label_stem(n)}.csv"))
             if os.path.lexists(f)]
    if not found:
        return
    csv, first = found[0]
    what = ""
    try:
        scene = describe_scene(read_meta(csv) or {})
        what = f", a recording of {scene}" if scene else ""
    except (UserError, OSError):  # a damaged file is still a file not to overwrite; it only goes unnamed
        pass
    others = len({c for c, _ in found}) - 1
    more = f", as do the recordings of {others} more of these indexes" if others else ""
    link = " (a symbolic link)" if first.is_symlink() else ""
    raise UserError(f"-o {out}: {first} exists already{link}{what}{more}; record into another directory, or pass "
                    f"--force to replace {'them' if others else 'it'}")


def _warn_if_take_of_another_scene(path_file: str, scene) -> None:
    """Warn (stderr) when ``path_file`` is a window take's path (``take-N.path.toml`` beside its
    ``take-N.meta.json``) flown in another scene than ``scene``: its poses would not see what the take saw."""
    import sys

    from ..recording.meta import describe_scene, read_meta, same_scene, scene_meta

    p = Path(path_file)
    if not p.name.endswith(".path.toml"):
        return
    csv = p.with_name(p.name.removesuffix(".path.toml") + ".csv")
    try:
        meta = read_meta(csv)
    except UserError:
        return
    if not meta or not isinstance(meta.get("scene"), dict):
        return
    here = {"scene": scene_meta(scene)}
    if same_scene(meta, here) is False:
        print(f"viewer record: warning: --path {p} is the path of a take flown in {describe_scene(meta)} "
              f"({csv.with_suffix('.meta.json').name}); this replay is of {describe_scene(here)}: its frames "
              "will not see what the take saw", file=sys.stderr)


def run(args) -> int:
    """``viewer record``: the recording, inside the warm-up scope :func:`viewer.drivers.warm.warm_kernels`
    opens (the indexes built while it is open compile only what the recording runs)."""
    from contextlib import ExitStack

    with ExitStack() as scopes:
        return _record(args, scopes)


def _record(args, scopes) -> int:
    import sys

    from ..drivers.frames import planned_frames
    from ..drivers.replay import check_indexes, replay
    from ..drivers.warm import default_indexes, warm_kernels
    from ..files.output import TEMP_NAME_ROOM, check_name_lengths, check_output_file, prepare_out_dir
    from ..paths import FRAME_DT, generated_path, load_path, probe_index, save_path
    from ..scenes.loading import open_scene_shown

    # every input checked before anything is written
    if args.path and args.speed is not None:
        raise UserError("--speed paces a generated path; --path FILE keeps its own times, so it would be ignored")
    names = args.indexes or default_indexes("scan", "octree")
    names = check_indexes(names)
    cam_path = load_path(args.path) if args.path else None
    out = prepare_out_dir(args.out, create=False, what="-o")  # created once the scene has loaded
    # --save-path into the recording's own new directory (-o NEW --save-path NEW/path.toml): made before the save
    save_in_out = bool(args.save_path) and not out.exists() and Path(args.save_path).parent == out
    if save_in_out:
        check_name_lengths(args.save_path, "--save-path", room=TEMP_NAME_ROOM)
    elif args.save_path:
        check_output_file(args.save_path, "--save-path")
        if os.path.lexists(args.save_path) and not args.force:  # a path file is meant to be edited by hand
            raise UserError(f"--save-path {args.save_path}: exists already (a camera path, maybe edited by hand); "
                            "choose another name, or pass --force to replace it")
    if args.trace:
        _check_trace_file(args.trace, out, args.force)
    _check_not_recording(out, names)
    if not args.force:
        _check_no_recording(out, names)

    scene = open_scene_shown(args.scene, _args.import_options(args), quiet=args.quiet)
    if args.path:
        _warn_if_take_of_another_scene(args.path, scene)
        if scene.motion is not None:  # a take's damaged world refused before a kernel compiles or --save-path writes
            from ..recording.takes import read_take_world

            read_take_world(args.path)
    # compiled before anything is timed: the recorded indexes' build and query, query_many for views > 1,
    # move_many in a moving world; the probe's for a generated path (viewer.paths.probe_index)
    points = ["build", "query"] + (["query_many"] if args.views > 1 else []) + (["move_many"] if scene.moves else [])
    warm_kernels(scene, names, points, scopes=scopes, probe=cam_path is None, quiet=args.quiet)
    if cam_path is None:
        try:
            cam_path = generated_path(scene, args.generated, speed=args.speed, aspect=args.size[0] / args.size[1],
                                      index=probe_index(names))
        except ValueError as exc:  # e.g. a speed so low that the path's times overflow
            raise UserError(f"--speed {args.speed}: no usable path at this speed: {exc}") from None
        path_meta = {"name": cam_path.name, "generated": args.generated, "speed": args.speed}
        what = f"the generated path at --speed {args.speed:g}" if args.speed else "the generated path"
    else:
        path_meta = {"name": cam_path.name, "source": str(Path(args.path)),
                     "sha256": hashlib.sha256(Path(args.path).read_bytes()).hexdigest()}
        what = f"--path {args.path}"
    planned_frames(cam_path.duration, args.frames, args.dt or FRAME_DT, what)
    full = None  # frames of the full recording, when this one is the demo
    if args.frames is None and args.dt is None:
        samples = cam_path.sample(dt=FRAME_DT)
        if args.path is None and not args.full and len(samples) > DEMO_FRAMES:
            full, samples = len(samples), cam_path.sample(frames=DEMO_FRAMES)
    else:
        samples = cam_path.sample(frames=args.frames, dt=args.dt)
    path_meta.update(keyframes=len(cam_path), duration_s=cam_path.duration, frames=len(samples), dt=samples.dt)
    if args.save_path:
        if save_in_out:
            prepare_out_dir(out, what="-o")
        save_path(cam_path, args.save_path)
    if not args.quiet:
        moving = "" if scene.motion is None else f" ({scene.motion.m} moving)"
        demo = "" if full is None else f" (a demo: the whole flight; --full records all {full} at 1/60 s)"
        print(f"{scene.name}: {len(scene.centres)} objects{moving}; path {cam_path.name}: {len(samples)} frames, "
              f"dt {samples.dt:.4g} s{demo}; indexes {', '.join(names)}; {args.size[0]}x{args.size[1]}", file=sys.stderr)
    views = view_samples(cam_path, samples, args.views) if args.views > 1 else None
    if views:
        path_meta["views"] = {"count": args.views, "ahead_s": [j * cam_path.duration / args.views
                                                               for j in range(args.views)]}
    trace = None
    if args.trace:
        from ..recording.trace import TraceWriter

        trace = TraceWriter(args.trace, {"scene": scene.name, "indexes": names, "path": cam_path.name})
    csvs = replay(scene, samples, names, out, size=args.size, draw=args.draw, path_meta=path_meta,
                  progress=not args.quiet, hysteresis=args.hysteresis, overwrite=args.force,
                  take_dt=args.frames is None and args.dt is None,  # a moving world's take: its own dt
                  views=views, trace=trace, gpu_time=args.gpu_time)
    print(drawing_share(csvs))
    if trace is not None:
        trace.close()
        print(f"wrote {trace.path}: {trace.frames} frames' stage spans as Chrome Trace Event JSON (open it in Perfetto)")
    return 0


def _check_trace_file(trace: str, out: Path, force: bool) -> None:
    """Refuse a ``--trace`` file that cannot be written, one inside ``-o`` named like a recording, or one that
    exists already (without ``--force``): a trace of an earlier run is a measurement, replaced only when asked."""
    from ..files.output import check_output_file

    p = Path(trace)
    if p.suffix.lower() == ".csv" or p.name.endswith(".meta.json"):
        raise UserError(f"--trace {trace}: a trace is a .json file of its own, not a recording's .csv or .meta.json")
    if not out.exists() and p.parent.resolve() == out.resolve():
        return  # into the recording's new directory, made before anything is written there
    check_output_file(trace, "--trace")
    if os.path.lexists(trace) and not force:
        raise UserError(f"--trace {trace}: exists already; choose another name, or pass --force to replace it")


def drawing_share(csvs: dict) -> str:
    """One line: the share of recorded frames that drew at least one object (per index when they differ)."""
    import numpy as np

    from ..recording import read_run

    shares = {}
    for name, path in csvs.items():
        drawn = np.asarray(read_run(path)["drawn"])
        shares[name] = (int((drawn > 0).sum()), int(drawn.size))
    if len(set(shares.values())) == 1:
        hit, n = next(iter(shares.values()))
        who = "every index" if len(shares) > 1 else next(iter(shares))
        return f"frames that draw something: {100.0 * hit / max(n, 1):.1f}% ({hit} of {n}; {who})"
    return "frames that draw something: " + ", ".join(
        f"{name} {100.0 * hit / max(n, 1):.1f}% ({hit} of {n})" for name, (hit, n) in shares.items())
