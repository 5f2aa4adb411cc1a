"""``viewer plot`` on odd recordings and targets: a label of 60,000 characters, a legend of many runs, one
frame, mathtext in titles, a dash or a .pgf without TeX as the output, messages cut at a word; the default plot
names the machine and the renderer."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest

from tests.support.cli import refused, run_cli, small  # noqa: F401 (small: a fixture)
from tests.support.recordings import RENDERER, record, record_measured, recording_with_meta


def test_a_message_cut_short_ends_at_a_word_with_an_ellipsis(tmp_path):
    """Metadata nested 100,000 levels deep. Before: '...: not a metadata file this viewer can read: maximum
    recursion depth exceeded while decoding a JSON array from a unicode stri' (cut at 80 characters, mid-word,
    with no sign of the cut). Now cut after a whole word, with '...'."""
    csv = tmp_path / "run.csv"
    csv.write_text("frame,t\n0,0\n")
    (tmp_path / "run.meta.json").write_text("[" * 100_000 + "]" * 100_000)
    status, _, err = run_cli("plot", csv, "-o", tmp_path / "p.png")
    line = refused(status, err, "run.meta.json", "not a metadata file this viewer can read")
    assert line.endswith(" a unicode..."), line
    assert not (tmp_path / "p.png").exists()


@pytest.mark.parametrize("text, most, want", [
    ("short enough", 20, "short enough"),
    ("maximum recursion depth exceeded while decoding", 30, "maximum recursion depth..."),
    ("one two three", 10, "one two..."),
    ("x" * 50, 20, "x" * 17 + "..."),  # one long word: cut, it cannot be kept whole
    ("a " + "x" * 30, 20, "a " + "x" * 15 + "..."),  # not 'a...': a word filling over half of it is cut
])
def test_clip_cuts_after_a_whole_word(text, most, want):
    from viewer.terminal.text import clip

    got = clip(text, most)
    assert got == want and len(got) <= most


def test_plot_to_pgf_without_tex_is_refused_before_drawing(tmp_path, monkeypatch):
    """matplotlib lists .pgf among the formats it writes, but lays PGF's text out with xelatex. Before: without
    it, 'plot RUN.csv -o a.pgf' drew the whole figure, then died with "RuntimeError: 'xelatex' not found;
    install it or change rcParams['pgf.texsystem']..." (a traceback, exit 1)."""
    import shutil

    from tests.support.recordings import record

    run = record(tmp_path / "a.csv", index="scan")
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    status, _, err = run_cli("plot", run, "-o", tmp_path / "p.pgf")
    line = refused(status, err, f"{tmp_path / 'p.pgf'}: cannot write .pgf images (PGF needs xelatex, not installed")
    assert "pgf," not in line and "png" in line
    assert not [p for p in os.listdir(tmp_path) if "p.pgf" in p]


@pytest.mark.gl
def test_plot_to_a_dash_is_refused_and_writes_no_file(world, tmp_path):
    """'-o -' does not write a file named '-': refused, naming the flag; --help says so."""
    status, out, err = run_cli("plot", world["runs"] / "brute.csv", "-o", "-", cwd=tmp_path)
    print(refused(status, err, "-o -", "standard output"))
    assert out == "" and list(tmp_path.iterdir()) == []
    status, out, _ = run_cli("plot", "--help")
    assert status == 0 and "not '-'" in out


def test_plot_draws_a_label_of_60000_characters(tmp_path):
    """A run label of 60,000 characters (RecursionError before) is drawn, cut to a few lines."""
    p = record(tmp_path / "run.csv", label="word " * 12000)
    status, _, err = run_cli("plot", p, "-o", tmp_path / "fig.png")
    assert status == 0 and "Traceback" not in err, err
    assert (tmp_path / "fig.png").stat().st_size > 0


def test_plot_legend_of_many_runs_ends_in_n_more(tmp_path):
    """More runs than the legend's cell holds: the image is drawn, the legend ends in "+N more runs"."""
    paths = [record(tmp_path / f"r{i:02d}.csv", frames=3, label=f"run {i}") for i in range(24)]
    status, _, err = run_cli("plot", *paths, "--height", "600", "-o", tmp_path / "fig.svg")
    assert status == 0, err
    m = re.search(r"\+(\d+) more runs", (tmp_path / "fig.svg").read_text())
    assert m and 0 < int(m.group(1)) < 24


def test_the_fitted_legend_stays_inside_its_cell(tmp_path):
    """The legend of many runs, long labels included, is inside its cell and above the context lines."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    from viewer.reports.plot import _fit_legend, _wrap

    for n, height in ((130, 1500), (5, 400)):
        fig = Figure(figsize=(16, height / 100), dpi=100)
        FigureCanvasAgg(fig)
        lax = fig.add_gridspec(5, 4).subplots()[1][3]
        lax.axis("off")
        context = lax.text(0, 0, "scene x\nN 2000\nGL llvmpipe", transform=lax.transAxes, va="bottom")
        labels = [_wrap(f"run {i} " + "long " * (i % 40), 38) for i in range(n)]
        _fit_legend(fig, lax, context, [Line2D([], []) for _ in range(n)], labels)
        r = fig.canvas.get_renderer()
        leg, cell = lax.get_legend().get_window_extent(r), lax.get_window_extent(r)
        floor = context.get_window_extent(r).y1 if context.get_visible() else cell.y0
        assert leg.y1 <= cell.y1 + 1 and leg.y0 >= floor - 1, (n, leg, cell)
        assert len(lax.get_legend().get_texts()) >= 2  # at least one run, and "+N more runs"


@pytest.mark.parametrize("moving", [False, True], ids=["still", "moving"])
def test_the_default_plot_names_the_machine_and_the_renderer(tmp_path, moving):
    """Before: with the LOD stage (schema 7) a still world has 8 stage panels and a moving one 9, so the legend
    fell into a row of its own, and at the default 1600x1500 its context lines (scene, N, GL renderer, path,
    date) left it under 40% of that cell and were hidden: no figure of a default plot said what it was
    measured on, and the CPU was never named. Now the context lines, the machine among them, take the cells
    beside the legend."""
    runs = [record_measured(tmp_path / f"{ix}.csv", index=ix, moving=moving) for ix in ("octree", "scan")]
    status, _, err = run_cli("plot", *runs, "-o", tmp_path / "fig.svg")
    assert status == 0, err
    svg = (tmp_path / "fig.svg").read_text()
    texts = " ".join(re.findall(r"<!-- (.*?) -->", svg))  # matplotlib writes each drawn text as a comment
    assert RENDERER in texts, texts
    assert "Test CPU 9000 (znver9" in texts and "2 logical CPUs" in texts, texts
    assert "octree" in texts and "scan" in texts  # the legend is still drawn


def _blue(png: Path, top: float) -> int:
    """Pixels of the first run's colour (matplotlib's C0, blue) in the top ``top`` share of ``png``."""
    from PIL import Image

    a = np.asarray(Image.open(png).convert("RGB")).astype(int)
    a = a[: int(a.shape[0] * top)]
    r, g, b = a[..., 0], a[..., 1], a[..., 2]
    return int(((b - r > 60) & (b - g > 20)).sum())


def test_a_run_of_one_frame_is_drawn(tmp_path):
    """Before: a recording of one frame ('viewer record SCENE --frames 1', a take stopped after a frame) was
    drawn as lines through a single point, which draw nothing: its stage panels and counts were empty, as if
    the run had no rows. Now a one-frame run's points are drawn as markers."""
    one = record_measured(tmp_path / "one.csv", frames=1)
    status, _, err = run_cli("plot", one, "-o", tmp_path / "one.png")
    assert status == 0, err
    assert _blue(tmp_path / "one.png", 0.27) > 20  # the first row of stage panels (the legend is lower down)




def test_plot_draws_mathtext_in_titles_and_names_as_written(tmp_path):
    hostile = r"$\frac{1}{0$"
    p = recording_with_meta(tmp_path, scene_name=hostile)
    out = tmp_path / "f.png"
    status, _, err = run_cli("plot", p, "-o", out, "--title", hostile, "--width", "400", "--height", "400")
    assert status == 0 and "Traceback" not in err, err
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    status, outp, err = run_cli("compare", p)
    assert status == 0 and hostile in outp
