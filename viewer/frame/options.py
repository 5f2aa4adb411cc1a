"""What a viewer session is told: one options object, GL-free, so a command can build and check it before
any GL context exists. :class:`viewer.render.ViewerSession` takes one and reports its current one."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["COLOUR_MODES", "CULL_MODES", "DRAW_MODES", "SessionOptions"]

#: how objects are drawn: point-sprite impostors or instanced low-poly meshes
DRAW_MODES: tuple[str, ...] = ("sprites", "mesh")
#: what colours them: the scene's colours, the octree level holding each object, or each drawn object's LOD band
COLOUR_MODES: tuple[str, ...] = ("category", "level", "band")
#: where the frustum cull runs; culling on the GPU is picked by its index name instead (viewer.frame.culling.GPU,
#: "--index gpu"), so it cycles with the indexes
CULL_MODES: tuple[str, ...] = ("cpu",)


@dataclass
class SessionOptions:
    """Everything a session can be told; :meth:`viewer.render.ViewerSession.set` changes any of them live.

    index : the index to start with (a key of :data:`viewer.index.INDEXES`); indexes : the ones
        ``cycle_index`` goes through (None: every available index); index_options : ``{name: {...}}``
    draw : one of :data:`DRAW_MODES`; colour : one of :data:`COLOUR_MODES`; cull : one of :data:`CULL_MODES`
    fade : fraction of each view distance, at its far end, over which objects fade in (0..1)
    fog : fog density as a multiple of 1 / far (0: no fog)
    radius_scale : every view radius is multiplied by it (> 0; 1: the scene's own), exactly: the culling mode
        is told the scaled radii, not the shader (:meth:`viewer.frame.FramePipeline.set_radius_scale`)
    hud, boxes : draw the HUD / the index's node boxes
    frozen : query and cull from the pose and frustum of the moment it was set (fly out and look)
    hysteresis : ``(margin, relative)`` of the visibility events (see
        :class:`viewer.frame.events.VisibilityTracker`); None: no margin
    capacity : instances the buffers hold at first (they grow by doubling when a frame needs more)
    gpu_time : time each frame's GL work on the device with timer queries (the ``gpu_ms`` column). Off by
        default: on llvmpipe a timer query's end waits for the commands it brackets, which moves that wait into
        the stage around it (the coherent mode's ``cull_ms`` doubled on ``dynamic-1m``)
    """

    index: str = "brute"
    indexes: list[str] | None = None
    index_options: dict[str, dict] = field(default_factory=dict)
    draw: str = "sprites"
    colour: str = "category"
    cull: str = "cpu"
    fade: float = 0.15
    fog: float = 1.5
    radius_scale: float = 1.0
    hud: bool = True
    boxes: bool = False
    frozen: bool = False
    hysteresis: tuple[float, bool] | None = None
    capacity: int = 4096
    gpu_time: bool = False

    def __post_init__(self) -> None:
        for name, allowed in (("draw", DRAW_MODES), ("colour", COLOUR_MODES), ("cull", CULL_MODES)):
            value = getattr(self, name)
            if value not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
        if not 0.0 <= float(self.fade) <= 1.0:
            raise ValueError(f"fade must be in [0, 1]; got {self.fade!r}")
        if not float(self.fog) >= 0.0:
            raise ValueError(f"fog must be >= 0; got {self.fog!r}")
        if not 0.0 < float(self.radius_scale) < float("inf"):
            raise ValueError(f"radius_scale must be > 0 and finite; got {self.radius_scale!r}")
