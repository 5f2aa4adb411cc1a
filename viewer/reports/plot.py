"""Figures of recordings: stage times over the path, visible and candidate counts, per-stage
distributions, several runs overlaid and labelled from their metadata.

matplotlib is imported only when a figure is drawn, and only its Agg canvas (no pyplot, no GUI
backend, no display needed).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ..errors import UserError
from ..files.output import atomic_file, check_output_file
from ..recording.meta import describe_machine
from ..recording.reader import Run, read_runs
from ..frame.stages import TIMED_COLUMNS
from ..terminal.text import escape_text, shorten
from .compare import _warn_stderr, band_columns, ended_early, runs_with_rows

__all__ = ["count_series", "drawn_stages", "plot_files", "plot_runs", "run_plot"]

#: the line styles of the band columns (``band0`` .. ``band3``, ``band_changes`` (not drawn), ``proxies``)
_BAND_STYLES = ((0, (1, 1)), (0, (3, 1, 1, 1)), (0, (5, 2)), (0, (1, 3)), None, (0, (6, 2, 1, 2, 1, 2)))

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
    warn: Callable[[str], None] | None = _warn_stderr,
) -> Path:
    """Draw ``runs`` into the image file ``out`` of exactly ``width`` x ``height`` pixels.

    Panels: one per stage (ms against path time, s; a stage at 0 in every frame of every run, such as a still
    world's motion, is named in the distribution's title instead: :func:`drawn_stages`), the object counts (candidates, visible, drawn
    against path time; with LOD bands or HLOD, :func:`viewer.reports.compare.band_columns`, also the drawn
    objects per band and the drawn proxies), and the per-stage distribution (box: quartiles, line: median, whiskers:
    5th-95th percentile). The file is written through a temporary file and a rename.

    A run without rows is left out with a warning through ``warn`` (none with rows: a :class:`UserError`).
    Labels and the title are drawn with their control characters escaped, a label cut to
    :data:`LABEL_LINES` lines, and the legend keeps inside its cell: the runs that do not fit are
    summed up as one last entry, ``+N more runs``.
    """
    out = check_output_file(out)
    runs = runs_with_rows(runs, "plot", warn)

    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    fmt = (out.suffix.lstrip(".") or "png").lower()
    fig = Figure(figsize=(width / dpi, height / dpi), dpi=dpi)
    canvas = FigureCanvasAgg(fig)
    supported = dict(canvas.get_supported_filetypes())
    tex = matplotlib.rcParams["pgf.texsystem"]
    if not shutil.which(tex):  # PGF lays its text out with TeX
        supported.pop("pgf", None)
    if fmt not in supported:
        why = f" (PGF needs {tex}, not installed here)" if fmt == "pgf" else ""
        raise UserError(f"{out}: cannot write .{fmt} images{why}; use one of {', '.join(sorted(supported))}")

    colours = [f"C{i % 10}" for i in range(len(runs))]
    stages, idle = drawn_stages(runs)
    cols = 4  # stage panels to a row; the legend and the context lines take the cells after the last
    srows = (len(stages) + 1 + cols - 1) // cols
    gs = fig.add_gridspec(srows + 2, cols, height_ratios=[1] * srows + [1.2, 1.3], hspace=0.55, wspace=0.28,
                          left=0.06, right=0.98, top=0.93, bottom=0.05)
    fig.suptitle(_plain(shorten(escape_text(title or _default_title(runs)), 200)), fontsize=14)

    # ---- stage times over the path
    stage_axes = []
    for k, stage in enumerate(stages):
        ax = fig.add_subplot(gs[k // cols, k % cols], sharex=stage_axes[0] if stage_axes else None)
        for r, c in zip(runs, colours):
            ax.plot(r["t"], r[stage], color=c, lw=0.8, alpha=0.85, **_dot(r))
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
        if k + cols >= len(stages):  # no stage panel below it
            ax.set_xlabel("time on path (s)")
        stage_axes.append(ax)

    # ---- the legend in the cell after the stage panels; the context lines (scene, machine, GL renderer, ...) in
    # the cells left beside it in that row, else under the legend in its own cell
    row, at = divmod(len(stages), cols)
    lax = fig.add_subplot(gs[row, at])
    lax.axis("off")
    handles = [Line2D([], [], color=c, lw=3) for c in colours]
    # a run that ended early says so in the legend too (the warning names how: viewer.reports.compare.ended_early)
    labels = [_plain(_wrap(escape_text(r.label + (" (ended early)" if ended_early(r) else "")), 38)) for r in runs]
    if at < cols - 1:
        context_ax = fig.add_subplot(gs[row, at + 1:])
        context_ax.axis("off")
        _fit_context(fig, context_ax, _plain(_context(runs)))
        _fit_legend(fig, lax, None, handles, labels)
    else:
        context = lax.text(0.0, 0.0, _plain(_context(runs)), transform=lax.transAxes, fontsize=8.5, va="bottom",
                           family="monospace", color="0.25")
        _fit_legend(fig, lax, context, handles, labels)

    # ---- counts over the path
    cax = fig.add_subplot(gs[srows, :])
    styles = count_series(runs)
    bands = styles[len(_COUNT_STYLES):]
    for r, c in zip(runs, colours):
        for col, ls in styles:
            thin = col not in dict(_COUNT_STYLES)  # the band columns: thinner
            cax.plot(r["t"], r[col], color=c, ls=ls, lw=0.7 if thin else 1.1, alpha=0.8 if thin else 1.0, **_dot(r))
    cax.set_yscale("symlog", linthresh=10)
    top = max(float(np.max(r[c])) for r in runs for c, _ in styles)
    cax.set_ylim(-0.5, max(100.0, top * 20))  # headroom for the legend above the highest line
    cax.set_ylabel("objects (symlog)")
    cax.set_xlabel("time on path (s)")
    cax.set_title("objects per frame: candidates tested by the index, visible (in view distance), drawn (also in "
                  "frustum)" + ("; drawn per LOD band, drawn HLOD proxies" if bands else ""), fontsize=11)
    cax.grid(alpha=0.3, which="both")
    cax.legend([Line2D([], [], color="0.2", ls=ls) for _, ls in styles], [c for c, _ in styles],
               loc="upper right", fontsize=9, ncols=min(len(styles), 8))

    # ---- per-stage distribution
    dax = fig.add_subplot(gs[srows + 1, :])
    n = len(runs)
    width_box = 0.8 / n
    for j, (r, c) in enumerate(zip(runs, colours)):
        pos = np.arange(len(stages)) + (j - (n - 1) / 2) * width_box
        # a stage this run does not time (0 in every frame: the coherent mode's LOD is done in its cull) gets a
        # "0" at the panel's foot, not a box squashed onto the floor
        timed = [k for k, s in enumerate(stages) if np.any(r[s] > 0)]
        for k in sorted(set(range(len(stages))) - set(timed)):
            dax.text(pos[k], 0.02, "0", color=c, ha="center", va="bottom", fontsize=9,
                     transform=dax.get_xaxis_transform())  # x in data, y at the panel's foot
        if not timed:
            continue
        data = [np.maximum(r[stages[k]], _FLOOR_MS) for k in timed]
        bp = dax.boxplot(data, positions=pos[timed], widths=width_box * 0.85, whis=(5, 95), showfliers=False,
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
    idle_note = f"; not drawn, 0 in every frame: {', '.join(_stage_title(s) for s in idle)}" if idle else ""
    dax.set_title("per-stage distribution (box: quartiles, black line: median, whiskers: 5th-95th percentile)"
                  + idle_note,
                  fontsize=11)
    dax.grid(alpha=0.3, axis="y", which="both")
    for i in range(1, len(stages)):
        dax.axvline(i - 0.5, color="0.85", lw=0.8)

    with atomic_file(out) as fh:  # a temporary file of its own (never a link planted at its name), renamed
        fig.savefig(fh, format=fmt, dpi=dpi)
    return out


#: the counts panel's lines, with their styles
_COUNT_STYLES: tuple[tuple[str, object], ...] = (("candidates", "-"), ("visible", "--"), ("drawn", ":"))


def count_series(runs: Sequence[Run]) -> tuple[tuple[str, object], ...]:
    """The columns the counts panel draws for ``runs``, each with its line style: candidates, visible, drawn,
    then, for runs with LOD bands or HLOD (:func:`viewer.reports.compare.band_columns`), ``band0`` ..
    ``band3`` and ``proxies`` (``band_changes`` is an event count, not drawn)."""
    bands = tuple((col, ls) for col, ls in zip(band_columns(runs), _BAND_STYLES) if col != "band_changes")
    return _COUNT_STYLES + bands


def _dot(run: Run) -> dict:
    """A marker for the lines of a run of one frame (a line through one point draws nothing)."""
    return {"marker": "o", "markersize": 4} if len(run) == 1 else {}


def _fit_context(fig, ax, text: str) -> None:
    """The context lines at the top left of the cell ``ax``, in the largest of 8.5 down to 6 points that keeps
    them inside it (none drawn when no size does: a figure a few hundred pixels high)."""
    renderer = fig.canvas.get_renderer()
    cell = ax.get_window_extent(renderer)
    for size in (8.5, 7.0, 6.0):
        t = ax.text(0.0, 1.0, text, transform=ax.transAxes, fontsize=size, va="top", family="monospace",
                    color="0.25")
        box = t.get_window_extent(renderer)
        if box.y0 >= cell.y0 - 1 and box.x1 <= cell.x1 + 1:
            return
        t.remove()


def _plain(text: str) -> str:
    """``text`` drawn as written: matplotlib reads ``$...$`` as mathtext (a scene named ``$\\frac{1}{0$``
    would stop the figure), so every dollar sign is escaped."""
    return str(text).replace("$", r"\$")


def _stage_title(stage: str) -> str:
    return stage.removesuffix("_ms")


#: the most lines a run's label takes in the legend (a longer one is cut, ending in "...")
LABEL_LINES = 3


def _wrap(text: str, width: int, max_lines: int = LABEL_LINES) -> str:
    """``text`` broken at spaces into lines of at most ``width`` characters (a word longer than that is cut),
    continuation lines indented by two spaces, at most ``max_lines`` of them (the last then ends in
    ``...``). Iterative: a label of any length costs one pass."""
    lines: list[str] = []
    rest = text.strip()
    while rest and len(lines) < max_lines:
        if len(rest) <= width:
            lines.append(rest)
            rest = ""
            break
        cut = rest.rfind(" ", 0, width + 1)
        cut = width if cut <= 0 else cut
        lines.append(rest[:cut].rstrip())
        rest = rest[cut:].strip()
    if rest:
        lines[-1] = lines[-1][: max(width - 3, 1)] + "..."
    return "\n  ".join(lines)


def _fit_legend(fig, lax, context, handles: list, labels: list[str]) -> None:
    """The runs' legend in the cell ``lax``, above the ``context`` text, with as many entries as fit there:
    in a smaller font (10 down to 6 points) when that shows more of them, and the rest as one last entry,
    ``+N more runs``. Measured with the figure's renderer, so long labels, a small --height or a hundred
    runs all stay inside the cell. When the context lines would leave the legend less than 40% of the
    cell, or no room for a single run, they are hidden (``context`` None: they are in a cell of their own)."""
    from matplotlib.lines import Line2D

    renderer = fig.canvas.get_renderer()
    cell = lax.get_window_extent(renderer)
    shown = context is not None and bool(context.get_text())  # None: the context lines are in a cell of their own
    floor = (context.get_window_extent(renderer).y1 if shown else cell.y0) + 4  # legend above it
    n = len(labels)
    if n and shown and cell.y1 - floor < 0.4 * cell.height:  # a small figure: the runs matter more than the context
        context.set_visible(False)
        floor = cell.y0

    def place(k: int, size: float) -> bool:
        """Draw the legend with the first ``k`` runs (and ``+N more runs`` when k < n); whether it fits."""
        if k < n:
            hs = handles[:k] + [Line2D([], [], color="none")]
            ls = labels[:k] + [f"+{n - k} more run{'s' if n - k != 1 else ''}"]
        else:
            hs, ls = handles, labels
        leg = lax.legend(hs, ls, loc="upper left", fontsize=size, title="runs", title_fontsize=size + 1,
                         frameon=False)
        return leg.get_window_extent(renderer).y0 >= floor

    def most(size: float) -> int:
        """The most runs shown in ``size`` points (n when all fit; -1 when not even "+N more runs" does)."""
        if place(n, size):
            return n
        if not place(0, size):
            return -1
        lo, hi = 0, n - 1  # the largest k in [lo, hi] that fits with its "+N more" line
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if place(mid, size):
                lo = mid
            else:
                hi = mid - 1
        return lo

    def fit() -> tuple[int, float]:
        """The most runs shown, and in what size (the largest of the sizes that shows the most)."""
        best = (-1, 6.0)  # nothing fits at any size (a figure a few hundred pixels high): the smallest font
        for size in (10.0, 8.5, 7.0, 6.0):
            k = most(size)
            if k > best[0]:
                best = (k, size)
            if k == n:
                break
        return best

    best = fit()
    if n and best[0] < 1 and shown and context.get_visible():
        context.set_visible(False)  # the context lines leave no room for a single run: the runs first
        floor = cell.y0
        best = fit()
    place(max(best[0], 0), best[1])


def _default_title(runs: Sequence[Run]) -> str:
    scenes = {((r.meta.get("scene") or {}).get("name")) for r in runs} - {None}
    s = f" on {', '.join(sorted(scenes))}" if scenes else ""
    return f"per-frame costs{s}: {len(runs)} run{'s' if len(runs) != 1 else ''}, {max(len(r) for r in runs)} frames"


def drawn_stages(runs: Sequence[Run]) -> tuple[list[str], list[str]]:
    """The stage columns (:data:`viewer.frame.stages.TIMED_COLUMNS`, in order) that every run has (an older
    recording lacks newer stages), split into those drawn and those at 0 in every frame of every run (a still
    world's ``motion_ms``), which get no panel of their own."""
    present = [c for c in TIMED_COLUMNS if all(c in r.columns for r in runs)]
    idle = [c for c in present if not any(np.any(r[c] != 0) for r in runs)]
    return [c for c in present if c not in idle], idle


def _context(runs: Sequence[Run]) -> str:
    """A few lines of metadata shared by the runs (or per run where they differ)."""
    lines = []
    for key, get in (
        ("scene", lambda m: (m.get("scene") or {}).get("name")),
        ("N", lambda m: (m.get("scene") or {}).get("n")),
        ("window", lambda m: "x".join(map(str, (m.get("window") or {}).get("size") or [])) or None),
        ("headless", lambda m: (m.get("window") or {}).get("headless")),
        ("machine", lambda m: describe_machine(m) or None),
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
            shown = [escape_text(v) for v in vals[:3]]
            text = ", ".join(shown) + (f" +{len(vals) - 3} more" if len(vals) > 3 else "")
            lines.append(f"{key:8s} {_wrap(text, 44, max_lines=2)}")
    return "\n".join(lines)


def run_plot(paths: Sequence[str | os.PathLike], out: str, **kw) -> int:
    """``viewer plot`` after its arguments: the figure of the recordings at ``paths`` written to ``out``
    (``kw``: :func:`plot_runs`' width, height, title), warnings on stderr. ``out`` is checked before any run
    is read (a bad name fails at once, naming ``-o``; ``-`` is refused: a figure is not written to standard
    output). Returns 0."""
    import sys

    if out == "-":
        raise UserError("-o -: the figure is not written to standard output; give an image file name, "
                        "e.g. -o frames.png")
    check_output_file(out, "-o")

    def warn(message: str) -> None:
        print(f"viewer plot: warning: {message}", file=sys.stderr)

    written = plot_files(paths, out, warn=warn, **kw)
    print(f"wrote {written}", file=sys.stderr)
    return 0
