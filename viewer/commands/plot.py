"""``viewer plot RUN.csv [RUN2.csv ...] -o fig.png``: a figure of one or more recordings."""

from __future__ import annotations

import argparse

HELP = "draw recordings: stage times over the path, object counts, per-stage distributions"

DESCRIPTION = """\
Draw one or more recordings (CSV files written by 'viewer record' or 'viewer view --record') into
one image: each stage's time over the path, the candidate / visible / drawn counts (with a scene's LOD
bands or HLOD, schema version 6: also the drawn objects per band and the drawn proxies), and a
per-stage distribution. Runs are overlaid and labelled from their metadata files; a run without rows
is left out with a warning, a run that ended early (a signal, a crash) gets one and "(ended early)" in
the legend, and a legend of more runs than its cell holds ends in "+N more runs".
Beside the legend, context lines from the metadata: the scene, N, the window, the machine (host, CPU)
and the GL renderer the runs were timed on, the path and the date. A run of one frame is drawn as dots.

-o names an image file; '-o -' (standard output) is refused: give a file name. The output is checked
before any recording is read.
"""


def _pixels(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of pixels, got {text!r}") from None
    if not 200 <= v <= 10000:
        raise argparse.ArgumentTypeError(f"must be between 200 and 10000 pixels, got {v}")
    return v


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("plot", help=HELP, description=DESCRIPTION,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", metavar="RUN.csv", help="recordings to draw (the first sets the colours' order)")
    p.add_argument("-o", "--out", required=True, metavar="FILE",
                   help="image file to write (.png, .svg, .pdf, ...); not '-': no image goes to standard output")
    p.add_argument("--width", type=_pixels, default=1600, help="image width in pixels (default %(default)s)")
    p.add_argument("--height", type=_pixels, default=1500, help="image height in pixels (default %(default)s)")
    p.add_argument("--title", help="figure title (default: the scene and the number of runs and frames)")
    p.set_defaults(func=run)
    return p


def run(args) -> int:
    from ..reports.plot import run_plot

    return run_plot(args.runs, args.out, width=args.width, height=args.height, title=args.title)
