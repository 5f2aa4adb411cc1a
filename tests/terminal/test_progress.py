"""``viewer.terminal.progress``: rich draws the bar; a log or a pipe gets a plain line every 10%, no control
codes; a terminal gets the bar redrawn in place; ``--quiet`` gets nothing."""

from __future__ import annotations

import io
import re

from viewer.terminal.progress import Progress, ProgressCallback


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_pipe_gets_a_plain_line_every_tenth_and_no_control_codes():
    s = io.StringIO()
    bar = Progress(1000, "record 2 indexes", stream=s)
    for k in range(1, 1001):
        bar.update(k)
    bar.close()
    lines = s.getvalue().splitlines()
    assert len(lines) == 10
    assert all(ln.startswith("record 2 indexes") for ln in lines)
    assert [f"{10 * (i + 1)}.0%" in ln and f"{100 * (i + 1)}/1000 frames" in ln for i, ln in enumerate(lines)] == [True] * 10
    assert "\x1b" not in s.getvalue() and "\r" not in s.getvalue()


def test_a_jump_past_several_tenths_prints_one_line():
    s = io.StringIO()
    bar = Progress(100, "map", unit="points", stream=s)
    bar.update(35)
    bar.update(100)
    assert len(s.getvalue().splitlines()) == 2 and "100/100 points" in s.getvalue().splitlines()[-1]


def test_a_terminal_gets_the_bar_drawn_in_place_and_its_last_state_kept():
    s = _Terminal()
    bar = Progress(50, "sweep tiny", unit="tasks", stream=s, interval=0.0)
    for k in range(1, 51):
        bar.update(k)
    bar.close()
    text = s.getvalue()
    assert "\x1b[" in text  # drawn by rich's terminal codes (in place, the cursor hidden while it runs)
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
    assert "sweep tiny" in plain and "50/50 tasks" in plain and plain.endswith("\n")


def test_quiet_draws_nothing_and_small_jobs_draw_nothing():
    s = io.StringIO()
    bar = Progress(10, "record", stream=s, enabled=False)
    for k in range(11):
        bar.update(k)
    bar.close()
    assert s.getvalue() == "" and bar.done == 10
    cb = ProgressCallback("generate", min_total=1000)
    cb(10, 100)  # below min_total: no bar at all
    assert cb._bar is None
