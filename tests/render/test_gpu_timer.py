"""GL timer queries: a span of GL work reads a duration in ms, spans do not nest, and a context's renderer says
whether the device is the CPU."""

from __future__ import annotations

import numpy as np
import pytest

from viewer.render.gpu_timer import NO_TIMER, GpuTimer, software_renderer

pytestmark = pytest.mark.gl

W, H = 64, 64


def _draw(gl):
    prog = gl.ctx.program(
        vertex_shader="#version 330\nin vec2 p; void main() { gl_Position = vec4(p, 0.0, 1.0); }",
        fragment_shader="#version 330\nout vec4 c; void main() { c = vec4(1.0, 0.5, 0.0, 1.0); }")
    vbo = gl.ctx.buffer(np.array([-1, -1, 3, -1, -1, 3], dtype="f4").tobytes())
    return gl.ctx.simple_vertex_array(prog, vbo, "p")


def test_a_span_of_gl_work_reads_a_duration(gl):
    timer = GpuTimer(gl.ctx)
    assert timer.available, timer.why
    vao = _draw(gl)
    gl.fbo.use()
    for _ in range(3):
        with timer.span():
            gl.fbo.clear(0.0, 0.0, 0.0, 1.0)
            vao.render()
        gl.ctx.finish()
        spans = timer.take()
        assert len(spans) == 1
        ms = timer.elapsed_ms(spans)
        assert 0.0 <= ms < 4294.97  # a 32-bit count of nanoseconds
    assert timer.take() == []  # read spans go back to the pool


def test_a_span_inside_another_is_part_of_it(gl):
    timer = GpuTimer(gl.ctx)
    vao = _draw(gl)
    with timer.span():
        with timer.span():
            vao.render()
        vao.render()
    gl.ctx.finish()
    spans = timer.take()
    assert len(spans) == 1 and timer.elapsed_ms(spans) >= 0.0


def test_no_timer_times_nothing():
    with NO_TIMER.span():
        pass
    assert not NO_TIMER.available and NO_TIMER.take() == [] and NO_TIMER.elapsed_ms([]) == 0.0


@pytest.mark.parametrize("renderer, software", [("llvmpipe (LLVM 15.0.6, 256 bits)", True), ("softpipe", True),
                                                ("NVIDIA GeForce RTX 4090/PCIe/SSE2", False), (None, False)])
def test_a_software_renderer_is_named_as_one(renderer, software):
    assert software_renderer(renderer) is software
