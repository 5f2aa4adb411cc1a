"""The README's headline table from a bench run (``viewer report --markdown BENCH``): the query median (us) of
each index on each world at the run's largest size with the default radii, its speed-up over the scan beside
it, and for the scan its ratio to its read floor; the scan's row first and bold, each world's fastest other
index bold. The README's table is this text (tests/pages/test_headline_table.py checks it)."""

from __future__ import annotations

from ..bench.compare_runs import BenchRun
from ..bench.report import BASELINE
from ..errors import UserError

__all__ = ["headline_markdown"]


def _us(v: float) -> str:
    """Three significant digits, whole from 1000 up: ``3.74``, ``20.0``, ``173``, ``3402``."""
    return f"{v:.0f}" if v >= 1000 else f"{v:#.3g}".rstrip(".")


def _times(v: float) -> str:
    """A speed-up to two significant digits: ``0.051``, ``9.3``, ``46``, ``120``."""
    return f"{v:.0f}" if v >= 100 else f"{v:.2g}"


def headline_markdown(run: BenchRun) -> str:
    """The headline table of ``run`` (markdown, ending in a newline); :class:`UserError` naming the file when
    it has no world with the default radii or no scan to measure against."""
    rows = run.meta.get("rows", [])
    config = run.meta.get("config", {})
    sizes = [r["n"] for r in rows if isinstance(r.get("n"), (int, float))]
    if not sizes:
        raise UserError(f"{run.path}: no rows with a size ('n') to tabulate")
    n = max(sizes)
    at_n = [r for r in rows if r.get("n") == n]
    scenes = list(config.get("scenes") or dict.fromkeys(r["workload"].split("-")[0] for r in at_n))
    worlds: dict[str, str] = {}  # scene -> its workload with the default radii: SCENE-SIZE, nothing after
    for r in at_n:
        for s in scenes:
            rest = r["workload"][len(s) + 1:]
            if r["workload"].startswith(s + "-") and rest and "-" not in rest:
                worlds.setdefault(s, r["workload"])
    shown = [s for s in scenes if s in worlds]
    cell = {(r["workload"], r["index"]): r for r in at_n}
    if not shown or not any((worlds[s], BASELINE) in cell for s in shown):
        raise UserError(f"{run.path}: no world at n={n:g} with the default radii measured with '{BASELINE}'")
    indexes = [BASELINE] + [ix for ix in dict.fromkeys(r["index"] for r in at_n) if ix != BASELINE]
    if config.get("indexes"):
        order = [ix for ix in config["indexes"] if ix in indexes and ix != BASELINE]
        indexes = [BASELINE, *order, *(ix for ix in indexes if ix not in order and ix != BASELINE)]
    best = {}
    for s in shown:
        others = [(cell[worlds[s], ix]["query_median_us"], ix) for ix in indexes[1:] if (worlds[s], ix) in cell]
        best[s] = min(others)[1] if others else None
    lines = ["| index | " + " | ".join(shown) + " |", "|---|" + "---|" * len(shown)]
    for ix in indexes:
        cells = []
        for s in shown:
            r = cell.get((worlds[s], ix))
            if r is None:
                cells.append("-")
                continue
            if ix == BASELINE:
                text = f"**{_us(r['query_median_us'])} ({float(r['x_read']):#.3g}x read)**"
            else:
                text = f"{_us(r['query_median_us'])} ({_times(r['speedup_vs_scan'])}x)"
                if best[s] == ix:
                    text = f"**{text}**"
            cells.append(text)
        name = f"**{ix}**" if ix == BASELINE else ix
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
