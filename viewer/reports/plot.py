"""Figures of recordings: stage times over the path, visible and candidate counts, per-stage
distributions, several runs overlaid and labelled from their metadata.

matplotlib is imported only when a figure is drawn, and only its Agg canvas (no pyplot, no GUI
backend, no display needed).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import numpy as np

from ..errors import UserError
from ..host.output import check_output_file
from ..recording.reader import Run, read_runs
from ..frame.stages import TIMED_COLUMNS

__all__ = ["plot_files", "plot_runs"]

_FLOOR_MS = 1e-4  # stage times of 0 (e.g. update_ms in a static scene) drawn at 0.1 us on log axes


def plot_files(paths: Sequence[str | os.PathLike], out: str | os.PathLike, **kw) -> Path:
    """Read the recordings at ``paths`` and draw them into ``out`` (see :func:`plot_runs`)."""
    return plot_runs(read_runs(paths), out, **kw)


def plot_runs(
    runs: Sequence[Run],
    out: str | os.PathLike,
    *,
    width: int = 1600,
    height: int = 1500,
    dpi: int = 100,
    title: str | None = None,
) -> Path:
    """Draw ``runs`` into the image file ``out`` of exactly ``width`` x ``height`` pixels.

    Panels: one per stage (ms against path time, s), the object counts (candidates, visible, drawn
    against path time), and the per-stage distribution (box: quartiles, line: median, whiskers:
    5th-95th percentile). The file is written through a temporary file and a rename.
    """
    out = check_output_file(out)
    if not runs:
        raise UserError("no recordings to plot")
    for r in runs:
        if len(r) == 0:
            raise UserError(f"{r.path}: the recording has no rows")

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    fmt = (out.suffix.lstrip(".") or "png").lower()
    fig = Figure(figsize=(width / dpi, height / dpi), dpi=dpi)
    canvas = FigureCanvasAgg(fig)
    supported = canvas.get_supported_filetypes()
    if fmt not in supported:
        raise UserError(f"{out}: cannot write .{fmt} images; use one of {', '.join(sorted(supported))}")

    colours = [f"C{i % 10}" for i in range(len(runs))]
    stages = [c for c in TIMED_COLUMNS if all(c in r.columns for r in runs)]  # an older recording lacks new stages
    srows = (len(stages) + 1 + 3) // 4  # the stage panels, then the legend, four to a row
    gs = fig.add_gridspec(srows + 2, 4, height_ratios=[1] * srows + [1.2, 1.3], hspace=0.55, wspace=0.28,
                          left=0.06, right=0.98, top=0.93, bottom=0.05)
    fig.suptitle(_plain(title or _default_title(runs)), fontsize=14)

    # ---- stage times over the path
    stage_axes = []
    for k, stage in enumerate(stages):
        ax = fig.add_subplot(gs[k // 4, k % 4], sharex=stage_axes[0] if stage_axes else None)
        for r, c in zip(runs, colours):
            ax.plot(r["t"], r[stage], color=c, lw=0.8, alpha=0.85)
        ax.set_title(_stage_title(stage), fontsize=11)
        ax.set_ylabel("ms")
        # a few spikes (the OS, another process) would flatten every line: clip the axis above the
        # 99.5th percentile and say how high the spikes went
        peak = max(float(np.max(r[stage])) for r in runs)
        top = max(float(np.percentile(r[stage], 99.5)) for r in runs) * 1.3
        if peak > top > 0:
            ax.set_ylim(0, top)
            ax.text(0.99, 0.97, f"spikes to {peak:.3g} ms clipped", transform=ax.transAxes, ha="right",
                    va="top", fontsize=8, color="0.35", bbox=dict(facecolor="white", alpha=0.7, lw=0))
        else:
            ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        if k // 4 == 1:
            ax.set_xlabel("time on path (s)")
        stage_axes.append(ax)

    # ---- legend and context in the eighth cell
    lax = fig.add_subplot(gs[len(stages) // 4, len(stages) % 4])
    lax.axis("off")
    handles = [Line2D([], [], color=c, lw=3) for c in colours]
    lax.legend(handles, [_plain(_wrap(r.label, 38)) for r in runs], loc="upper left", fontsize=10,
               title="runs", title_fontsize=11, frameon=False)
    lax.text(0.0, 0.0, _plain(_context(runs)), transform=lax.transAxes, fontsize=8.5, va="bottom",
             family="monospace", color="0.25")

    # ---- counts over the path
    cax = fig.add_subplot(gs[srows, :])
    styles = (("candidates", "-"), ("visible", "--"), ("drawn", ":"))
    for r, c in zip(runs, colours):
        for col, ls in styles:
            cax.plot(r["t"], r[col], color=c, ls=ls, lw=1.1)
    cax.set_yscale("symlog", linthresh=10)
    top = max(float(np.max(r[c])) for r in runs for c, _ in styles)
    cax.set_ylim(-0.5, max(100.0, top * 20))  # headroom for the legend above the highest line
    cax.set_ylabel("objects (symlog)")
    cax.set_xlabel("time on path (s)")
    cax.set_title("objects per frame: candidates tested by the index, visible (in view distance), drawn (also in frustum)",
                  fontsize=11)
    cax.grid(alpha=0.3, which="both")
    cax.legend([Line2D([], [], color="0.2", ls=ls) for _, ls in styles], [c for c, _ in styles],
               loc="upper right", fontsize=9, ncols=3)

    # ---- per-stage distribution
    dax = fig.add_subplot(gs[srows + 1, :])
    n = len(runs)
    width_box = 0.8 / n
    for j, (r, c) in enumerate(zip(runs, colours)):
        data = [np.maximum(r[s], _FLOOR_MS) for s in stages]
        pos = np.arange(len(stages)) + (j - (n - 1) / 2) * width_box
        bp = dax.boxplot(data, positions=pos, widths=width_box * 0.85, whis=(5, 95), showfliers=False,
                         patch_artist=True, manage_ticks=False)
        for b in bp["boxes"]:
            b.set(facecolor=c, alpha=0.45, edgecolor=c)
        for part in ("whiskers", "caps"):
            for ln in bp[part]:
                ln.set(color=c)
        for ln in bp["medians"]:
            ln.set(color="black", lw=1.5)
    dax.set_yscale("log")
    dax.set_xticks(np.arange(len(stages)), [_stage_title(s) for s in stages])
    dax.set_ylabel("ms per frame (log)")
    dax.set_title("per-stage distribution (box: quartiles, black line: median, whiskers: 5th-95th percentile)",
                  fontsize=11)
    dax.grid(alpha=0.3, axis="y", which="both")
    for i in range(1, len(stages)):
        dax.axvline(i - 0.5, color="0.85", lw=0.8)

    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        fig.savefig(tmp, format=fmt, dpi=dpi)
        os.replace(tmp, out)
    except OSError as exc:
        raise UserError(f"{out}: cannot write: {exc.strerror or exc}") from None
    finally:
        if tmp.exists():
            tmp.unlink()
    return out


def _plain(text: str) -> str:
    """``text`` drawn as written: matplotlib reads ``$...$`` as mathtext (a scene named ``$\\frac{1}{0$``
    would stop the figure), so every dollar sign is escaped."""
    return str(text).replace("$", r"\$")


def _stage_title(stage: str) -> str:
    return stage.removesuffix("_ms")


def _wrap(text: str, width: int) -> str:
    if len(text) <= width:
        return text
    cut = text.rfind(" ", 0, width)
    cut = width if cut <= 0 else cut
    return text[:cut] + "\n  " + _wrap(text[cut:].strip(), width)


def _default_title(runs: Sequence[Run]) -> str:
    scenes = {((r.meta.get("scene") or {}).get("name")) for r in runs} - {None}
    s = f" on {', '.join(sorted(scenes))}" if scenes else ""
    return f"per-frame costs{s}: {len(runs)} run{'s' if len(runs) != 1 else ''}, {max(len(r) for r in runs)} frames"


def _context(runs: Sequence[Run]) -> str:
    """A few lines of metadata shared by the runs (or per run where they differ)."""
    lines = []
    for key, get in (
        ("scene", lambda m: (m.get("scene") or {}).get("name")),
        ("N", lambda m: (m.get("scene") or {}).get("n")),
        ("window", lambda m: "x".join(map(str, (m.get("window") or {}).get("size") or [])) or None),
        ("headless", lambda m: (m.get("window") or {}).get("headless")),
        ("GL", lambda m: (m.get("gl") or {}).get("renderer")),
        ("path", lambda m: (m.get("path") or {}).get("name")),
        ("date", lambda m: (m.get("date") or "")[:10] or None),
    ):
        vals = []
        for r in runs:
            v = get(r.meta or {})
            if v is not None and v not in vals:
                vals.append(v)
        if vals:
            text = ", ".join(str(v) for v in vals)
            lines.append(f"{key:8s} {_wrap(text, 44)}")
    return "\n".join(lines)
