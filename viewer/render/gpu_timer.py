"""The device's own time of a frame's GL work, from GL timer queries (``GL_TIME_ELAPSED``).

A frame's wall-clock stages wait for the GPU with ``ctx.finish()``: that is the CPU's view, queueing and
driver time included. A timer query asks the device how long the commands between its begin and end took
on it. A :class:`GpuTimer` brackets each piece of GL work of a frame (the culling modes' dispatches, the
draw) in a span of its own (timer queries do not nest: a span begun inside another is part of the outer
one), and :meth:`GpuTimer.take` hands back the spans of the frame so far; :meth:`GpuTimer.elapsed_ms` reads
them once the frame's rows are made, after its ``ctx.finish()``, so reading costs no wait and falls outside
``frame_ms``. The sum is the recording's ``gpu_ms`` (:data:`viewer.frame.stages.GPU_COLUMN`).

On a software renderer (Mesa's llvmpipe) the "device" is the CPU: its timer measures the driver's own
clock around the commands, not a GPU's work, and :func:`software_renderer` says so for the printed line.

Usage::

    timer = GpuTimer(ctx)
    with timer.span():
        vao.render()
    ctx.finish()
    ms = timer.elapsed_ms(timer.take())
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import moderngl

__all__ = ["GpuTimer", "NO_TIMER", "software_renderer"]

#: What a 32-bit ``GL_QUERY_RESULT`` reads when the driver saw the end before the begin (llvmpipe, the
#: first query of a context): no duration, left out of the sum.
_WRAPPED = 0xFFFFFFFF

#: Renderer names (lower case) of GL implementations that run on the CPU.
_SOFTWARE = ("llvmpipe", "softpipe", "swrast", "software rasterizer", "lavapipe")


def software_renderer(renderer: str | None) -> bool:
    """Whether the GL renderer string ``renderer`` (``GL_RENDERER``) names a CPU implementation (llvmpipe...),
    whose timer queries measure the CPU's work, not a GPU's."""
    r = (renderer or "").lower()
    return any(s in r for s in _SOFTWARE)


class GpuTimer:
    """Timer-query spans of GL work on one context, read per frame.

    ctx : the moderngl context; why_not : a reason not to time (an idle timer that says it). A context whose driver has no timer queries (GL below 3.3 without
    ``ARB_timer_query``) makes an idle timer: :attr:`available` False, :attr:`why` the reason, every span
    free and every frame 0 ms.

    The queries are pooled: a span takes one from the pool, :meth:`elapsed_ms` gives it back once read.
    """

    def __init__(self, ctx: moderngl.Context | None, why_not: str | None = None) -> None:
        self.ctx = ctx
        self._pool: list = []
        self._spans: list = []  # begun this frame, not yet taken
        self._open = False
        self.why: str | None = why_not
        if ctx is None or why_not:
            self.why = why_not or "no GL context"
            return
        try:
            self._pool.append(ctx.query(time=True))
        except (moderngl.Error, AttributeError) as exc:
            self.why = f"no GL timer queries on this context ({exc})"

    @property
    def available(self) -> bool:
        """Whether spans are timed (the context has timer queries)."""
        return self.why is None

    @contextmanager
    def span(self) -> Iterator[None]:
        """Time the GL commands issued inside the block on the device. Inside another span: part of it."""
        if self._open or not self.available:
            yield
            return
        q = self._pool.pop() if self._pool else self.ctx.query(time=True)
        self._open = True
        try:
            with q:
                yield
        finally:
            self._open = False
            self._spans.append(q)

    def take(self) -> list:
        """The spans begun since the last take (to read with :meth:`elapsed_ms` when the frame is done)."""
        spans, self._spans = self._spans, []
        return spans

    def elapsed_ms(self, spans: list) -> float:
        """Milliseconds the device spent in ``spans`` (:meth:`take`), summed; 0.0 for none. Waits for results
        not yet in (none after the frame's ``ctx.finish()``); a reading the driver wrapped round (the end
        before the begin) counts 0. The queries go back to the pool."""
        total = 0
        for q in spans:
            ns = int(q.elapsed)
            if ns != _WRAPPED:
                total += ns
            self._pool.append(q)
        return total / 1e6

    def release(self) -> None:
        """Free the queries (the context stays)."""
        for q in (*self._pool, *self._spans):
            try:
                q.release()
            except Exception:  # pragma: no cover - a context already gone
                pass
        self._pool.clear()
        self._spans.clear()


class _NoTimer(GpuTimer):
    """The timer of a culling mode no session handed one: spans cost nothing and time nothing."""

    def __init__(self) -> None:
        super().__init__(None)


#: A timer that times nothing (a culling mode's default until its session hands it the session's).
NO_TIMER: GpuTimer = _NoTimer()
