"""Two bench runs compared (``viewer compare A B`` where A and B are bench directories or their ``bench.json``):
their rows paired by workload and index, each ratio B / A of the median with a 95% interval and a Mann-Whitney
U test from the raw samples (:mod:`viewer.bench.samples`, :mod:`viewer.timing.significance`), "no significant
difference" said plainly where there is none, warnings where machines, commits, worlds or options differ, and
``--fail-if METRIC:PCT`` gating a CI job on a significant slowdown beyond PCT.

Metrics: ``query`` (each timed query, us), ``frame`` and ``move`` (the moving frames and their ``move_many``, ms,
at each share measured). A bench.json of format version 1 (before raw samples) compares by its medians alone.
"""

from __future__ import annotations

import json
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import UserError
from .runner import FORMAT
from .samples import SAMPLES_FILE

__all__ = ["METRICS", "BenchRun", "compare_bench", "is_bench", "load_bench", "parse_fail_if"]

#: what can be compared: metric -> (the samples' kinds, the table's column of its median (share-templated))
METRICS = {"query": ("query", "query_median_us"), "frame": ("frame", "dynamic_{p}pct_ms"),
           "move": ("move", "dynamic_{p}pct_move_ms")}


@dataclass
class BenchRun:
    """A bench run read back: its directory or file, bench.json's content, and its raw samples by
    (workload, index, kind, share) (empty for a version 1 run)."""

    path: Path
    meta: dict
    samples: dict = field(default_factory=dict)

    @property
    def version(self) -> int:
        return int(self.meta.get("format_version", 1))

    def rows(self) -> dict[tuple[str, str], dict]:
        return {(r["workload"], r["index"]): r for r in self.meta.get("rows", [])}


def is_bench(path: str | Path) -> bool:
    """Whether ``path`` is a bench directory (holding bench.json) or a bench.json file."""
    p = Path(path)
    return (p / "bench.json").is_file() if p.is_dir() else p.suffix == ".json" and p.is_file()


def load_bench(path: str | Path) -> BenchRun:
    """Read a bench directory or bench.json (format version 1 or 2); :class:`UserError` naming the file for one
    that is not a bench's."""
    p = Path(path)
    file = p / "bench.json" if p.is_dir() else p
    try:
        meta = json.loads(file.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UserError(f"{file}: not a readable bench.json ({exc})") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("rows"), list) or meta.get("format", FORMAT) != FORMAT:
        raise UserError(f"{file}: not a bench.json (field 'format' or 'rows')")
    run = BenchRun(p, meta)
    sfile = file.parent / SAMPLES_FILE
    if run.version >= 2 and sfile.exists():
        from .samples import read_samples

        t = read_samples(sfile).to_pydict()
        groups: dict = {}
        for w, ix, kind, share, us in zip(t["workload"], t["index"], t["kind"], t["share"], t["us"]):
            groups.setdefault((w, ix, kind, None if share != share else share), []).append(us)
        run.samples = {k: np.asarray(v) for k, v in groups.items()}
    return run


def parse_fail_if(text: str) -> tuple[str, float]:
    """``query:10%`` -> ("query", 0.10); :class:`UserError` naming --fail-if otherwise."""
    m = re.fullmatch(r"\s*([a-z_]+)\s*:\s*([0-9]*\.?[0-9]+)\s*%\s*", text)
    if not m or m.group(1) not in {*METRICS, "query_ms"}:
        raise UserError(f"--fail-if {text!r}: write METRIC:PCT% with METRIC one of {', '.join(METRICS)} (bench runs) "
                        "or query_ms (recordings), e.g. query:10%")
    return m.group(1), float(m.group(2)) / 100


def _shares(run: BenchRun) -> list[float]:
    return [float(s) for s in run.meta.get("config", {}).get("dynamic", []) or []]


def _label(share: float) -> str:
    from .report import share_label

    return share_label(share)


def _warnings(a: BenchRun, b: BenchRun) -> list[str]:
    out = []
    pa, pb = a.meta.get("provenance", {}), b.meta.get("provenance", {})
    ma, mb = a.meta.get("machine", {}).get("cpu"), b.meta.get("machine", {}).get("cpu")
    if ma != mb:
        out.append(f"the runs were timed on different machines ({ma} / {mb}): their times are not like for like")
    if pa.get("commit") != pb.get("commit"):
        out.append(f"the runs come from different commits ({pa.get('commit') or 'unknown'} / "
                   f"{pb.get('commit') or 'unknown'})")
    for p, prov in ((a.path, pa), (b.path, pb)):
        if prov.get("dirty"):
            out.append(f"{p} was run from a checkout with local changes")
    wa, wb = {k[0] for k in a.rows()}, {k[0] for k in b.rows()}
    if wa != wb:
        out.append(f"the runs measured different worlds ({', '.join(sorted(wa ^ wb))} in one only)")
    ca, cb = a.meta.get("config", {}), b.meta.get("config", {})
    for key in ("queries", "rounds", "frames", "dynamic", "drift", "seed"):
        if ca.get(key) != cb.get(key):
            out.append(f"the runs differ in {key} ({ca.get(key)} / {cb.get(key)})")
    return out


def compare_bench(paths: list, fail_if: list[tuple[str, float]], out=None, err=None) -> int:
    """Print the comparison of two bench runs (``paths``: A then B) on ``out`` (default stdout; warnings on
    ``err``, default stderr); returns 1 when ``fail_if`` finds a significant slowdown beyond its share, else 0."""
    from ..timing.significance import difference

    out = out or sys.stdout
    err = err or sys.stderr
    if len(paths) != 2:
        raise UserError(f"comparing bench runs takes two (A, then B), got {len(paths)}")
    a, b = load_bench(paths[0]), load_bench(paths[1])
    for line in _warnings(a, b):
        print(f"warning: {line}", file=err)
    if a.version < 2 or b.version < 2 or not a.samples or not b.samples:
        print("note: a run without raw samples (bench.json before format version 2) compares by its medians alone: "
              "no interval, no test", file=err)
    ra, rb = a.rows(), b.rows()
    pairs = [k for k in ra if k in rb]
    if not pairs:
        raise UserError(f"{paths[0]} and {paths[1]} share no (workload, index) row to compare")
    shares = [s for s in _shares(a) if s in _shares(b)]
    lines = []
    failed = []
    head = f"{'workload':<18} {'index':<14} {'metric':<10} {'A':>10} {'B':>10} {'B/A':>7} {'95% interval':>15} {'p':>8}  verdict"
    print(f"B = {paths[1]} against A = {paths[0]}: ratios of medians, 95% bootstrap intervals, Mann-Whitney U", file=out)
    print(head, file=out)
    print("-" * len(head), file=out)
    for w, ix in pairs:
        metrics = [("query", None)] + [(m, s) for s in shares for m in ("frame", "move")]
        for metric, share in metrics:
            kind, col = METRICS[metric]
            col = col.format(p=_label(share)) if share is not None else col
            va, vb = ra[w, ix].get(col), rb[w, ix].get(col)
            sa, sb = a.samples.get((w, ix, kind, share)), b.samples.get((w, ix, kind, share))
            if sa is not None and sb is not None:
                d = difference(sa, sb)
                interval, p, verdict = f"{d.lo:.3f}..{d.hi:.3f}", f"{d.p:.2g}", d.words()
                ratio, significant = d.ratio, d.significant
            elif isinstance(va, (int, float)) and isinstance(vb, (int, float)) and va:
                ratio, interval, p, verdict, significant = vb / va, "-", "-", "medians only: untested", False
            else:
                continue
            name = metric if share is None else f"{metric}@{_label(share)}%"
            lines.append(f"{w:<18} {ix:<14} {name:<10} {_num(va):>10} {_num(vb):>10} {ratio:>7.3f} {interval:>15} "
                         f"{p:>8}  {verdict}")
            for m, pct in fail_if:
                if m == metric and significant and ratio > 1 + pct:
                    failed.append(f"{w} {ix} {name}: {verdict} (B/A {ratio:.3f} > {1 + pct:.2f})")
    print("\n".join(lines), file=out)
    if fail_if:
        gates = ", ".join(f"{m}:{100 * pct:g}%" for m, pct in fail_if)
        if failed:
            print(f"--fail-if {gates}: a significant slowdown beyond it: " + "; ".join(failed), file=out)
            return 1
        print(f"--fail-if {gates}: no significant slowdown beyond it", file=out)
    return 0


def _num(v) -> str:
    return f"{v:.4g}" if isinstance(v, (int, float)) and math.isfinite(v) else "-"
