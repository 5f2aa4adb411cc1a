"""``viewer report INPUTS... -o report.html``: one self-contained page from recordings, bench runs and sweeps;
``--markdown``: the README's headline table from a bench run, on standard output."""

from __future__ import annotations

import argparse

HELP = ("one HTML page from recordings, bench runs and sweeps (opens offline); or a bench run's headline table in "
        "markdown")

DESCRIPTION = """\
INPUTS are recordings (RUN.csv, its RUN.meta.json beside it), bench runs (their directories or bench.json,
with bench_samples.parquet beside it for the distributions) and sweep results (a sweep's CSV), in any mix.

The page holds the sentences 'viewer compare' and 'viewer bench' print (two bench runs: their comparison),
sortable tables (click a header; open the page with ?sort=KEY, e.g. ?sort=query_median_us, to start sorted,
&desc reversed), each recording's stage times frame by frame (drag to zoom, hover for values, click a legend
entry to hide a line), the distribution of every timed query per index and workload (from the raw samples),
trade-offs with each workload's Pareto front circled (query time against bytes an object, update cost against
query time) and the machine and provenance of every input. Every script and style is inside the one file
(plotly's JavaScript embedded): it opens offline, and a page is written whole or not at all.

--markdown prints the headline table of one bench run instead (query medians at its largest size with the
default radii, speed-ups over the scan), the README's table:
  viewer report --markdown viewer/bench/results/baseline-1e5-1e6.json
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("report", help=HELP, description=DESCRIPTION,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="recordings (RUN.csv), bench runs (directory or bench.json) and sweeps (their CSV)")
    p.add_argument("-o", "--out", metavar="REPORT.html", help="the page to write (required unless --markdown)")
    p.add_argument("--markdown", action="store_true",
                   help="print one bench run's headline table in markdown on standard output instead")
    p.add_argument("--force", action="store_true", help="replace REPORT.html when it exists")
    p.add_argument("--title", default="viewdist report", help="the page's title (default: %(default)s)")
    p.set_defaults(func=run)
    return p


def run(args) -> int:
    from ..pages.run import run_report

    return run_report(args.inputs, args.out, markdown=args.markdown, force=args.force, title=args.title)
