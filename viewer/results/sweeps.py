"""Two sweeps compared (``viewer compare A B`` where A and B are sweep directories or their ``sweep.csv``): rows
paired by task and index, each ratio B / A of the median query time, with warnings where machines, commits or
the tasks differ. A sweep keeps medians, not raw samples: the ratios are untested, said so, and ``--fail-if``
finds no significant slowdown (it cannot), said so too.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

from ..errors import UserError
from . import load

__all__ = ["compare_sweeps", "is_sweep"]


def is_sweep(path: str | Path) -> bool:
    """Whether ``path`` is a sweep directory (holding sweep.csv) or a sweep.csv file."""
    p = Path(path)
    return (p / "sweep.csv").is_file() if p.is_dir() else p.name == "sweep.csv" and p.is_file()


def compare_sweeps(paths: list, fail_if: list[tuple[str, float]], out=None, err=None) -> int:
    """Print the comparison of two sweeps (A then B); returns 0 (without raw samples no slowdown is
    significant: ``fail_if`` says so)."""
    out, err = out or sys.stdout, err or sys.stderr
    if len(paths) != 2:
        raise UserError(f"comparing sweeps takes two (A, then B), got {len(paths)}")
    a, b = (load(p) for p in paths)
    pa, pb = a.provenance, b.provenance
    if pa.get("machine") != pb.get("machine"):
        print(f"warning: the sweeps were timed on different machines ({pa.get('machine')} / {pb.get('machine')})",
              file=err)
    if pa.get("commit") != pb.get("commit"):
        print(f"warning: the sweeps come from different commits ({pa.get('commit') or 'unknown'} / "
              f"{pb.get('commit') or 'unknown'})", file=err)
    ra = {(r.get("task"), r.get("index")): r for r in a.rows if r.get("status", "ok") == "ok"}
    rb = {(r.get("task"), r.get("index")): r for r in b.rows if r.get("status", "ok") == "ok"}
    pairs = [k for k in ra if k in rb]
    if not pairs:
        raise UserError(f"{paths[0]} and {paths[1]} share no (task, index) row to compare")
    if len(pairs) < max(len(ra), len(rb)):
        print(f"warning: {max(len(ra), len(rb)) - len(pairs)} row(s) are in one sweep only: left out", file=err)
    print(f"B = {paths[1]} against A = {paths[0]}: ratios of median query times (a sweep keeps no raw samples: "
          "untested)", file=out)
    head = f"{'task':<14} {'workload':<20} {'index':<14} {'A us':>10} {'B us':>10} {'B/A':>7}"
    print(head, file=out)
    print("-" * len(head), file=out)
    for key in pairs:
        va, vb = ra[key].get("query_median_us"), rb[key].get("query_median_us")
        ratio = vb / va if isinstance(va, (int, float)) and isinstance(vb, (int, float)) and va else math.nan
        print(f"{key[0]!s:<14} {ra[key].get('workload', '')!s:<20} {key[1]!s:<14} {_num(va):>10} {_num(vb):>10} "
              f"{ratio:>7.3f}", file=out)
    if fail_if:
        gates = ", ".join(f"{m}:{100 * p:g}%" for m, p in fail_if)
        print(f"--fail-if {gates}: no significant slowdown can be found without raw samples (sweeps keep medians); "
              "compare bench runs for a test", file=out)
    return 0


def _num(v) -> str:
    return f"{v:.4g}" if isinstance(v, (int, float)) and math.isfinite(v) else "-"
