"""Plots of a benchmark table (matplotlib, imported lazily, Agg backend)."""

from __future__ import annotations

import math
from pathlib import Path

__all__ = ["plot_bench"]


def _save(fig, path: Path) -> Path:
    """Write ``fig`` as a PNG at ``path`` through a uniquely named temporary file in the same directory,
    created exclusively, then renamed over ``path``: a symbolic link (or anything else) at ``path`` is
    replaced, never written through, and a failed write leaves no partial image. Closes ``fig``."""
    import matplotlib.pyplot as plt

    from ..files.output import atomic_file

    try:
        with atomic_file(path) as fh:
            fig.savefig(fh, format="png", dpi=100)
    finally:
        plt.close(fig)
    return path


def _finite(v) -> bool:
    return isinstance(v, (int, float)) and not (math.isnan(v) or math.isinf(v))


def _log_axes(ax, title: str, xlabel: str, ylabel: str) -> None:
    """A panel with both axes logarithmic, its title, labels and a light grid."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3, which="both")


def _dynamic_column(table: list[dict]) -> str | None:
    """The dynamic workload's frame-cost column to plot: 10% moving when it was measured, else the largest
    share measured; None without any."""
    names = [k for k in (table[0] if table else {}) if k.startswith("dynamic_") and k.endswith("pct_ms")
             and any(_finite(r.get(k)) for r in table)]
    if "dynamic_10pct_ms" in names:
        return "dynamic_10pct_ms"
    return max(names, key=lambda k: float(k.removeprefix("dynamic_").removesuffix("pct_ms")), default=None)


def plot_bench(table: list[dict], out: Path, machine: str = "") -> list[Path]:
    """Write ``bench.png`` (per workload: query median with the scan's read floor as a black line,
    candidates per visible, memory, and the dynamic frame cost (10% moving, else the largest share measured)
    when measured, by index) and, when several N were run,
    ``bench_scaling.png`` (query median against N), and when several shares moving were measured,
    ``bench_shares.png`` (the moving frame against the share, with the update's floor). ``machine``: the CPU, named in each title. Each image is
    written through a temporary file renamed into place (a symbolic link at its name is replaced, not
    followed). Returns the paths written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out)
    written = []
    workloads = list(dict.fromkeys(r["workload"] for r in table))
    indexes = list(dict.fromkeys(r["index"] for r in table))
    colours = {ix: plt.cm.tab10(i % 10) for i, ix in enumerate(indexes)}
    panels = [
        ("query_median_us", "query median (us, log)", True),
        ("candidates_per_visible", "candidates per visible object (log)", True),
        ("bytes_per_object", "memory (bytes per object)", False),
    ]
    dyn = _dynamic_column(table)
    if dyn:
        share = dyn.removeprefix("dynamic_").removesuffix("pct_ms")
        panels.append((dyn, f"frame cost, {share}% moving (ms, log)", True))
    fig, axes = plt.subplots(len(panels), 1, figsize=(max(8, 1.6 * len(workloads) + 4), 3.2 * len(panels)))
    width = 0.8 / max(1, len(indexes))
    for ax, (key, label, log) in zip(axes, panels):
        for j, ix in enumerate(indexes):
            xs, ys = [], []
            for i, wl in enumerate(workloads):
                row = next((r for r in table if r["workload"] == wl and r["index"] == ix), None)
                if row and _finite(row.get(key)) and (row[key] > 0 or not log):
                    xs.append(i + (j - (len(indexes) - 1) / 2) * width)
                    ys.append(row[key])
            ax.bar(xs, ys, width=width, color=colours[ix], label=ix)
        if key == "query_median_us":  # the scan's read floor: a black tick across each workload's bars
            for i, wl in enumerate(workloads):
                row = next((r for r in table if r["workload"] == wl), None)
                if row and _finite(row.get("read_floor_us")) and row["read_floor_us"] > 0:
                    ax.hlines(row["read_floor_us"], i - 0.45, i + 0.45, colors="black", linewidth=1.2,
                              label="scan read floor" if i == 0 else None)
        ax.set_ylabel(label)
        if log:
            ax.set_yscale("log")
        ax.set_xticks(range(len(workloads)))
        # a radius model in the name (clustered-1m-log-uniform1-1000) is wider than a workload's 1.6 inches
        slant = max(map(len, workloads)) > 14
        ax.set_xticklabels(workloads, rotation=20 if slant else 0, ha="right" if slant else "center",
                           fontsize=8 if slant else None)
        ax.grid(axis="y", alpha=0.3)
    axes[0].legend(ncol=min(5, len(indexes)), fontsize=8, loc="upper left", bbox_to_anchor=(0, 1.35))
    axes[-1].set_xlabel("workload (scene-N)")
    on = f" on {machine}" if machine else ""
    fig.suptitle(f"viewer bench: indexes side by side (same run{on})".replace("$", r"\$"), y=0.995)
    fig.tight_layout()
    written.append(_save(fig, out / "bench.png"))

    sizes = sorted({r["n"] for r in table})
    if len(sizes) > 1:
        scenes = list(dict.fromkeys(r["workload"].rsplit("-", 1)[0] for r in table))
        fig, axes = plt.subplots(1, len(scenes), figsize=(5 * len(scenes), 4.2), squeeze=False)
        for ax, sc in zip(axes[0], scenes):
            for ix in indexes:
                pts = sorted(
                    (r["n"], r["query_median_us"])
                    for r in table
                    if r["index"] == ix and r["workload"].rsplit("-", 1)[0] == sc and _finite(r["query_median_us"])
                )
                if pts:
                    ax.plot(*zip(*pts), marker="o", color=colours[ix], label=ix)
            _log_axes(ax, sc, "objects N", "query median (us)")
        axes[0][0].legend(fontsize=8)
        fig.tight_layout()
        written.append(_save(fig, out / "bench_scaling.png"))
    shares = _shares(table)
    if len(shares) > 1:
        written.append(_plot_shares(table, shares, workloads, indexes, colours, out / "bench_shares.png", on))
    return written


def _shares(table: list[dict]) -> list[tuple[float, str]]:
    """The shares moving a table measured: (fraction, its label in the column names), in increasing order."""
    import re

    found = {m.group(1) for k in (table[0] if table else {}) for m in [re.fullmatch(r"dynamic_(.+?)pct_ms", k)] if m}
    return sorted((float(p) / 100, p) for p in found if any(_finite(r.get(f"dynamic_{p}pct_ms")) for r in table))


def _plot_shares(table, shares, workloads, indexes, colours, path: Path, on: str) -> Path:
    """Per workload, each index's moving frame (``move_many`` and a query, median ms) against the share of the
    objects moving a frame, with the update's scatter floor measured in the same frames (black, dashed): where
    each approach wins."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(workloads), figsize=(6.5 * len(workloads), 4.6), squeeze=False)
    for ax, wl in zip(axes[0], workloads):
        mine = [r for r in table if r["workload"] == wl]
        for ix in indexes:
            pts = [(100 * s, r[f"dynamic_{p}pct_ms"]) for s, p in shares for r in mine
                   if r["index"] == ix and _finite(r.get(f"dynamic_{p}pct_ms"))]
            if pts:
                ax.plot(*zip(*pts), marker="o", color=colours[ix], label=ix)
        floor = [(100 * s, mine[0].get(f"dynamic_{p}pct_scatter_floor_ms")) for s, p in shares]
        floor = [(x, y) for x, y in floor if _finite(y) and y > 0]
        if floor:
            ax.plot(*zip(*floor), color="black", linestyle="--", label="update floor (rows at their ids)")
        _log_axes(ax, wl, "objects moving each frame (%)", "frame: move_many + query, median (ms)")
    axes[0][0].legend(fontsize=8)
    fig.suptitle(f"the moving frame against the share of movers\n(same run{on})".replace("$", r"\$"), fontsize=10)
    fig.tight_layout()
    return _save(fig, path)
