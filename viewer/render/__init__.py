"""Everything that touches OpenGL (moderngl), and nothing else does: contexts, shader loading, the
instanced draw, node boxes, HUD text, screenshots, and :class:`ViewerSession`, the owner of a frame: it
runs the GL-free :class:`viewer.frame.FramePipeline` stages, then upload and draw, and builds the frame's
row once. Its options are a :class:`viewer.frame.options.SessionOptions` (re-exported here)."""

from ..frame.options import SessionOptions
from .context import create_headless_context, gl_info, offscreen_target, read_rgb, save_png
from .gpu_timer import GpuTimer, software_renderer
from .renderer import DRAW_MODES, SceneRenderer
from .session import ViewerSession
from .shaders import ShaderLibrary, stage_sources
from .text import TextLayer

__all__ = [
    "DRAW_MODES",
    "GpuTimer",
    "SceneRenderer",
    "SessionOptions",
    "ShaderLibrary",
    "TextLayer",
    "ViewerSession",
    "create_headless_context",
    "gl_info",
    "offscreen_target",
    "read_rgb",
    "save_png",
    "software_renderer",
    "stage_sources",
]
