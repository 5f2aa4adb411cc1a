"""``viewer compare`` on odd recordings: runs of different scenes, machines or renderers (warned), control
characters in labels (escaped), empty and stopped runs, figures too large to print, a reference of zero; and
every hostile recording (a negative time or count, a value past the numeric domain, a 400-digit integer, wrongly
typed metadata, another schema version, only empty runs, a link that leads nowhere) in one table, each refused
with one line naming the file (and its line and column, for a bad cell)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from viewer.recording import SCHEMA_VERSION

from tests.support.cli import refused_before_anything, run_cli
from tests.support.recordings import CPU, RENDERER, edit, edit_meta, record, record_measured, recording_with_meta


@pytest.mark.gl
def test_compare_warns_when_runs_are_of_different_scenes(world, tmp_path):
    """Compare still prints its table, and warns on stderr naming both scenes and the files (the
    second run: the fixture's, its metadata saying another scene, as a run of it would)."""
    import json
    import shutil

    a, b = world["runs"] / "brute.csv", tmp_path / "other" / "brute.csv"
    b.parent.mkdir()
    shutil.copy(a, b)
    meta = json.loads(a.with_suffix(".meta.json").read_text())
    meta["scene"]["name"] = "tiny-uniform"
    b.with_suffix(".meta.json").write_text(json.dumps(meta))
    status, out, err = run_cli("compare", a, b)
    assert status == 0, err
    warnings = [ln for ln in err.splitlines() if "warning" in ln]
    assert len(warnings) == 1, err
    for word in ("different scenes", "tiny-clustered", "tiny-uniform", str(a), str(b)):
        assert word in warnings[0], warnings[0]
    print(warnings[0])
    assert "query_ms" in out
    status, _, err = run_cli("compare", a, a)  # the same scene and path: no warning
    assert status == 0 and "warning" not in err, err


def test_negative_positions_and_angles_are_still_read(tmp_path):
    """Only times and counts are refused below zero; a camera at x < 0 looking at yaw < 0 is normal."""
    p = record(tmp_path / "run.csv")
    status, out, err = run_cli("compare", p, "--format", "csv")
    assert status == 0, err
    assert "query_ms" in out


@pytest.mark.parametrize("fmt", ["text", "csv", "markdown"])
def test_compare_escapes_control_characters_in_labels(tmp_path, fmt):
    """A label with an escape sequence, NUL and newline is printed escaped, one table line a row."""
    evil = "red\x1b[31m|x\x00y\nz\u202e"
    record(tmp_path / "evil.csv", label=evil)
    record(tmp_path / "plain.csv", label="plain")
    status, out, err = run_cli("compare", tmp_path / "evil.csv", tmp_path / "plain.csv", "--format", fmt,
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


def test_compare_and_plot_skip_an_empty_run_with_a_warning(tmp_path):
    """An empty recording among others (a 0-frame take of an older viewer) is left out with a warning (only
    empty recordings are an error: see the table of refusals)."""
    from viewer.recording import Recorder, build_meta

    full = record(tmp_path / "rec" / "take-1.csv", label="flown")
    empty = tmp_path / "rec" / "take-2.csv"
    Recorder(empty, build_meta(index="brute", headless=True, label="empty")).close()
    status, out, err = run_cli("compare", full, empty)
    assert status == 0, err
    warning = [ln for ln in err.splitlines() if "warning" in ln]
    assert len(warning) == 1 and str(empty) in warning[0] and "no rows" in warning[0], err
    assert "flown" in out and "empty" not in out
    status, _, err = run_cli("plot", full, empty, "-o", tmp_path / "fig.png")
    assert status == 0 and str(empty) in err and "no rows" in err, err
    assert (tmp_path / "fig.png").stat().st_size > 0


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
        status, _, err = run_cli(*argv)
        assert status == 0, err
        early = [ln for ln in err.splitlines() if "ended early" in ln]
        assert len(early) == 2, err
        assert str(stopped) in early[0] and "SIGTERM" in early[0] and "after 5 frames" in early[0], early
        assert str(killed) in early[1] and "never closed" in early[1] and "after 4 frames" in early[1], early
        assert str(full) not in err, err
    svg = (tmp_path / "fig.svg")
    status, _, err = run_cli("plot", full, stopped, killed, "-o", svg)
    assert status == 0, err
    text = svg.read_text()  # the legend marks them too
    assert "stopped (ended early)" in text and "killed (ended early)" in text and "whole (ended" not in text


def test_compare_writes_a_huge_figure_short(tmp_path):
    """Hand-edited recordings. Before: query times of 1e29 ms were printed digit by digit (34 characters
    each, a speed-up of 5e31 as 32 digits; 1e308: 309), and 1e308 in every row made the medians overflow to
    inf with a numpy RuntimeWarning on stderr. Now a figure past 1e15 is written as 1e+29 (and a value outside
    the numeric domain, |value| <= 2**100 as for a scene, is refused: see the table of refusals)."""
    a, b = record(tmp_path / "a.csv", index="scan"), record(tmp_path / "b.csv", index="octree")
    for row in range(12):
        edit(b, "query_ms", row, "1e29")
        edit(a, "cull_ms", row, "1e29")
    for fmt in ("text", "markdown", "csv"):
        status, out, err = run_cli("compare", a, b, "--format", fmt)
        assert status == 0 and "Traceback" not in err and "Warning" not in err, err
        assert "1e+29" in out and "5e+31" in out and "0000000000000000" not in out + err, out + err


def test_compare_names_the_machine_and_renderer_and_warns_when_they_differ(tmp_path):
    """Before: compare printed every time with no word of the machine it was taken on (the GL renderer only in
    a verdict, when drawing took most of a frame), and tabulated runs from two CPUs or two renderers side by
    side without a warning, as like for like."""
    a = record_measured(tmp_path / "a" / "octree.csv")
    b = record_measured(tmp_path / "a" / "scan.csv", index="scan")
    status, out, err = run_cli("compare", a, b)
    assert status == 0 and err == "", err
    line = out.splitlines()[1]
    assert line == f"timed on: testhost, {CPU}, 2 logical CPUs; GL renderer: {RENDERER}", line

    c = record_measured(tmp_path / "b" / "scan.csv", index="scan", cpu="Other CPU 1 (haswell)", renderer="NVIDIA RTX 9")
    status, out, err = run_cli("compare", a, c, "--format", "csv")
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
    runs = [record_measured(tmp_path / f"{ix}.csv", index=ix) for ix in ("octree", "scan")]
    status, out, err = run_cli("compare", *runs)
    assert status == 0, err
    row = next(ln for ln in out.splitlines() if ln.startswith("nodes_visited") and "octree" in ln)
    assert row.split()[-4:] == ["-", "-", "-", "-"], row
    assert row.split()[-8:-4] == ["7.0", "7.0", "7.0", "7.0"], row
    query = next(ln for ln in out.splitlines() if ln.startswith("query_ms") and "octree" in ln)
    assert query.split()[-4:] == ["1.00", "1.00", "1.00", "1.00"], query  # other ratios as before



def _past_the_domain(tmp: Path) -> dict:
    """Two runs, the second's query time of its fourth frame (line 5 of the file) 1e308."""
    return {"a": record(tmp / "a.csv", index="scan"), "b": edit(record(tmp / "b.csv", index="octree"), "query_ms", 3,
                                                               "1e308")}


def _only_an_empty_run(tmp: Path) -> dict:
    """A recording of no frames (a 0-frame take of an older viewer)."""
    from viewer.recording import Recorder, build_meta

    empty = tmp / "rec" / "take-2.csv"
    empty.parent.mkdir()
    Recorder(empty, build_meta(index="brute", headless=True, label="empty")).close()
    return {"run": empty}


def _link_in_a_loop(tmp: Path) -> dict:
    """``link.csv`` -> ``other.csv`` -> ``link.csv``."""
    (tmp / "other.csv").symlink_to(tmp / "link.csv")
    (tmp / "link.csv").symlink_to(tmp / "other.csv")
    return {"run": tmp / "link.csv"}


def _dangling_link(tmp: Path) -> dict:
    """``link.csv`` -> a file that is not there."""
    (tmp / "link.csv").symlink_to(tmp / "gone.csv")
    return {"run": tmp / "link.csv"}


def _no_recipe_names(line: str, err: str) -> bool:
    return "bundled recipes" not in err  # a recording is no scene: a link that leads nowhere is not 'no such file'


def _row(id: str, args: list, words: list, setup=None, check=None, status: int = 2):
    return pytest.param(setup, args, words, status, check, id=id)


#: every hostile input of ``viewer compare``, one row each: (id, argv, words the one error line holds, setup,
#: check). ``setup(tmp_path)`` writes the recordings and returns their paths by name, filled into argv's and the
#: words' ``{name}``; ``check(line, err)``, when given, must hold of the error line and stderr. A time or a count
#: below zero is refused like NaN (positions and angles are not: a camera at x < 0 is normal); the fifth frame's
#: cell is line 6 of the file.
REFUSED = [
    *(_row(f"negative-{column}", ["compare", "{run}"], ["{run}:6", repr(column), value, "below zero"],
           lambda t, c=column, v=value: {"run": edit(record(t / "run.csv"), c, 4, v)})
      for column, value in [("query_ms", "-5"), ("visible", "-3"), ("dt", "-0.25")]),
    _row("value-past-the-numeric-domain", ["compare", "{a}", "{b}"],
         ["{b}:5", "column 'query_ms'", "1e308 is outside the numeric domain"], _past_the_domain),
    _row("400-digit-integer", ["compare", "{run}"], ["{run}:6", "'visible'", "64-bit integer"],
         lambda t: {"run": edit(recording_with_meta(t), "visible", 4, "9" * 400)},
         check=lambda line, err: len(line) < 300),
    _row("metadata-index-a-number", ["compare", "{run}"], ["a.meta.json", "field 'index'"],
         lambda t: {"run": recording_with_meta(t, index=7)}),
    _row("other-schema-version", ["compare", "{run}"], ["old.csv", f"schema version {SCHEMA_VERSION + 1}"],
         lambda t: {"run": edit_meta(record(t / "old.csv"), lambda m: m["schema"].update(version=SCHEMA_VERSION + 1))}),
    _row("only-empty-runs", ["compare", "{run}"], ["{run}", "no rows"], _only_an_empty_run),
    _row("link-in-a-loop", ["compare", "{run}"], ["{run}", "symbolic link that leads nowhere"], _link_in_a_loop,
         check=_no_recipe_names),
    _row("dangling-link", ["compare", "{run}"], ["{run}", "symbolic link that leads nowhere"], _dangling_link,
         check=_no_recipe_names),
]


@pytest.mark.parametrize("setup, args, words, status, check", REFUSED)
def test_a_hostile_recording_is_refused_with_one_line_and_nothing_written(tmp_path, setup, args, words, status,
                                                                          check):
    """Exit status 2, one error line naming the file (for a bad cell its line and column), no traceback, nothing
    on stdout, nothing written."""
    files = setup(tmp_path) if setup else {}
    refused_before_anything(tmp_path, files, args, words, status, check)
