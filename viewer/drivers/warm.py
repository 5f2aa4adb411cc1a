"""What a driver compiles before its first timed frame, and only that: the indexes' entry points it runs
(inside one :func:`viewer.index.warm_scope` left open for the rest of the run, so an index built later
compiles nothing more) and the frame's kernels, each compilation said on stderr on a first run
(:func:`viewer.kernels.compile.reporting`). ``viewer view`` and ``viewer record`` call it after their
scene has loaded; every session still warms up before its first recorded frame
(:meth:`viewer.render.ViewerSession.warm_up`), finding them warm.
"""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager, ExitStack
from typing import Iterable, Sequence

__all__ = ["compiling", "default_indexes", "warm_kernels"]


def default_indexes(*names: str) -> list[str]:
    """Those of ``names`` that are indexes of :data:`viewer.index.INDEXES` (order kept): a command's default
    ``--index`` when the user gives none."""
    from ..index import INDEXES

    return [n for n in names if n in INDEXES]


def compiling(quiet: bool = False) -> AbstractContextManager:
    """Inside the block, a first run says on stderr what it compiles and how long it takes (nothing when
    ``quiet``, or when the kernels come from numba's cache)."""
    from ..kernels.compile import reporting

    return reporting(sys.stderr, enabled=not quiet)


def warm_kernels(scene, names: Sequence[str], entry_points: Iterable[str], *, scopes: ExitStack,
                 probe: bool = False, quiet: bool = False) -> None:
    """Compile (or load from numba's cache) the kernels a run over ``scene`` with the cullers ``names``
    runs, before anything is timed: ``entry_points`` of every name that is an index (a GPU mode's kernels
    compile with its session), with ``probe`` those of the index that paces a generated path
    (:func:`viewer.paths.probe_index`: the run's first index, else the octree), and the frame's kernels (the movers' in a
    moving world). The :func:`viewer.index.warm_scope` of ``entry_points`` is entered in ``scopes`` and stays
    open until the caller closes it."""
    from ..frame.pipeline import warm
    from ..index import warm_scope, warm_up

    scopes.enter_context(warm_scope(entry_points))
    from ..paths import probe_index

    indexes = [n for n in names if _is_index(n)]
    if probe and (pacer := probe_index(names)) not in indexes:
        indexes.append(pacer)
    with compiling(quiet):
        warm_up(indexes)
        warm(motion=scene.moves)


def _is_index(name: str) -> bool:
    """Whether culler ``name`` is an index (a registered name or any index spec: :mod:`viewer.index.specs`),
    not a culling mode of the GPU's."""
    from ..errors import UserError
    from ..index import INDEXES, parse_index_spec

    if name in INDEXES:
        return True
    try:
        parse_index_spec(name)
    except UserError:
        return False
    return True
