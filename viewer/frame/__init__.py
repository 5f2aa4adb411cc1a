"""The frame, GL-free: camera -> culling mode (an index query, or the GPU) -> stages -> instance records
-> the frame's row.

Modules, in the order a frame uses them:

- :mod:`.stages`: the stages of a frame and the columns of its row, each declared once (standard library
  only: reading recordings never loads numba);
- :mod:`.stats`: :class:`FrameStats`, the row, derived from those declarations;
- :mod:`.pipeline`: :class:`FramePipeline`, which runs a frame and owns its buffers;
- :mod:`.views`: :class:`ViewSet`, many views of one world culled together in one frame;
- :mod:`.culling`: :class:`CullingMode`, what a mode sees of a frame (:class:`ModeFrame`, :class:`World`) and
  the CPU mode (an index answers the ids); the GPU's modes live in :mod:`viewer.render.modes`;
- :mod:`.motion`, :mod:`.events`, :mod:`.frustum`: the movers, the visibility events, the frustum cull;
- :mod:`.instances`, :mod:`.mesh_batches`: the instance record layout, and records grouped by mesh;
- :mod:`.options`: :class:`SessionOptions`, what a viewer session is told;
- ``_*_kernels``: their numba kernels.

Names are exported lazily, so ``import viewer.frame.stages`` loads neither numba nor the indexes.
"""

from __future__ import annotations

from importlib import import_module

_EXPORTS = {
    "STAGES": "stages", "Stage": "stages", "Column": "stages", "COLUMN_INFO": "stages", "SCHEMA_VERSION": "stages",
    "FrameStats": "stats", "FRAME_COLUMNS": "stats",
    "FramePipeline": "pipeline", "camera_for_scene": "pipeline", "pack_colours": "pipeline", "warm": "pipeline",
    "LEVEL_PALETTE": "pipeline",
    "CullingMode": "culling", "CpuCulling": "culling", "ModeFrame": "culling", "World": "culling", "Look": "culling",
    "index_names": "culling",
    "SessionOptions": "options", "DRAW_MODES": "options", "COLOUR_MODES": "options",
    "INSTANCE_DTYPE": "instances",
    "MotionState": "motion", "VisibilityTracker": "events",
    "ViewSet": "views", "MAX_VIEWS": "views",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'viewer.frame' has no attribute {name!r}")
