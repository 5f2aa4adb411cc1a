"""One viewer session: the GL-free frame pipeline plus the GL stages (upload, draw), node boxes, HUD and
screenshots, into one framebuffer (offscreen for headless runs, the window's for the app)."""

from __future__ import annotations

from time import perf_counter

import moderngl
import numpy as np

from ..camera import FlyCamera, InputState, view_rotation
from ..frame import FramePipeline, FrameStats, camera_for_scene
from .context import read_rgb, save_png
from .renderer import SceneRenderer
from .shaders import ShaderLibrary
from .text import TextLayer

__all__ = ["ViewerSession"]

FOG_COLOUR = (0.62, 0.70, 0.80)


class ViewerSession:
    """Renders frames of one scene.

    Parameters
    ----------
    ctx : the moderngl context; fbo : the target framebuffer (its viewport is the image size)
    scene : a :class:`viewer.scenes.Scene` (or anything with its array fields)
    index : the index to start with; indexes : the ones ``cycle_index`` goes through
    draw : "sprites" or "mesh"; colour : "category" or "level"
    fade : fraction of the view distance over which objects fade in
    fog : fog density as a multiple of 1 / far (0: no fog)
    hud, boxes : whether the HUD and the index's node boxes are drawn
    camera : the camera to fly (default: :func:`viewer.frame.camera_for_scene`)
    """

    def __init__(self, ctx: moderngl.Context, fbo: moderngl.Framebuffer, scene, *, index: str = "brute",
                 indexes: list[str] | None = None, draw: str = "sprites", colour: str = "category",
                 fade: float = 0.15, fog: float = 1.5, hud: bool = True, boxes: bool = False,
                 camera: FlyCamera | None = None, capacity: int = 4096):
        self.ctx = ctx
        self.fbo = fbo
        w, h = fbo.viewport[2], fbo.viewport[3]
        self.camera = camera if camera is not None else camera_for_scene(scene, w / h)
        self.camera.aspect = w / h
        self.pipeline = FramePipeline(scene, index, indexes=indexes, fade=fade, capacity=capacity)
        self.pipeline.set_colour_mode(colour)
        self.shaders = ShaderLibrary(ctx)
        self.fog_colour = FOG_COLOUR
        self.renderer = SceneRenderer(ctx, self.shaders, capacity=capacity, mode=draw, fog_colour=FOG_COLOUR,
                                      fog_density=fog / max(self.camera.far, 1e-9))
        self.text = TextLayer(ctx, self.shaders)
        self.show_hud = bool(hud)
        self.show_boxes = bool(boxes)
        self.help_line = ""
        self.last: FrameStats | None = None
        self.scene_name = self.pipeline.name

    # ----------------------------------------------------------------------------- controls
    def resize(self, fbo: moderngl.Framebuffer) -> None:
        """Render into ``fbo`` from now on (after a window resize)."""
        self.fbo = fbo
        w, h = fbo.viewport[2], fbo.viewport[3]
        if w > 0 and h > 0:
            self.camera.aspect = w / h

    def cycle_index(self, step: int = 1) -> str:
        return self.pipeline.cycle_index(step)

    def use_index(self, name: str) -> None:
        self.pipeline.use_index(name)

    def toggle_frozen(self) -> bool:
        return self.pipeline.toggle_frozen(self.camera)

    def set_frozen(self, frozen: bool) -> None:
        self.pipeline.set_frozen(frozen, self.camera)

    def toggle_colour(self) -> str:
        return self.pipeline.toggle_colour_mode()

    def toggle_draw_mode(self) -> str:
        self.renderer.mode = "mesh" if self.renderer.mode == "sprites" else "sprites"
        return self.renderer.mode

    # ----------------------------------------------------------------------------- the frame
    def frame(self, dt: float, *, pose=None, input_state: InputState | None = None, moved: int = 0) -> FrameStats:
        """Update the camera (``pose`` or ``input_state`` over ``dt``), run the pipeline, upload, draw.

        Returns the frame's :class:`viewer.frame.FrameStats`; ``draw_ms`` spans clear, the instanced draw
        and ``ctx.finish()`` (GL timer queries are unreliable on software renderers); ``frame_ms`` spans
        everything including node boxes and the HUD.
        """
        t0 = perf_counter()
        st = self.pipeline.step(self.camera, dt, pose=pose, input_state=input_state, moved=moved)
        n = st.drawn
        t1 = perf_counter()
        self.renderer.upload(self.pipeline.instance_bytes(), n)
        t2 = perf_counter()
        fbo = self.fbo
        fbo.use()
        fbo.clear(*self.fog_colour, 1.0, depth=1.0)
        cam = self.camera
        rot = view_rotation(cam.yaw, cam.pitch)
        proj = cam.projection_matrix()
        self.renderer.draw(n, rot, proj, fbo.viewport[3])
        self.ctx.finish()
        t3 = perf_counter()
        extra = False
        if self.show_boxes:
            nb = self.pipeline.node_boxes()
            if nb is not None:
                boxes, visited = nb
                self.renderer.upload_boxes(np.asarray(boxes), np.asarray(visited), cam.position)
                self.renderer.draw_boxes(rot, proj)
                extra = True
        if self.show_hud:
            self.text.draw(self.hud_lines(self.last if self.last is not None else st), (fbo.viewport[2], fbo.viewport[3]))
            extra = True
        if extra:
            self.ctx.finish()
        t4 = perf_counter()
        st.upload_ms = (t2 - t1) * 1e3
        st.draw_ms = (t3 - t2) * 1e3
        st.frame_ms = (t4 - t0) * 1e3
        self.last = st
        return st

    def hud_lines(self, st: FrameStats) -> list[str]:
        """The HUD text for the stats ``st`` (the previous frame's: this frame's are not known yet)."""
        fps = 1000.0 / st.frame_ms if st.frame_ms > 0 else 0.0
        p = self.pipeline
        flags = []
        if p.frozen:
            flags.append("CULLING FROZEN")
        if self.show_boxes and p.node_boxes() is None:
            flags.append("no node boxes for this index")
        colour = p.colour_mode if (p.colour_mode == "category" or p.has_levels) else "category (no levels)"
        lines = [
            f"{self.scene_name}  index: {st.index}  {fps:6.1f} fps  frame {st.frame_ms:7.2f} ms  {'  '.join(flags)}",
            f"update {st.update_ms:6.2f}  query {st.query_ms:6.2f}  cull {st.cull_ms:6.2f}  gather {st.gather_ms:6.2f}"
            f"  upload {st.upload_ms:6.2f}  draw {st.draw_ms:7.2f} ms",
            f"objects {st.objects}  candidates {st.candidates}  visible {st.visible}  drawn {st.drawn}"
            f"  nodes {st.nodes_visited} (max/level {st.max_nodes_per_level})",
            f"pos ({st.cam_x:.1f}, {st.cam_y:.1f}, {st.cam_z:.1f})  yaw {st.yaw:.0f}  pitch {st.pitch:.0f}"
            f"  speed {self.camera.speed:.3g}/s  colour {colour}  draw {self.renderer.mode}",
        ]
        if self.help_line:
            lines.append(self.help_line)
        return lines

    # ----------------------------------------------------------------------------- images
    def image(self) -> np.ndarray:
        """The last rendered image, (H, W, 3) uint8, row 0 at the top."""
        return read_rgb(self.fbo)

    def screenshot(self, path) -> str:
        """Save the last rendered image as a PNG at ``path`` (atomically); returns the path."""
        return save_png(path, self.image())
