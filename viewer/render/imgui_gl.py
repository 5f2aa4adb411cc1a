"""The GL half of the window's inspector panel: Dear ImGui 1.92's texture protocol and draw loop on moderngl.

moderngl-window's ImGui integration (``moderngl_window.integrations.imgui_bundle``, 3.1.1, the newest
release) predates Dear ImGui 1.92, which imgui-bundle 1.93 ships: its renderer asks the font atlas for one
RGBA image (``get_tex_data_as_rgba32``, gone) and reads ``ImDrawCmd.texture_id`` (now ``get_tex_id()``).
In 1.92 the renderer instead creates, updates and destroys the textures ImGui lists in its platform IO
each frame (``ImGuiBackendFlags_RendererHasTextures``). :class:`ImGuiTextureProtocol` is that, as a
mixin over the integration's renderer, which keeps its shader, buffers, vertex array and input handling:
``class Renderer(ImGuiTextureProtocol, ModernglWindowRenderer)`` (the window driver does it: only it
imports moderngl-window). It reads the integration's attributes ``ctx``, ``io``, ``projMat``,
``_vertex_buffer``, ``_index_buffer`` and ``_vao``.
"""

from __future__ import annotations

import ctypes

import moderngl
from imgui_bundle import imgui

__all__ = ["ImGuiTextureProtocol"]


class ImGuiTextureProtocol:
    """Overrides the integration renderer's ``refresh_font_texture`` (its ``__init__`` calls it: here it
    declares the 1.92 protocol) and ``render`` (textures synced, then the draw lists drawn)."""

    def refresh_font_texture(self) -> None:
        self._textures: dict[int, moderngl.Texture] = {}
        self.io.backend_flags |= imgui.BackendFlags_.renderer_has_textures.value
        side = int(self.ctx.info["GL_MAX_TEXTURE_SIZE"])
        pio = imgui.get_platform_io()
        pio.renderer_texture_max_width = side
        pio.renderer_texture_max_height = side

    def _sync_textures(self) -> None:
        """Create, update or destroy each texture ImGui asks for (the font atlas grows as glyphs are used)."""
        status = imgui.ImTextureStatus
        for tex in imgui.get_platform_io().textures:
            if tex.status == status.want_create:
                gl_tex = self.ctx.texture((tex.width, tex.height), 4, tex.get_pixels_array())
                gl_tex.repeat_x = gl_tex.repeat_y = False
                self._textures[gl_tex.glo] = gl_tex
                tex.set_tex_id(gl_tex.glo)
                tex.status = status.ok
            elif tex.status == status.want_updates:
                gl_tex = self._textures[tex.tex_id]
                pixels = tex.get_pixels_array().reshape(tex.height, tex.width, tex.bytes_per_pixel)
                for r in tex.updates:
                    gl_tex.write(pixels[r.y:r.y + r.h, r.x:r.x + r.w].tobytes(), viewport=(r.x, r.y, r.w, r.h))
                tex.status = status.ok
            elif tex.status == status.want_destroy:
                gl_tex = self._textures.pop(tex.tex_id, None)
                if gl_tex is not None:
                    gl_tex.release()
                tex.set_tex_id(0)
                tex.status = status.destroyed

    def render(self, draw_data) -> None:
        """Draw ImGui's ``draw_data`` over what the bound framebuffer holds (blended, scissored), then wait
        for the GPU to finish it."""
        self._sync_textures()
        io = self.io
        w, h = io.display_size
        sx, sy = io.display_framebuffer_scale
        fb_h = int(h * sy)
        if int(w * sx) == 0 or fb_h == 0:
            return
        self.projMat.value = (2.0 / w, 0.0, 0.0, 0.0, 0.0, -2.0 / h, 0.0, 0.0, 0.0, 0.0, -1.0, 0.0, -1.0, 1.0, 0.0, 1.0)
        draw_data.scale_clip_rects(imgui.ImVec2(sx, sy))
        ctx = self.ctx
        ctx.enable_only(moderngl.BLEND)
        ctx.blend_equation = moderngl.FUNC_ADD
        ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA
        for cmds in draw_data.cmd_lists:
            # the lists' own memory, written without a copy
            vtx = (ctypes.c_byte * (cmds.vtx_buffer.size() * imgui.VERTEX_SIZE)).from_address(cmds.vtx_buffer.data_address())
            idx = (ctypes.c_byte * (cmds.idx_buffer.size() * imgui.INDEX_SIZE)).from_address(cmds.idx_buffer.data_address())
            self._vertex_buffer.orphan(max(len(vtx), self._vertex_buffer.size))
            self._index_buffer.orphan(max(len(idx), self._index_buffer.size))
            self._vertex_buffer.write(vtx)
            self._index_buffer.write(idx)
            for cmd in cmds.cmd_buffer:
                self._textures[cmd.get_tex_id()].use(0)
                x0, y0, x1, y1 = cmd.clip_rect
                ctx.scissor = int(x0), int(fb_h - y1), int(x1 - x0), int(y1 - y0)
                self._vao.render(moderngl.TRIANGLES, vertices=cmd.elem_count, first=cmd.idx_offset)
        ctx.scissor = None
        ctx.disable(moderngl.BLEND)
        ctx.finish()  # the panel's GPU work ends inside the panel's time, not in the next frame's draw_ms
