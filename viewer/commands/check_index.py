"""``viewer check-index SPEC``: run the conformance kit (:mod:`viewer.index.conformance`) on one index and print
one line per property, pass or fail, with its time; for a failure, the smallest counter-example found and how to
replay it. Exit 0 when every property holds, 1 when any fails, 2 when the spec does not load."""

from __future__ import annotations

import argparse

from . import _args

HELP = "check that an index (yours or a built-in one) answers exactly as the contract says: one line per property"

#: the most hypothesis examples --examples takes (a run of that many takes hours on the state machine)
MAX_EXAMPLES = 100_000

DESCRIPTION = """\
Run the conformance kit on the index SPEC names: the contract's cases (answers equal brute force's on seeded
worlds; points exactly on sphere surfaces and one ulp either side; empty worlds, coincident objects, radii 0,
far points; query_into and query_many_into overflow; query_many against single queries; bad input refused with
the right error type, changing nothing), move_many's cases, a hypothesis state machine of inserts, removes,
moves and batch moves against brute force, and the numeric domain (every magnitude from 1e-300 to 2**100,
values outside refused). One line per property, pass or FAIL and its time; under a failure, the smallest
counter-example found (a Python snippet building the index over the fewest objects that still answer wrongly,
or hypothesis's shrunk steps) and the command that replays it.

SPEC is what --index takes in every command: a registered name (octree), an installed plugin's name (entry
point group viewdist_testbed.indexes), package.module:Class, or path/to/file.py:Class (this loads the file by
path and RUNS ITS CODE, as pytest runs a conftest.py), each optionally followed by :key=value,... options passed
to every build (octree:max_depth=8, ./my_index.py:MyIndex:leaf=16).

Exit status: 0 every property holds, 1 at least one fails, 2 the spec does not load (or a flag is wrong).
The same kit runs from pytest: see 'python -m pydoc viewer.index.conformance'.
"""


_examples = _args.positive_int_at_most(MAX_EXAMPLES, "examples", f"{MAX_EXAMPLES:,}")


def add_parser(subparsers) -> argparse.ArgumentParser:
    from ..bench.checks import parse_seed

    p = subparsers.add_parser("check-index", help=HELP, description=DESCRIPTION,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("spec", metavar="SPEC", help="the index: a name, plugin name, package.module:Class or "
                                                "path/to/file.py:Class (runs that file), with :key=value options")
    p.add_argument("--examples", type=_examples, metavar="N",
                   help="hypothesis examples for each randomised property (default: 40 sequences of the state "
                        "machine, 60 draws of the domain fuzz); more finds rarer faults, slower")
    p.add_argument("--seed", type=parse_seed, metavar="S",
                   help="the seed of every random draw, so a run repeats (default: the kit's own, named on the "
                        "first line)")
    p.add_argument("--only", metavar="PROPERTY",
                   help="run only this property, or a family's cases (bad_batch_changes_nothing); a failure's "
                        "replay line gives it")
    p.set_defaults(func=run)
    return p


def run(args) -> int:
    from ..drivers.conformance import run_conformance

    return run_conformance(args.spec, seed=args.seed, examples=args.examples, only=args.only)
