"""What drives a frame: the window (:mod:`.window`, the only module that imports moderngl_window, with its
ImGui inspector :mod:`.panel`),
offscreen runs through EGL (:mod:`.headless`) and recorded replays of camera paths (:mod:`.replay`).

Each one only drives a :class:`viewer.render.ViewerSession`, the owner of a frame: options, warm-up, one
call per frame. Modules are imported by name, so that importing one never loads a window toolkit.
"""
