"""PLY point clouds (ASCII or binary), read with plyfile: each vertex is an object; its properties are
columns (``x``, ``y``, ``z``, optional ``r``, ``size``, ``red``, ``green``, ``blue``, ``alpha``, or others
mapped with ``--columns``). Faces, if any, are ignored."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import SceneError
from .columns import read_roles, resolve_columns

__all__ = ["read_ply"]


def read_ply(path: Path, mapping: dict[str, str]) -> dict:
    """The arrays of a PLY file's ``vertex`` element (see :func:`.columns.read_roles`)."""
    from plyfile import PlyData, PlyParseError

    try:
        ply = PlyData.read(str(path))
        if "vertex" not in ply:
            raise SceneError(f"has no 'vertex' element (elements: {', '.join(e.name for e in ply.elements)})")
        data = ply["vertex"].data
    except SceneError:
        raise
    except OverflowError as exc:  # an ASCII value its property's type cannot hold (a uchar of 300)
        raise SceneError(f"not a readable PLY file: a value does not fit its property's type ({exc})") from None
    except (PlyParseError, ValueError, EOFError, OSError, IndexError, KeyError, TypeError) as exc:
        raise SceneError(f"not a readable PLY file (truncated, or another format?): {exc}") from None
    names = list(data.dtype.names or ())
    roles = resolve_columns(names, mapping)
    if data.shape[0] == 0:
        raise SceneError("holds no vertices", "vertex")

    def get(name: str, empty=None) -> np.ndarray:  # a PLY value is never empty
        a = np.asarray(data[name])
        if a.dtype == object or a.ndim != 1:
            raise SceneError("is a list property, not a number per vertex", name)
        return a

    return read_roles(get, roles)
