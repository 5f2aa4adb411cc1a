"""The names a user picks how the viewer culls by, in one place (GL-free).

Every index of :data:`viewer.index.INDEXES` culls on the CPU (the index answers the query, then the CPU
frustum cull and gather run); :data:`GPU` culls on the GPU instead (:mod:`viewer.render.gpu_cull`: one
compute dispatch over every object, then an indirect draw). ``viewer view --index``, ``viewer record
--index`` and the window's ``I`` cycle all take these names.
"""

from __future__ import annotations

from .errors import UserError

__all__ = ["GPU", "GPU_NEEDS", "check_cullers", "culler_names", "is_gpu", "unavailable"]

#: The GPU culling mode's name (not an index: it needs a GL context, so it lives in viewer.render).
GPU = "gpu"

#: What the GPU mode needs of the GL context (checked when the session makes its context).
GPU_NEEDS = "OpenGL 4.3 compute shaders with 64-bit floats"


def is_gpu(name: str) -> bool:
    """Whether ``name`` culls on the GPU."""
    return name == GPU


def culler_names(available: bool = False) -> list[str]:
    """Every name: the indexes (CPU culling) then :data:`GPU`; ``available``: only the indexes whose
    libraries are installed (the GPU mode's needs are known only once a GL context exists)."""
    from .index import INDEXES

    names = [k for k, cls in INDEXES.items() if not available or cls.unavailable() is None]
    return [*names, GPU]


def unavailable(name: str) -> str | None:
    """Why culler ``name`` cannot run here (an index's missing library), or None. Unknown names: KeyError."""
    from .index import INDEXES

    if name == GPU:
        return None
    if name not in INDEXES:
        raise KeyError(name)
    return INDEXES[name].unavailable()


def check_cullers(names, flag: str = "--index") -> list[str]:
    """Known, available, distinct culler names (order kept); a :class:`viewer.errors.UserError` naming
    ``flag`` otherwise."""
    out: list[str] = []
    known = culler_names()
    for n in names:
        if n not in known:
            raise UserError(f"{flag}: unknown index {n!r}; choose from {', '.join(known)}")
        why = unavailable(n)
        if why:
            raise UserError(f"{flag}: {n!r} is not available here: {why}")
        if n not in out:
            out.append(n)
    if not out:
        raise UserError(f"{flag}: give at least one index")
    return out

