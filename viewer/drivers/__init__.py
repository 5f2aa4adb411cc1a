"""What drives a frame: the window (:mod:`.window`, the only module that imports moderngl_window, with its
ImGui inspector :mod:`.panel`),
offscreen runs through EGL (:mod:`.headless`), recorded replays of camera paths (:mod:`.replay`) and the
soak, many frames of a moving world without rendering (:mod:`.soak`); the runs of ``viewer view``
(:mod:`.view`) and ``viewer record`` (:mod:`.record`); how many frames a run takes
(:mod:`.frames`); the values their options take, as the commands' parsers offer them (:mod:`.options`); the
conformance kit run on one index (:mod:`.conformance`, ``viewer check-index``); and
scene files generated or imported (:mod:`.scene_files`, ``viewer scene generate`` / ``import``).

Each one only drives a frame's owner: a :class:`viewer.render.ViewerSession` (options, warm-up, one call per
frame) or, without GL, the :class:`viewer.frame.FramePipeline` it wraps (the soak). Modules are imported by
name, so that importing one never loads a window toolkit.
"""
