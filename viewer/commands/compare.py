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
    p.add_argument("runs", nargs="+", metavar="RUN.csv",
                   help="recordings (the reference is the first scan run, else the first); or two bench runs, A then "
                        "B (their directories or bench.json files); or two sweeps (directories or sweep.csv)")
    p.add_argument("--format", choices=("text", "markdown", "csv"), default="text",
                   help="table format (default: %(default)s)")
    p.add_argument("--stages-only", action="store_true", help="leave out the count columns")
    p.add_argument("--fail-if", action="append", metavar="METRIC:PCT%",
                   help="exit 1 when B is significantly slower than A by more than PCT (Mann-Whitney U p < 0.05 and "
                        "a 95%% bootstrap interval of the ratio of medians leaving out 1): METRIC is query, frame or "
                        "move for bench runs, query_ms for recordings (each against the first); repeatable")
    p.set_defaults(func=run)
    return p


def run(args) -> int:
    from ..bench.compare_runs import METRICS, compare_bench, is_bench, parse_fail_if
    from ..errors import UserError
    from ..reports.compare import gate_recordings, run_compare

    from ..results.sweeps import compare_sweeps, is_sweep

    gates = [parse_fail_if(t) for t in args.fail_if or []]
    sweeps = [is_sweep(p) for p in args.runs]
    if any(sweeps):
        if not all(sweeps):
            raise UserError("compare takes recordings, two bench runs or two sweeps, not a mix: "
                            f"{', '.join(str(p) for p, w in zip(args.runs, sweeps) if not w)} is not a sweep")
        return compare_sweeps(args.runs, gates)
    benches = [is_bench(p) for p in args.runs]
    if any(benches):
        if not all(benches):
            raise UserError("compare takes recordings, or two bench runs, not both: "
                            f"{', '.join(str(p) for p, b in zip(args.runs, benches) if not b)} is not a bench run")
        wrong = [m for m, _ in gates if m not in METRICS]
        if wrong:
            raise UserError(f"--fail-if {wrong[0]}: bench runs compare {', '.join(METRICS)}")
        return compare_bench(args.runs, gates)
    if any(m != "query_ms" for m, _ in gates):
        raise UserError("--fail-if: recordings gate on query_ms (e.g. query_ms:10%)")
    status = run_compare(args.runs, args.format, args.stages_only)
    return max(status, gate_recordings(args.runs, gates)) if gates else status
