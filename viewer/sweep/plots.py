"""The sweep's summary plot: each index's speed-up over the bench's baseline across the sweep's axes."""

from __future__ import annotations

import math
from pathlib import Path

from .results import AXIS_COLUMNS

__all__ = ["plot_summary", "speedup_column"]


def speedup_column() -> str:
    """The bench column holding the speed-up over its baseline (``speedup_vs_<baseline>``)."""
    from viewer.bench.report import COLUMNS

    return next(name for name, _, _ in COLUMNS if name.startswith("speedup_vs_"))


def _num(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def plot_summary(rows: list[dict], path: Path) -> Path | None:
    """One panel per combination of the axes other than ``n`` (scene, radius model, ...), speed-up (log)
    against N, a line per index and machine (figures of different machines are never joined). Returns the
    path written, or None when no task finished."""
    col = speedup_column()
    ok = [r for r in rows if r.get("status") == "ok" and math.isfinite(_num(r.get(col)))]
    if not ok:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    others = [c for c in AXIS_COLUMNS.values() if c != "n" and len({str(r[c]) for r in ok}) > 1]
    panels = sorted({tuple(str(r[a]) for a in others) for r in ok})
    hosts = sorted({(str(r["host"]), str(r["cpu"])) for r in ok})
    indexes = list(dict.fromkeys(str(r["index"]) for r in ok))
    colours = {ix: plt.cm.tab10(i % 10) for i, ix in enumerate(indexes)}
    styles = ["-", "--", ":", "-."]
    cols = min(3, len(panels))
    nrows = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 3.8 * nrows), squeeze=False)
    baseline = col.removeprefix("speedup_vs_")
    for ax, panel in zip(axes.flat, panels):
        sel = [r for r in ok if tuple(str(r[a]) for a in others) == panel]
        for hi, host in enumerate(hosts):
            for ix in indexes:
                pts = sorted((_num(r["n"]), _num(r[col])) for r in sel
                             if str(r["index"]) == ix and (str(r["host"]), str(r["cpu"])) == host)
                if not pts:
                    continue
                label = ix if len(hosts) == 1 else f"{ix} @ {host[0]}"
                ax.plot([p[0] for p in pts], [p[1] for p in pts], styles[hi % len(styles)], marker="o",
                        color=colours[ix], label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.axhline(1.0, color="0.6", lw=0.8)
        title = ", ".join(f"{a} {v}" for a, v in zip(others, panel)) or "all tasks"
        ax.set_title(title.replace("$", r"\$"), fontsize=9)
        ax.set_xlabel("objects (N)")
        ax.set_ylabel(f"query speed-up over {baseline}")
        ax.grid(True, which="both", alpha=0.3)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, [t.replace("$", r"\$") for t in labels], loc="upper right", fontsize=8)
    machines = "; ".join(f"{h} ({c})" for h, c in hosts)
    fig.suptitle(f"median query speed-up over {baseline}, per task (same machine, same run): "
                 f"{machines}".replace("$", r"\$"), fontsize=9)
    fig.tight_layout(rect=(0, 0, 0.88, 0.95))
    path = Path(path)
    from viewer.files.output import atomic_file

    try:
        with atomic_file(path) as fh:  # never through a link at path
            fig.savefig(fh, format="png", dpi=110)
    finally:
        plt.close(fig)
    return path
