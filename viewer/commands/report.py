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
    import sys

    from ..errors import UserError
    from ..files.output import atomic_file, check_output_file, refuse_replacing
    from ..pages import build_report, headline_markdown, read_inputs

    if args.markdown:
        if args.out:
            raise UserError("--markdown prints the table on standard output: leave out -o/--out")
        inputs = read_inputs(args.inputs)
        if len(inputs.benches) != 1 or inputs.recordings or inputs.sweeps:
            raise UserError(f"--markdown takes one bench run (its directory or bench.json), got {len(args.inputs)} "
                            f"input(s) with {len(inputs.benches)} bench run(s)")
        sys.stdout.write(headline_markdown(inputs.benches[0]))
        return 0
    if not args.out:
        raise UserError("-o/--out REPORT.html: name the page to write (or pass --markdown)")
    out = check_output_file(args.out, "-o", (".html", ".htm"))
    refuse_replacing([out], f"-o {out}", "viewer report", args.force)
    print(f"reading {len(args.inputs)} input(s)", file=sys.stderr)
    inputs = read_inputs(args.inputs)
    print(f"drawing {len(inputs.recordings)} recording(s), {len(inputs.benches)} bench run(s), "
          f"{len(inputs.sweeps)} sweep(s)", file=sys.stderr)
    text = build_report(inputs, args.title)
    with atomic_file(out, text=True, encoding="utf-8") as fh:
        fh.write(text)
    print(f"wrote {out} ({len(text.encode()) / 1e6:.1f} MB, opens offline)", file=sys.stderr)
    return 0
