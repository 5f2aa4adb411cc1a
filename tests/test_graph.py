"""The HUD's live stage graph: its numbers (no GL) and its pixels (headless EGL)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from viewer.frame.stages import STAGES
from viewer.render.graph import GRAPH_STAGES, STAGE_COLOURS, StageHistory, nice_scale


def frame(index="octree", **ms):
    values = {s: 0.0 for s in GRAPH_STAGES}
    values.update({f"{k}_ms": v for k, v in ms.items()})
    return SimpleNamespace(index=index, **values)


def test_history_keeps_the_last_frames_and_marks_index_switches():
    h = StageHistory(4)
    for k in range(6):
        h.push(frame("octree" if k < 4 else "hashgrid", query=k))
    assert h.times[:, GRAPH_STAGES.index("query_ms")].tolist() == [2, 3, 4, 5]
    assert h.indexes == ["octree", "octree", "hashgrid", "hashgrid"] and h.index == "hashgrid"
    assert h.switches() == [2]
    fresh = StageHistory(4)
    fresh.push(frame("brute"))
    assert fresh.switches() == []  # the empty rows before the first frame are no switch


def test_nice_scale():
    assert [nice_scale(v) for v in (0.0, 0.7, 1.0, 1.2, 3.0, 7.5, 16.7, 40.0)] == [0.1, 1.0, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0]


@pytest.mark.gl
def test_the_graph_draws_each_stage_in_its_colour_stacked_in_order():
    render = pytest.importorskip("viewer.render")
    from viewer.render.graph import GraphLayer
    from viewer.render.shaders import ShaderLibrary

    try:
        ctx = render.create_headless_context()
    except RuntimeError as exc:
        pytest.skip(str(exc))
    try:
        fbo = render.offscreen_target(ctx, (480, 240))
        fbo.use()
        fbo.clear(0.0, 0.0, 0.0, 1.0)
        h = StageHistory(100)
        for k in range(100):  # every stage 1 ms, a switch halfway
            h.push(frame("octree" if k < 50 else "bvh", **{st.name: 1 for st in STAGES}))
        layer = GraphLayer(ctx, ShaderLibrary(ctx), size=(400, 120))
        layer.draw(h, (480, 240))
        ctx.finish()
        img = render.read_rgb(fbo).astype(float) / 255
    finally:
        ctx.release()
    assert len(STAGES) < 10 and layer.scale_ms == 10.0  # 1 ms a stage stacked -> a 0..10 ms axis
    x0, y0, w, hgt = layer.box((480, 240))
    px = hgt / 10.0  # pixels per millisecond
    col = img[:, int(x0 + w / 4)]  # a column away from the switch mark
    # from the bottom up: every stage in pipeline order, 1 ms each, over the black panel
    for s, colour in enumerate(STAGE_COLOURS):
        seen = col[int(y0 + hgt - px * (s + 0.5))]
        assert np.abs(seen - 0.95 * colour).max() < 0.03, (GRAPH_STAGES[s], seen, colour)
    assert col[int(y0 + hgt - px * (len(STAGES) + 1))].max() < 0.05  # nothing stacked above the last stage
    mark = img[int(y0 + hgt / 2), int(x0 + 50 * w / 100)]
    assert mark.min() > 0.8  # the index switch: a white line
