"""``viewer compare RUN.csv ...``: median / p95 / max per stage and per run, ratios against the scan run
(else the first)."""

from __future__ import annotations

import argparse

HELP = "tabulate recordings: median / p95 / max per stage and run, with ratios against the scan run (else the first)"

DESCRIPTION = """\
For every stage time (ms) and count column, print the median, 95th percentile and maximum over the
frames of each run, and the ratio of each to the reference run's (x median, x p95, x max; '-' where the
reference's value is 0). The reference is the first run of the 'scan' index (the multi-core linear
scan, the baseline of every ratio the viewer prints) when there is one, else the first run. Percentiles interpolate linearly between frames (numpy's default).
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("compare", help=HELP, description=DESCRIPTION,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", metavar="RUN.csv", help="recordings; the reference is the first scan run, else the first")
    p.add_argument("--format", choices=("text", "markdown", "csv"), default="text",
                   help="table format (default: %(default)s)")
    p.add_argument("--stages-only", action="store_true", help="leave out the count columns")
    p.set_defaults(func=run)
    return p


def run(args) -> int:
    import sys

    from ..reports.compare import compare_runs, format_table
    from ..recording.reader import read_runs
    from ..frame.stages import TIMED_COLUMNS

    runs = read_runs(args.runs)
    rows = compare_runs(runs, TIMED_COLUMNS) if args.stages_only else compare_runs(runs)
    sys.stdout.write(format_table(rows, args.format))
    return 0
