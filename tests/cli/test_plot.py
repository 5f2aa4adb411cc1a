"""``viewer plot`` on odd recordings and targets: a label of 60,000 characters, a legend of many runs, one
frame, mathtext in titles, messages cut at a word; the default plot names the machine and the renderer; and every
hostile input (a damaged recording, a missing or empty one, an output it cannot write: a dash, a .pgf without TeX,
an unknown format, a missing directory, a name too long) in one table, each refused with one line, no image
written."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from viewer.recording import SCHEMA_VERSION

from tests.support.cli import refused_before_anything, run_cli
from tests.support.recordings import RENDERER, edit, edit_meta, record, record_measured, recording_with_meta


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


def test_plot_help_says_the_output_is_not_a_dash():
    """'-o -' is refused (see the table of refusals), and --help says so."""
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


def _nested_metadata(tmp: Path) -> dict:
    """A one-frame CSV whose metadata is nested 100,000 levels deep."""
    (tmp / "run.csv").write_text("frame,t\n0,0\n")
    (tmp / "run.meta.json").write_text("[" * 100_000 + "]" * 100_000)
    return {"run": tmp / "run.csv"}


def _no_rows(tmp: Path) -> dict:
    """A recording of no frames, written without metadata."""
    from viewer.recording import Recorder

    Recorder(tmp / "empty.csv").close()
    return {"run": tmp / "empty.csv"}


def _no_xelatex(monkeypatch) -> None:
    import shutil

    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)


def _run(tmp: Path) -> dict:
    return {"run": record(tmp / "a.csv", index="scan")}


def _row(id: str, args: list, words: list, setup=_run, check=None, patch=None, status: int = 2):
    return pytest.param(setup, args, words, status, check, patch, id=id)


#: every hostile input of ``viewer plot``, one row each: (id, argv, words the one error line holds, setup, check,
#: patch). ``setup(tmp_path)`` writes the recordings (by default one good run) and returns their paths by name,
#: filled with ``{tmp}`` (the test's directory, also the working directory) into argv's and the words'
#: ``{name}``; ``check(line, err)``, when given, must hold of the error line and stderr; ``patch(monkeypatch)``
#: changes the environment first. A message cut short ends at a whole word with '...' (it was cut mid-word at 80
#: characters); .pgf is among matplotlib's formats but laid out with xelatex, so without it the figure was drawn
#: and then died with a traceback; '-o -' wrote a file named '-'.
REFUSED = [
    _row("negative-query_ms", ["plot", "{run}", "-o", "{tmp}/fig.png"], ["{run}:6", "'query_ms'", "-5", "below zero"],
         lambda t: {"run": edit(record(t / "run.csv"), "query_ms", 4, "-5")}),
    _row("value-past-the-numeric-domain", ["plot", "{a}", "{b}", "-o", "{tmp}/p.png"],
         ["{b}:5", "column 'query_ms'", "1e308 is outside the numeric domain"],
         lambda t: {"a": record(t / "a.csv", index="scan"),
                    "b": edit(record(t / "b.csv", index="octree"), "query_ms", 3, "1e308")}),
    _row("400-digit-integer", ["plot", "{run}", "-o", "{tmp}/f.png"], ["{run}:6", "'visible'", "64-bit integer"],
         lambda t: {"run": edit(recording_with_meta(t), "visible", 4, "9" * 400)},
         check=lambda line, err: len(line) < 300),
    _row("metadata-index-a-number", ["plot", "{run}", "-o", "{tmp}/f.png"], ["a.meta.json", "field 'index'"],
         lambda t: {"run": recording_with_meta(t, index=7)}),
    _row("other-schema-version", ["plot", "{run}", "-o", "{tmp}/fig.png"],
         ["old.csv", f"schema version {SCHEMA_VERSION + 1}"],
         lambda t: {"run": edit_meta(record(t / "old.csv"), lambda m: m["schema"].update(version=SCHEMA_VERSION + 1))}),
    _row("metadata-nested-too-deep-cut-at-a-word", ["plot", "{run}", "-o", "{tmp}/p.png"],
         ["run.meta.json", "not a metadata file this viewer can read"], _nested_metadata,
         check=lambda line, err: line.endswith(" a unicode...")),
    _row("missing-recording", ["plot", "{tmp}/missing.csv", "-o", "{tmp}/fig.png"], ["no such file"],
         lambda t: {}),
    _row("recording-of-no-rows", ["plot", "{run}", "-o", "{tmp}/fig.png"], ["has no rows"], _no_rows),
    _row("pgf-without-xelatex", ["plot", "{run}", "-o", "{tmp}/p.pgf"],
         ["{tmp}/p.pgf: cannot write .pgf images (PGF needs xelatex, not installed"],
         check=lambda line, err: "pgf," not in line and "png" in line, patch=_no_xelatex),
    _row("unknown-format", ["plot", "{run}", "-o", "{tmp}/fig.xyz"], ["cannot write .xyz"]),
    _row("output-directory-missing", ["plot", "{run}", "-o", "{tmp}/no/fig.png"], ["does not exist"]),
    _row("output-a-dash", ["plot", "{run}", "-o", "-"], ["-o -", "standard output"]),
    _row("output-name-over-255-bytes", ["plot", "{run}", "-o", "{tmp}/" + "n" * 300 + ".png"],
         ["-o", "bytes long", "at most"]),
]


@pytest.mark.parametrize("setup, args, words, status, check, patch", REFUSED)
def test_a_hostile_input_is_refused_with_one_line_and_no_image(tmp_path, monkeypatch, setup, args, words, status,
                                                                check, patch):
    """Exit status 2, one error line naming the file or the flag (for a bad cell its line and column), no
    traceback, nothing on stdout, no image nor temporary file written."""
    files = {"tmp": tmp_path, **setup(tmp_path)}
    if patch:
        patch(monkeypatch)
    refused_before_anything(tmp_path, files, args, words, status, check)
