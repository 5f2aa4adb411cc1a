"""``viewer compare RUN.csv ...``: median / p95 / max per stage and per run, each run's speed-up over the scan
run (else the first), the reference named and a sentence of verdict per run."""

from __future__ import annotations

import argparse

HELP = ("tabulate recordings: median / p95 / max per stage and run, each run's speed-up over the scan run (else "
        "the first), and what it found in words")

DESCRIPTION = """\
For every stage time (ms) and count column, print the median, 95th percentile and maximum over the
frames of each run, and each run's speed-up over the reference run: the reference's figure over the
run's, as 'viewer bench' prints 'x scan' (columns 'x faster' median / p95 / max; above 1 the run is faster,
or counts fewer objects; '-' where the run's value or the reference's is 0, e.g. the nodes an index
visits against the scan's none), to three significant digits. The reference is
the first run of the 'scan' index (the multi-core linear scan, the baseline of every ratio the viewer
prints) when there is one, else the first run. Percentiles interpolate linearly between frames (numpy's
default). Recordings of a scene with LOD bands or HLOD (schema version 6) also get the band columns:
band0 .. band3 (drawn objects per LOD band), band_changes and proxies (drawn HLOD proxies), when every
run has them and some run's differ from what 'drawn' says; older recordings compare as before.

The table starts with a line naming the reference, then one naming the machine (host, CPU, logical
CPUs) and the GL renderer the runs' metadata say their times were taken on, and ends with one sentence
per other run: how much faster it answers queries, the candidates it tests, how much faster its whole
frame is, and the stage that takes most of that frame (naming the GL renderer of the runs' metadata,
e.g. llvmpipe). With --format markdown or csv, standard output holds the table alone and those lines
go to stderr.

Warnings go to stderr: when the runs' metadata name different scenes or camera paths (their figures
are then not like for like) or different machines (CPU) or GL renderers (their times are then not like
for like), when a moving world's runs from before schema version 7 sit beside later ones (update_ms held
the world's own step before), for each run that ended early (a signal, a crash: its metadata says how and
after how many frames), and for each run without rows (a take stopped before its first frame), which is
left out (the command fails only when no run has rows). Labels are printed with their control characters
escaped (\\x1b, \\n, \\x00, ...) in every format.
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
    from ..reports.compare import run_compare

    return run_compare(args.runs, args.format, args.stages_only)
