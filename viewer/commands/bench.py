"""``viewer bench``: time every index on generated workloads or scene files, against the multi-core linear
scan (``scan``) in the same run."""

from __future__ import annotations

import argparse
import datetime as _dt
import math
from pathlib import Path

from viewer.errors import UserError, once

from . import _args


def _shares(text: str) -> list[float]:
    """``0.01,0.1`` -> the shares of objects moving per frame, each in (0, 1], each once, in the order given;
    ``none`` -> [] (no dynamic workload)."""
    if text.strip().lower() == "none":
        return []
    try:
        vals = [float(p) for p in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"shares are fractions in (0, 1], e.g. 0.01,0.1, or 'none' to skip the dynamic workload; got {text!r}"
        ) from None
    bad = [p.strip() for p, v in zip(text.split(","), vals) if not 0 < v <= 1]
    if bad:
        raise argparse.ArgumentTypeError(
            f"shares must be in (0, 1] ('none' skips the dynamic workload), got {', '.join(bad)}")
    from viewer.bench.report import share_label

    out: dict[str, float] = {}
    for v in vals:
        if out.setdefault(share_label(v), v) != v:
            raise argparse.ArgumentTypeError(
                f"shares {out[share_label(v)]!r} and {v!r} are the same {share_label(v)}% to 6 digits")
    return list(dict.fromkeys(vals))


def _whole(lo: int, hi: int, hi_text: str, note: str = ""):
    """An argparse type: a whole number ``lo..hi`` (``hi_text``: hi as the message writes it), also written
    like ``1e4``; ``note`` ends the message of a number out of range."""
    def whole(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            try:
                f = float(text)
            except ValueError:
                f = math.nan
            if not (math.isfinite(f) and f == int(f)):
                raise argparse.ArgumentTypeError(
                    f"expected a whole number {lo}..{hi_text} (1e4 notation accepted), got {text!r}") from None
            v = int(f)
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"must be a whole number {lo}..{hi_text}{note}, got {text!r}")
        return v

    return whole


def add_parser(sub) -> None:
    from viewer.bench.checks import parse_seed, parse_sizes

    p = sub.add_parser(
        "bench",
        help="time the indexes on generated workloads or scene files against the multi-core linear scan",
        description=(
            "Build every index on generated scenes (heavy-tailed view radii: most 5..30, a few up to 1000, "
            "in a world 10,000 wide) or on scene files, then time queries from a camera path of a few hundred "
            "points (half through dense regions), interleaved across indexes so a noisy machine treats them "
            "alike. Every ratio is against the baseline 'scan' (a 16-bit SIMD linear scan on every core, "
            "exact by a float64 recheck), always measured, as is 'brute' (numpy, the tests' oracle). Prints "
            "per index: threads, build time in this process and the first build in a fresh process, query "
            "median and p95 (us), the speed-up over scan, the scan's read floor (the time to read its "
            "16-bit prefilter arrays once, same threads) and the ratio to it, the median of each query's ratio to "
            "its output floor (copying its visible objects' 32-byte records), mean visible, candidates per visible, "
            "nodes visited, memory per object, insert/remove/move throughput, and the per-frame cost with a share of the "
            "objects moving, after a line naming the machine (CPU, the target numba compiles for, caches). On a scene "
            "with visibility ranges (begin distances, LOD switches, HLOD parents: city-100k, city-1m), each row also "
            "has the query followed by the frame's range filter (median us, its speed-up over the scan's), the filter "
            "alone (median us), and at the camera points on average the objects in range, per LOD band (band0 .. "
            "band3) and the HLOD proxies among them; a scene without ranges has none of these columns. Writes "
            "bench.csv, bench.json (the machine, package versions, command, the run's settings and every row) and "
            "plots to --out. Before it starts it says how long the run will take and how much memory it will need "
            "(an estimate from a 20,000-object trial of every index on this machine). The printed table keeps the "
            "core columns that fit the terminal's width (--wide: every column); bench.csv has them all."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--scene", default="uniform,clustered,diagonal",
                   help="comma-separated workloads: scene generators (see 'viewer scene --help'), generated at "
                        "every --n; or scene files (.npz, .toml recipes, bundled recipe names such as "
                        "clustered-100k; or a .gltf, .glb, .ply, .csv, .tsv or .parquet file imported on the fly, "
                        "with the import options below), run once at their own N")
    _args.add_import_options(p)
    p.add_argument("--radius", default="default", metavar="MODELS",
                   help="';'-separated view-radius models, each a workload of its own: 'default' (heavy-tailed: "
                        "most 5..30, a few up to 1000), 'constant:value=20', 'log-uniform:min=1,max=5', "
                        "'heavy-tailed:...' (see 'viewer scene --help')")
    p.add_argument("--n", type=parse_sizes, default=[100_000, 1_000_000], metavar="SIZES",
                   help="comma-separated object counts, e.g. 1e4,1e5,1e6,1e7")
    p.add_argument("--index", metavar="SPECS",
                   help="indexes to compare (default: every registered one, then every installed plugin that loads): " + _args.INDEX_HELP
                        + "; e.g. 'octree;hashgrid:cell_size=64;hashgrid:cell_size=16'")
    p.add_argument("--queries", type=_whole(1, 10**6, "1e6"), default=300,
                   help="camera points per workload (1..1e6; 1e3 notation accepted)")
    p.add_argument("--rounds", type=_whole(1, 1000, "1000"), default=3,
                   help="passes over the camera points, each index's median taken over all of them")
    p.add_argument("--updates", type=_whole(0, 10**8, "1e8"), default=10_000, metavar="U",
                   help="update calls per index and workload of N objects (0..1e8; 1e4 notation accepted; 0 skips "
                        "them): min(U, N/2) objects (1 when N = 1) removed one call at a time, then inserted back: "
                        "never more than half the index, and the moves then run on all N objects; U move() calls, "
                        "cycling over min(U, N, 1e6) objects; 10*U objects moved by move_many() calls of up to "
                        "10,000 distinct objects. Every move changes where its object is, and each rate is the "
                        "calls actually made over their seconds (CSV: removes, inserts, moves, batch_moves and "
                        "their seconds)")
    p.add_argument("--dynamic", type=_shares, default=[0.01, 0.1], metavar="SHARES",
                   help="shares of objects moving every frame in the dynamic workload, each in (0, 1] ('none' "
                        "to skip); each share gets its columns (the frames' median, p99 and max: dynamic_<P>pct_ms, "
                        "dynamic_<P>pct_p99_ms, dynamic_<P>pct_max_ms; dynamic_<P>pct_x_scan) in "
                        "the table, bench.csv and bench.json")
    p.add_argument("--frames", type=_whole(1, 10**6, "1e6", " (--dynamic none skips the dynamic workload)"), default=100,
                   help="frames of the dynamic workload, each share's median, p99 and max taken over them (the first "
                        "frame is the first move since the build; --dynamic none skips the dynamic workload)")
    p.add_argument("--drift", type=_args.positive_float, default=1.0, metavar="UNITS",
                   help="how far a mover of the dynamic workload drifts a frame: each axis's standard deviation, "
                        "world units (default 1; a mover at 20 units/s drifts 0.33 a frame at 60 fps)")
    p.add_argument("--seed", type=parse_seed, default=0, help="random seed, 0..2**63-1 (as scene recipes take)")
    p.add_argument("--out", type=_args.directory, default=None,
                   help="directory for bench.csv and plots (default runs/bench-YYYYmmdd-HHMMSS)")
    p.add_argument("--no-plots", action="store_true", help="write the CSV only")
    p.add_argument("--force", action="store_true", help="replace a bench already in --out (refused without it)")
    p.add_argument("--wide", action="store_true",
                   help="print every column of the table (default: the core columns that fit the terminal's "
                        "width; bench.csv always has every column)")
    p.add_argument("--no-first-build", action="store_true",
                   help="skip timing each index's first build in a fresh process (one subprocess per index "
                        "and workload)")
    p.set_defaults(func=run)


def run(args) -> int:
    from viewer.bench.checks import check_drift, check_indexes, check_workloads, default_indexes
    from viewer.bench.run import BenchConfig, parse_radius_spec
    from viewer.bench.runner import bench_and_write

    scenes = [s.strip() for s in args.scene.split(",") if s.strip()]
    options = _args.import_options(args)
    check_workloads(scenes, args.n, options)
    check_drift(args.drift, args.frames)
    specs = check_indexes(default_indexes() if args.index is None else args.index)  # each checked (built small) before the memory estimate and any workload
    models = [t.strip() for t in args.radius.split(";") if t.strip()]
    radii = [parse_radius_spec(t) for t in models]
    if not radii:
        raise UserError(f"--radius {args.radius!r} names no radius model (write 'default' for the default)")
    once(zip(models, radii), "--radius", key=lambda m: m[1] and tuple(sorted(m[1].items())),
         show=lambda m: m[0])  # the same model however written (20 or 20.0)
    out = args.out or Path("runs") / _dt.datetime.now().strftime("bench-%Y%m%d-%H%M%S")
    cfg = BenchConfig(scenes, args.n, specs, args.queries, args.updates, args.dynamic, args.frames, args.seed,
                      radii, first_build=not args.no_first_build, rounds=args.rounds, estimate=True,
                      import_options={k: v for k, v in options.items() if v is not None}, drift=args.drift)
    config = {"scenes": scenes, "sizes": args.n, "indexes": [s.label for s in specs], "queries": args.queries,
              "rounds": args.rounds, "updates": args.updates, "dynamic": None, "frames": args.frames,
              "drift": args.drift, "seed": args.seed}
    return bench_and_write(cfg, out, config=config, force=args.force, wide=args.wide, plots=not args.no_plots)
