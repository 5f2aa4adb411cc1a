"""Hostile input, round three (issues 31 and 23): hand-edited recordings (negative times and counts),
labels with control characters, empty takes, huge labels and legends, and a Ctrl-C'd or denormal-dt
``soak``. The recordings are written with the recorder (no GL needed); every case runs the real command."""

from __future__ import annotations

import csv
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.cli import refused

ROOT = Path(__file__).resolve().parents[2]


def viewer(*args, timeout: float = 180, cwd=None) -> tuple[int, str, str]:
    """Run ``viewer ARGS`` in a fresh process; returns (status, stdout, stderr)."""
    p = subprocess.run([sys.executable, "-m", "viewer.cli", *map(str, args)], capture_output=True, text=True,
                       timeout=timeout, cwd=cwd or ROOT)
    return p.returncode, p.stdout, p.stderr




def record(path: Path, frames: int = 12, label: str | None = None, scene: str = "tiny", index: str = "brute") -> Path:
    """A recording of ``frames`` made-up frames at ``path`` (CSV + metadata), written by the real recorder."""
    from viewer.frame.pipeline import FrameStats
    from viewer.recording import Recorder, build_meta

    meta = build_meta(index=index, headless=True, label=label)
    meta["scene"] = {"name": scene, "n": 2000, "seed": 1}
    path.parent.mkdir(parents=True, exist_ok=True)
    with Recorder(path, meta) as rec:
        for k in range(frames):
            rec.append(FrameStats(frame=k, t=k / 60, dt=1 / 60, cam_x=-10.0 * k, cam_y=5.0, cam_z=1.0, yaw=-30.0,
                                  pitch=-5.0, index=index, objects=2000, candidates=40 + k, visible=7 + k % 3,
                                  drawn=3, query_ms=0.01 * (k + 1), cull_ms=0.002, frame_ms=1.0 + k / 10))
    return path


def edit(path: Path, column: str, row: int, value: str) -> None:
    """Set ``column`` of data row ``row`` (0: the first frame) of the CSV at ``path`` to ``value``, by hand."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    rows[1 + row][rows[0].index(column)] = value
    with open(path, "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)


# --------------------------------------------------------------------------- 31.5: negative values


@pytest.mark.parametrize("column, value", [("query_ms", "-5"), ("visible", "-3"), ("dt", "-0.25")])
def test_a_negative_time_or_count_is_refused_naming_file_row_and_column(tmp_path, column, value):
    """31.5: a time or a count below zero is refused by compare and by plot, like NaN: file, line, column."""
    p = record(tmp_path / "run.csv")
    edit(p, column, 4, value)  # the fifth frame: line 6 of the file
    commands = [("compare", p)] + ([("plot", p, "-o", tmp_path / "fig.png")] if column == "query_ms" else [])
    for args in commands:
        status, _, err = viewer(*args)
        line = refused(status, err, f"{p}:6", repr(column), value, "below zero")
        print(line)
    assert not (tmp_path / "fig.png").exists()


def test_negative_positions_and_angles_are_still_read(tmp_path):
    """31.5: only times and counts are refused below zero; a camera at x < 0 looking at yaw < 0 is normal."""
    p = record(tmp_path / "run.csv")
    status, out, err = viewer("compare", p, "--format", "csv")
    assert status == 0, err
    assert "query_ms" in out


# --------------------------------------------------------------------------- 31.7: labels printed raw


@pytest.mark.parametrize("fmt", ["text", "csv", "markdown"])
def test_compare_escapes_control_characters_in_labels(tmp_path, fmt):
    """31.7: a label with an escape sequence, NUL and newline is printed escaped, one table line a row."""
    evil = "red\x1b[31m|x\x00y\nz\u202e"
    record(tmp_path / "evil.csv", label=evil)
    record(tmp_path / "plain.csv", label="plain")
    status, out, err = viewer("compare", tmp_path / "evil.csv", tmp_path / "plain.csv", "--format", fmt,
                              "--stages-only")
    assert status == 0, err
    for raw in ("\x1b", "\x00", "\u202e"):
        assert raw not in out
    lines = [ln for ln in out.splitlines() if "red" in ln]
    assert lines and all("\\x1b[31m" in ln and "\\x00y\\nz\\u202e" in ln for ln in lines), out
    plain = [ln for ln in out.splitlines() if "plain" in ln]
    assert len(lines) == len(plain)  # the newline in the label split no row in two
    if fmt == "markdown":  # as many cells as the header's: the label's own | is escaped
        header = next(ln for ln in out.splitlines() if ln.startswith("|"))
        assert all("\\|x" in ln and ln.count(" | ") == header.count(" | ") for ln in lines), lines
    if fmt == "csv":
        rows = list(csv.reader(out.splitlines()))
        assert all(len(r) == len(rows[0]) for r in rows)


# --------------------------------------------------------------------------- 31.7: empty takes


def test_a_take_closed_without_frames_leaves_no_files_and_says_so(tmp_path):
    """31.7: R pressed twice in a row (the take API the window calls): no take-N files, a line saying so,
    and the next take still gets the next number."""
    from viewer.recording import build_meta
    from viewer.recording.takes import TakeDir

    takes = TakeDir(tmp_path / "rec")
    take = takes.start(build_meta(index="octree", headless=False))
    line = take.close()
    assert "take-1" in line and "no frames" in line, line
    assert list((tmp_path / "rec").iterdir()) == []
    assert takes.start(build_meta(index="octree", headless=False)).number == 2


def test_compare_and_plot_skip_an_empty_run_with_a_warning(tmp_path):
    """31.7: an empty recording among others (a 0-frame take of an older viewer) is left out with a warning;
    only empty recordings are still an error."""
    from viewer.recording import Recorder, build_meta

    full = record(tmp_path / "rec" / "take-1.csv", label="flown")
    empty = tmp_path / "rec" / "take-2.csv"
    Recorder(empty, build_meta(index="brute", headless=True, label="empty")).close()
    status, out, err = viewer("compare", full, empty)
    assert status == 0, err
    warning = [ln for ln in err.splitlines() if "warning" in ln]
    assert len(warning) == 1 and str(empty) in warning[0] and "no rows" in warning[0], err
    assert "flown" in out and "empty" not in out
    status, _, err = viewer("plot", full, empty, "-o", tmp_path / "fig.png")
    assert status == 0 and str(empty) in err and "no rows" in err, err
    assert (tmp_path / "fig.png").stat().st_size > 0
    status, _, err = viewer("compare", empty)
    print(refused(status, err, str(empty), "no rows"))


def test_compare_and_plot_say_which_runs_ended_early(tmp_path):
    """A run its metadata says did not finish (a record stopped by SIGTERM: ``complete`` false, ``ended``
    the signal; or killed before it closed its files: no ``ended``) is compared and drawn with one warning
    naming it, how it ended and its frames; a finished run gets none."""
    import json

    from viewer.recording.meta import meta_path_for

    full = record(tmp_path / "full.csv", label="whole")
    stopped = record(tmp_path / "stopped.csv", frames=5, label="stopped")
    killed = record(tmp_path / "killed.csv", frames=4, label="killed")
    for path, ended in ((stopped, "SIGTERM"), (killed, None)):
        m = json.loads(meta_path_for(path).read_text())
        m["complete"] = False
        m.pop("ended", None)
        if ended:
            m["ended"] = ended
        meta_path_for(path).write_text(json.dumps(m))
    for argv in (("compare", full, stopped, killed), ("plot", full, stopped, killed, "-o", tmp_path / "fig.png")):
        status, _, err = viewer(*argv)
        assert status == 0, err
        early = [ln for ln in err.splitlines() if "ended early" in ln]
        assert len(early) == 2, err
        assert str(stopped) in early[0] and "SIGTERM" in early[0] and "after 5 frames" in early[0], early
        assert str(killed) in early[1] and "never closed" in early[1] and "after 4 frames" in early[1], early
        assert str(full) not in err, err
    svg = (tmp_path / "fig.svg")
    status, _, err = viewer("plot", full, stopped, killed, "-o", svg)
    assert status == 0, err
    text = svg.read_text()  # the legend marks them too
    assert "stopped (ended early)" in text and "killed (ended early)" in text and "whole (ended" not in text


# --------------------------------------------------------------------------- 31.6, 31.7: huge labels, legends


def test_plot_draws_a_label_of_60000_characters(tmp_path):
    """31.6: a run label of 60,000 characters (RecursionError before) is drawn, cut to a few lines."""
    p = record(tmp_path / "run.csv", label="word " * 12000)
    status, _, err = viewer("plot", p, "-o", tmp_path / "fig.png")
    assert status == 0 and "Traceback" not in err, err
    assert (tmp_path / "fig.png").stat().st_size > 0


def test_plot_legend_of_many_runs_ends_in_n_more(tmp_path):
    """31.7: more runs than the legend's cell holds: the image is drawn, the legend ends in "+N more runs"."""
    paths = [record(tmp_path / f"r{i:02d}.csv", frames=3, label=f"run {i}") for i in range(24)]
    status, _, err = viewer("plot", *paths, "--height", "600", "-o", tmp_path / "fig.svg")
    assert status == 0, err
    m = re.search(r"\+(\d+) more runs", (tmp_path / "fig.svg").read_text())
    assert m and 0 < int(m.group(1)) < 24


def test_the_fitted_legend_stays_inside_its_cell(tmp_path):
    """31.7: the legend of many runs, long labels included, is inside its cell and above the context lines."""
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


# --------------------------------------------------------------------------- soak: Ctrl-C, a denormal dt


@pytest.fixture(scope="module")
def moving(tmp_path_factory) -> Path:
    text = (ROOT / "scenes" / "dynamic-100k.toml").read_text()
    text, k = re.subn(r"(?m)^n = .*$", "n = 2000", text)
    assert k == 1
    p = tmp_path_factory.mktemp("soak") / "tiny-dynamic.toml"
    p.write_text(text)
    return p


def test_a_ctrl_c_soak_prints_its_summary_then_exits_130(moving):
    """31.7: Ctrl-C mid-run: the summary of the frames done and checked is printed, exit status 130."""
    proc = subprocess.Popen([sys.executable, "-m", "viewer.cli", "soak", str(moving), "--frames", "5e6",
                             "--report-every", "200", "--check-every", "50"], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        end = time.monotonic() + 120
        seen = ""
        while time.monotonic() < end:
            line = proc.stderr.readline()
            seen += line
            if re.match(r"frame [1-9]\d*: RSS", line):
                break
            assert line or proc.poll() is None, seen
        else:
            pytest.fail(f"no progress report: {seen}")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert "Traceback" not in err, err
    m = re.search(r"index octree: (\d+) frames in .* checked (\d+) frames against brute force, 0 mismatches", out)
    assert m and int(m.group(1)) >= 200 and int(m.group(2)) >= 4, out
    assert "interrupted by Ctrl-C" in out and "memory: RSS" in out
    print(out.splitlines()[0])


def test_soak_with_a_denormal_dt_names_dt_not_frames(moving):
    """23.7: --dt 5e-324 with --frames given: refused, naming --dt and the limit, with no advice to 'give
    --frames N' (which was given, and does not change the path's sampling)."""
    status, _, err = viewer("soak", moving, "--frames", "20", "--dt", "5e-324")
    line = refused(status, err, "--dt 4.94066e-324", "limit", "larger --dt")
    assert "give --frames" not in line
    print(line)
