"""Every culler by name: the indexes (each culled by :class:`viewer.frame.CpuCulling` over it) and the culling
modes that are not "an index, then the CPU" (:data:`MODES`, their classes). ``viewer view --index``,
``viewer record --index``, the window's ``I`` cycle and its panel take these names alike.

A mode is a :class:`viewer.frame.CullingMode` built from ``(world, gl)`` (a :class:`viewer.frame.World` and
the session's :class:`viewer.render.ShaderLibrary`); its ``unavailable(gl)`` says why a context cannot run
it. Adding one: its class, and a line in :data:`MODES`.
"""

from __future__ import annotations

from ..errors import UserError
from ..frame.culling import CullingMode, index_names
from ..index import INDEXES
from ..index.specs import check_index_spec, installed_plugins, parse_index_spec, split_index_list
from .delta_cull import COHERENT, DeltaCulling
from .gpu_cull import GPU, GpuCulling

__all__ = ["MODES", "check_cullers", "culler_names", "unavailable"]

#: Culling modes by name, beside the index names. A mode name shadows the index of the same name in every
#: list of cullers (the index stays the bench's).
MODES: dict[str, type[CullingMode]] = {
    COHERENT: DeltaCulling,  # the coherent index's query, then the drawn side on the GPU following the deltas
    GPU: GpuCulling,  # one dispatch: query, events, frustum cull and records
}


def culler_names(available: bool = False) -> list[str]:
    """Every name, once: the indexes (CPU culling, :func:`viewer.frame.culling.index_names`) then the modes of
    :data:`MODES`; a mode named as an index stays in the index's place and takes precedence over it;
    ``available``: only the indexes whose libraries are installed (a mode's needs are known only once a GL
    context exists)."""
    names = index_names(available)
    return [*names, *(k for k in MODES if k not in names)]


def unavailable(name: str) -> str | None:
    """Why culler ``name`` (a mode, or an index spec: :mod:`viewer.index.specs`) cannot run here (an index's
    missing library), or None. Unknown names: KeyError."""
    if name in MODES:
        return None
    if name in INDEXES:
        return INDEXES[name].unavailable()
    try:
        return parse_index_spec(name).cls.unavailable()
    except UserError:
        raise KeyError(name) from None


def check_cullers(names, flag: str = "--index") -> list[str]:
    """Known, available, distinct cullers (order kept): the modes by name, the indexes by their specs' labels
    (``names``: words, each a list by :mod:`viewer.index.specs`' grammar; each spec checked by building it
    small); a :class:`viewer.errors.UserError` naming ``flag`` otherwise."""
    out: list[str] = []
    for n in split_index_list(list(names)):
        if n not in MODES:
            _check_index(n, flag)
        why = unavailable(n)
        if why:
            raise UserError(f"{flag}: {n!r} is not available here: {why}")
        if n not in out:
            out.append(n)
    if not out:
        raise UserError(f"{flag}: give at least one index")
    return out


def _check_index(text: str, flag: str) -> None:
    """A :class:`UserError` naming ``flag`` unless ``text`` is an index spec that resolves and builds; an
    unknown plain name is offered every culler's name."""
    plain = ":" not in text and not text.endswith(".py")
    if plain and text not in culler_names() and text not in installed_plugins():
        raise UserError(f"{flag}: unknown index {text!r}; choose from {', '.join(culler_names())}, an installed "
                        "plugin's name, package.module:Class or path/to/file.py:Class")
    check_index_spec(parse_index_spec(text, flag=flag), flag=flag)
