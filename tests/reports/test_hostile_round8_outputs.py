"""Hostile input and the first ten minutes, round eight: what ``plot`` and ``compare`` print beside their
figures (the machine, the GL renderer), odd recordings (one frame, a reference of 0), and ``--help``. The
recordings are written with the real recorder (no GL needed); every case runs the real command in this
process (:func:`tests.support.cli.viewer`)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from tests.support.cli import refused, small, viewer  # noqa: F401 (small: a fixture)

CPU = "Test CPU 9000 (znver9; L2 2 MiB, L3 64 MiB)"
RENDERER = "llvmpipe (LLVM 99.1.2, 256 bits)"


def record(path: Path, frames: int = 12, *, index: str = "octree", scene: str = "tiny", cpu: str = CPU,
           renderer: str = RENDERER, moving: bool = False, nodes: int = 7) -> Path:
    """A recording of ``frames`` made-up frames at ``path`` (CSV + metadata, by the real recorder): every
    stage takes time (``motion_ms`` only when ``moving``), measured on ``cpu`` and drawn by ``renderer``."""
    from viewer.frame.stages import TIMED_COLUMNS
    from viewer.recording import COLUMNS, Recorder, build_meta

    meta = build_meta(index=index, headless=True, window_size=(320, 180), gl={"renderer": renderer})
    meta["scene"] = {"name": scene, "n": 2000, "seed": 1}
    meta["machine"].update(host="testhost", cpu=cpu, cores=2)
    path.parent.mkdir(parents=True, exist_ok=True)
    with Recorder(path, meta) as rec:
        for k in range(frames):
            row = {c: 0 for c in COLUMNS}
            row.update(frame=k, t=k / 60, dt=1 / 60, index=index, culling="cpu", objects=2000,
                       candidates=2000 if index == "scan" else 40 + k, visible=7 + k % 3, drawn=3, draw_calls=1,
                       nodes_visited=0 if index == "scan" else nodes)
            for j, c in enumerate(TIMED_COLUMNS):
                row[c] = 0.0 if (c == "motion_ms" and not moving) else 0.01 * (j + 1) * (1 + k % 4)
            rec.append(row)
    return path


# --------------------------------------------------------------------------- --help


def test_no_help_text_sends_control_characters_to_the_terminal():
    """Before: 'viewer compare --help' printed its description's '(\\x1b, \\n, \\x00, ...)' as the raw bytes ESC,
    a line break and NUL (the description was no raw string): an escape sequence and a NUL to the terminal."""
    for command in ("view", "record", "bench", "scene", "plot", "compare", "clients", "map", "soak", "sweep"):
        status, out, err = viewer(command, "--help")
        assert status == 0, (command, err)
        bad = sorted({hex(ord(ch)) for ch in out if ord(ch) < 32 and ch != "\n" or ord(ch) == 127})
        assert not bad, (command, bad)
    _, out, _ = viewer("compare", "--help")
    assert r"escaped (\x1b, \n, \x00, ...)" in " ".join(out.split()), out


# --------------------------------------------------------------------------- plot: context, one frame


@pytest.mark.parametrize("moving", [False, True], ids=["still", "moving"])
def test_the_default_plot_names_the_machine_and_the_renderer(tmp_path, moving):
    """Before: with the LOD stage (schema 7) a still world has 8 stage panels and a moving one 9, so the legend
    fell into a row of its own, and at the default 1600x1500 its context lines (scene, N, GL renderer, path,
    date) left it under 40% of that cell and were hidden: no figure of a default plot said what it was
    measured on, and the CPU was never named. Now the context lines, the machine among them, take the cells
    beside the legend."""
    runs = [record(tmp_path / f"{ix}.csv", index=ix, moving=moving) for ix in ("octree", "scan")]
    status, _, err = viewer("plot", *runs, "-o", tmp_path / "fig.svg")
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
    one = record(tmp_path / "one.csv", frames=1)
    status, _, err = viewer("plot", one, "-o", tmp_path / "one.png")
    assert status == 0, err
    assert _blue(tmp_path / "one.png", 0.27) > 20  # the first row of stage panels (the legend is lower down)


# --------------------------------------------------------------------------- compare: machine, renderer, 0


def test_compare_names_the_machine_and_renderer_and_warns_when_they_differ(tmp_path):
    """Before: compare printed every time with no word of the machine it was taken on (the GL renderer only in
    a verdict, when drawing took most of a frame), and tabulated runs from two CPUs or two renderers side by
    side without a warning, as like for like."""
    a = record(tmp_path / "a" / "octree.csv")
    b = record(tmp_path / "a" / "scan.csv", index="scan")
    status, out, err = viewer("compare", a, b)
    assert status == 0 and err == "", err
    line = out.splitlines()[1]
    assert line == f"timed on: testhost, {CPU}, 2 logical CPUs; GL renderer: {RENDERER}", line

    c = record(tmp_path / "b" / "scan.csv", index="scan", cpu="Other CPU 1 (haswell)", renderer="NVIDIA RTX 9")
    status, out, err = viewer("compare", a, c, "--format", "csv")
    assert status == 0, err
    warnings = [ln for ln in err.splitlines() if "warning" in ln]
    machines = next(w for w in warnings if "different machines" in w)
    for words in (CPU, "Other CPU 1 (haswell)", str(a), str(c), "times are not like for like"):
        assert words in machines, machines
    renderers = next(w for w in warnings if "different GL renderers" in w)
    assert RENDERER in renderers and "NVIDIA RTX 9" in renderers, renderers
    assert not any("different scenes" in w for w in warnings)
    assert "timed on: testhost" in err and "Other CPU 1 (haswell)" in err  # csv: the lines on stderr
    assert out.startswith("column,run,frames,")  # ... and standard output the table alone


def test_a_ratio_against_a_reference_of_zero_is_a_dash(tmp_path):
    """Before: the README's first 'viewer compare' printed the octree's 'nodes_visited' as '0 0 0 0' times
    faster than the scan (the scan's 0 nodes over the octree's 7): a figure that reads as 'infinitely slower'.
    A ratio with a 0 on either side is now '-', as one over a run's 0 already was."""
    runs = [record(tmp_path / f"{ix}.csv", index=ix) for ix in ("octree", "scan")]
    status, out, err = viewer("compare", *runs)
    assert status == 0, err
    row = next(ln for ln in out.splitlines() if ln.startswith("nodes_visited") and "octree" in ln)
    assert row.split()[-4:] == ["-", "-", "-", "-"], row
    assert row.split()[-8:-4] == ["7.0", "7.0", "7.0", "7.0"], row
    query = next(ln for ln in out.splitlines() if ln.startswith("query_ms") and "octree" in ln)
    assert query.split()[-4:] == ["1.00", "1.00", "1.00", "1.00"], query  # other ratios as before


# --------------------------------------------------------------------------- record, view --headless: timed on


def test_record_and_a_headless_view_say_what_their_times_were_taken_on(tmp_path, small):
    """Before: 'viewer record' ended with each index's median / p95 / p99 / max times and 'viewer view
    --headless' with its median frame and fps, with no word of the machine or the GL renderer (llvmpipe's draw
    is ~100x a GPU's): the figures stood alone. Each now prints the line compare prints under its reference."""
    from viewer.system.machine import cpu

    status, out, err = viewer("record", small, "--frames", "3", "--size", "320x180", "--index", "octree",
                              "-o", tmp_path / "run")
    assert status == 0, err
    line = next(ln for ln in err.splitlines() if ln.startswith("timed on: "))
    assert cpu() in line and "logical CPU" in line and "GL renderer: " in line, line
    assert "not named" not in line, line
    assert err.index("octree: update_ms median") < err.index("timed on: ")  # beside the figures

    status, out, err = viewer("view", small, "--headless", "--frames", "3", "--size", "320x180")
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("frames 3  median frame")
    line = next(ln for ln in lines if ln.startswith("timed on: "))
    assert cpu() in line and "GL renderer: " in line and "not named" not in line, line


# --------------------------------------------------------------------------- camera paths: names


def _path_text(name_line: str = "") -> str:
    keys = "".join(f"[[keyframe]]\nt = {t}\nposition = [{x}, 100.0, 500.0]\nyaw = 0.0\npitch = 0.0\n\n"
                   for t, x in ((0.0, 0.0), (1.0, 10.0)))
    return f'format = "viewer-camera-path"\nversion = 1\n{name_line}\n{keys}'


def test_a_camera_path_named_with_control_characters_never_reaches_the_terminal_raw(tmp_path, small):
    """Before: a path file's 'name' (or, without one, its file name) holding an ESC sequence was printed raw by
    'record' and 'view --headless' ('path \\x1b[2J\\x1b]0;pwned\\x07x: 3 frames'): the screen cleared, the
    window's title set. A scene's name is refused for that (round 4); a path's name now is too, naming the
    file and the field, and a path file's own name is shown with those characters replaced, as a scene's."""
    evil = tmp_path / "evil.toml"
    evil.write_text(_path_text(r'name = "\u001b[2J\u001b]0;pwned\u0007x"'))
    status, out, err = viewer("record", small, "--path", evil, "--frames", "3", "--size", "320x180", "--index",
                              "octree", "-o", tmp_path / "run")
    refused(status, err, str(evil), "field 'name'", "control characters")
    assert "\x1b" not in err + out and not (tmp_path / "run").exists()

    odd = tmp_path / "a\x1b[2Jb.toml"  # no 'name': the file's stem names the path
    odd.write_text(_path_text())
    status, out, err = viewer("record", small, "--path", odd, "--frames", "3", "--size", "320x180", "--index",
                              "octree", "-o", tmp_path / "run2")
    assert status == 0, err
    assert "\x1b" not in err + out, err
    assert "path a\ufffd[2Jb: 3 frames" in err, err


# --------------------------------------------------------------------------- clients: the verdict's direction


def test_the_clients_verdict_says_a_slower_batch_saves_nothing():
    """Before: 'viewer clients' ended each K with 'sharing saves most on octree: 0.40x its singles' where
    0.40 was its batch gain (singles / batch: the batch 2.5x slower): read as the batch taking 0.40 of the
    singles' time, the opposite of what was measured (frame/README.md's table gives batch / singles). The
    sentence now gives batch / singles, and says when no shared batch saves anything."""
    from viewer.commands.clients import verdict

    def row(index, single, batch, shared=1):
        return {"workload": "small-2k", "layout": "spread", "k": 8, "index": index, "shared_walk": shared,
                "single_tick_us": single, "batch_tick_us": batch, "batch_x_single": round(single / batch, 3)}

    slower = verdict([row("octree", 6.0, 15.0), row("scan", 30.0, 29.0, shared=0)])[0]
    assert "sharing saves nothing here" in slower and "octree's, takes 2.50x its singles' time" in slower, slower
    assert "saves most" not in slower and "0.40x" not in slower
    faster = verdict([row("octree", 60.0, 15.0), row("hashgrid", 60.0, 30.0)])[0]
    assert "sharing saves most on octree: its batch takes 0.25x its singles' time" in faster, faster


# --------------------------------------------------------------------------- soak: the machine line


def test_soak_prints_the_machine_beside_its_frame_times(tmp_path):
    """Before: 'viewer soak' printed its median and p99 frame times with no word of the machine (bench, clients
    and map print their machine line). It now prints the same line under its figures."""
    from viewer.bench.report import machine_line
    from viewer.system.machine import machine

    scene = tmp_path / "mv.toml"
    scene.write_text('generator = "uniform"\nn = 2000\nworld = 1000.0\n[motion]\nshare = 0.1\n')
    status, out, err = viewer("soak", scene, "--frames", "20", "-q")
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("soak mv (2000 objects") and "median frame" in lines[0], out
    assert machine_line(machine()) in lines[:4], out
