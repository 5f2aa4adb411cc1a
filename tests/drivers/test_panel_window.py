"""The inspector panel in a real window (Xvfb, xdotool, :mod:`tests.support.xwindow`): a click on a culling mode in
its list switches the index (the take's ``index`` column), a drag of the view-distance slider makes the
visible count brute force's at the scaled radii, and the panel's own time stays out of ``frame_ms``.

One window session serves the three tests (a module fixture): it records take-1 while the index is
switched by a click, then drags the slider, then records take-2 at the new scale.

Where the panel's widgets are: the panel opens at :data:`viewer.drivers.panel.PANEL_POS`, laid out by Dear
ImGui's default style (13 px font, frame padding 4 x 3, item spacing 8 x 4, window padding 8), so its
first row (the view-distance slider) is centred 19 + 8 + 19 / 2 pixels below its top, and the culling
list's rows are 17 pixels apart from :data:`LIST_TOP` (measured on the panel's screenshot), in
:data:`viewer.drivers.panel.CULLER_COLUMNS` columns of equal width.
"""

from __future__ import annotations

import csv
import json
import math
import os
import queue
import re
import statistics
import threading
import time

import numpy as np
import pytest

from tests.support.xwindow import open_window, reap, xdo, xvfb_display

pytestmark = pytest.mark.window

SIZE = (640, 480)
SLIDER_Y = 19 + 8 + 19 // 2  # title bar, window padding, half a frame
SLIDER_X = (8, 158)  # the slider's frame: window padding, then its 150 px width
LIST_TOP = 151  # the culling list's first row, centre
ROW = 17  # 13 px text + 4 px spacing
SCROLLBAR = 22  # the panel is taller than the window: its scrollbar and padding narrow its content


def _scene(tmp_path):
    scenes = pytest.importorskip("viewer.scenes")
    rng = np.random.default_rng(26)
    n = 20_000
    sc = scenes.Scene(name="panel", centres=rng.uniform(-500, 500, (n, 3)), radii=rng.uniform(20, 120, n),
                      sizes=np.full(n, 3.0, np.float32), colours=np.tile(np.uint8([[60, 170, 210, 255]]), (n, 1)),
                      category=np.zeros(n, np.int32), world=1000.0)
    return sc, scenes.save_scene(sc, tmp_path / "panel.npz")


class Lines:
    """The viewer's stderr, read on a thread, so the test can wait for what it says."""

    def __init__(self, stream):
        self.seen: list[str] = []
        self._q: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: [self._q.put(line) for line in stream], daemon=True).start()

    def wait(self, pattern: str, timeout: float = 120.0) -> re.Match:
        end = time.monotonic() + timeout
        rx = re.compile(pattern)
        for line in self.seen:
            if m := rx.search(line):
                return m
        while time.monotonic() < end:
            try:
                line = self._q.get(timeout=0.2)
            except queue.Empty:
                continue
            self.seen.append(line)
            if m := rx.search(line):
                return m
        pytest.fail(f"the viewer never said /{pattern}/; it said:\n{''.join(self.seen)[-3000:]}")

    def rest(self) -> str:
        while not self._q.empty():
            self.seen.append(self._q.get())
        return "".join(self.seen)


def _rows(path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def flown(tmp_path_factory):
    """Fly the panel session once; returns the scene, the takes' rows and metadata, and what the viewer said."""
    from viewer.drivers.panel import CULLER_COLUMNS, PANEL_WIDTH
    from viewer.render.modes import culler_names

    tmp = tmp_path_factory.mktemp("panel")
    sc, path = _scene(tmp)
    takes = tmp / "takes"
    target = "scan"  # the baseline: clicked in the list while brute force answers
    k = culler_names(available=True).index(target)
    col_w = (PANEL_WIDTH - SCROLLBAR) / CULLER_COLUMNS  # the columns are stretched alike
    cell = (int(8 + col_w * (k % CULLER_COLUMNS) + 12), LIST_TOP + ROW * (k // CULLER_COLUMNS))
    gen = xvfb_display()
    display = next(gen)
    env = dict(os.environ, DISPLAY=display)
    proc, wid = open_window(env, path, "--size", f"{SIZE[0]}x{SIZE[1]}", "--index", "brute", "--pose", "0,0,0,0,0",
                            "--record", str(takes), name="viewer - panel")
    try:
        said = Lines(proc.stderr)
        said.wait(r"recording take-1")
        time.sleep(1.0)
        xdo(env, "mousemove", "--window", wid, str(cell[0]), str(cell[1]))
        time.sleep(0.3)
        xdo(env, "click", "1")
        said.wait(rf"index: {target}")
        time.sleep(1.0)  # frames answered by the clicked index
        xdo(env, "key", "r")
        said.wait(r"take-1: \d+ frames")
        # drag the view-distance slider from its grab (scale 1 on the logarithmic 0.1..4) to the right
        x1 = SLIDER_X[0] + round((SLIDER_X[1] - SLIDER_X[0]) * math.log(10) / math.log(40))
        xdo(env, "mousemove", "--window", wid, str(x1), str(SLIDER_Y))
        time.sleep(0.3)
        xdo(env, "mousedown", "1")
        for x in range(x1, x1 + 31, 10):
            time.sleep(0.2)
            xdo(env, "mousemove", "--window", wid, str(x), str(SLIDER_Y))
        time.sleep(0.3)
        xdo(env, "mouseup", "1")
        said.wait(r"view distance x")
        time.sleep(1.0)
        xdo(env, "mousemove", "--window", wid, "600", "400")  # off the panel
        xdo(env, "key", "r")
        said.wait(r"recording take-2")
        time.sleep(1.5)
        xdo(env, "key", "r")
        said.wait(r"take-2: \d+ frames")
        xdo(env, "key", "Escape")
        proc.wait(timeout=60)
        err = said.rest()
    finally:
        reap(proc)
        gen.close()
    assert proc.returncode == 0, err[-3000:]
    scales = [float(m) for m in re.findall(r"view distance x(\S+):", err)]
    panel = re.search(r"panel drawn (\d+) frames, median ([\d.]+) ms", err)
    return {
        "scene": sc, "err": err, "target": target, "scales": scales, "panel": panel,
        "take1": _rows(takes / "take-1.csv"), "take2": _rows(takes / "take-2.csv"),
        "meta2": json.loads((takes / "take-2.meta.json").read_text()),
    }


def _brute_count(sc, row, scale: float) -> int:
    from viewer.index import brute_query

    p = (float(row["cam_x"]), float(row["cam_y"]), float(row["cam_z"]))
    return len(brute_query(sc.centres, sc.radii * scale, p))


def test_a_click_in_the_list_switches_the_index(flown):
    idx = [r["index"] for r in flown["take1"]]
    assert idx[0] == "brute" and idx[-1] == flown["target"], idx
    switched = idx.index(flown["target"])
    assert set(idx[switched:]) == {flown["target"]}  # switched once, and stayed
    for r in flown["take1"]:  # both answer exactly
        assert int(r["visible"]) == _brute_count(flown["scene"], r, 1.0)


def test_the_scale_slider_makes_the_visible_count_brute_forces_at_the_scaled_radii(flown):
    scales = flown["scales"]
    assert scales, flown["err"][-2000:]
    scale = scales[-1]
    assert scale > 1.2  # dragged right
    assert flown["meta2"]["radius_scale"] == scale
    rows = flown["take2"]
    assert rows
    before = _brute_count(flown["scene"], rows[0], 1.0)
    for r in rows:
        assert int(r["visible"]) == _brute_count(flown["scene"], r, scale)
        assert float(r["yaw"]) == 0.0 and float(r["pitch"]) == 0.0  # the drag went to the panel, not the camera
    assert int(rows[0]["visible"]) > before


def test_the_panels_time_is_outside_frame_ms(flown):
    from viewer.frame.stages import STAGE_COLUMNS

    m = flown["panel"]
    assert m, flown["err"][-2000:]
    frames, panel_ms = int(m.group(1)), float(m.group(2))
    assert frames > 0 and panel_ms > 0.0
    # frame_ms is its stages plus a little glue; had it held the panel, the rest would be the panel's time
    rest = [float(r["frame_ms"]) - sum(float(r[c]) for c in STAGE_COLUMNS) for r in flown["take1"] + flown["take2"]]
    assert statistics.median(rest) < 0.5 * panel_ms, (statistics.median(rest), panel_ms)
