"""Named columns -> the arrays of a scene: which column plays which role, checked values.

Roles: ``x``, ``y``, ``z`` (the centre, required), ``r`` (the view distance), ``size`` (the object's extent,
world units), ``red``, ``green``, ``blue``, ``alpha`` (0..255 integers, or 0..1 floats). A column named as
the role plays it; ``--columns x=px,y=py,z=pz,r=view`` maps other names.
"""

from __future__ import annotations

from typing import Callable, Mapping

import numpy as np

from viewer.domain import RADIUS_LIMIT

from ..errors import SceneError
from ..construct import check_domain

__all__ = ["ROLES", "parse_columns", "resolve_columns", "read_roles"]

ROLES = ("x", "y", "z", "r", "size", "red", "green", "blue", "alpha")
REQUIRED = ("x", "y", "z")


def parse_columns(text: str | None) -> dict[str, str]:
    """``x=px,y=py,z=pz,r=view`` -> {role: column name} (:class:`SceneError` naming ``--columns``)."""
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in (text or "").split(","))):
        role, eq, name = part.partition("=")
        role, name = role.strip(), name.strip()
        if not eq or not name:
            raise SceneError(f"write ROLE=COLUMN, got {part!r}", "--columns")
        if role not in ROLES:
            raise SceneError(f"unknown role {role!r}; roles are {', '.join(ROLES)}", "--columns")
        out[role] = name
    return out


def resolve_columns(names: list[str], mapping: Mapping[str, str]) -> dict[str, str]:
    """{role: column} for the roles this file has: mapped ones must exist, x/y/z must be found."""
    have = set(names)
    out = {}
    for role in ROLES:
        col = mapping.get(role, role)
        if col in have:
            out[role] = col
        elif role in mapping:
            raise SceneError(f"no column {col!r} (for {role}; the file has {', '.join(names) or 'none'})",
                             "--columns")
    missing = [r for r in REQUIRED if r not in out]
    if missing:
        raise SceneError(f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)} (the file has "
                         f"{', '.join(names) or 'none'}; map others with --columns x=NAME,...)", missing[0])
    colour = [r for r in ("red", "green", "blue") if r in out]
    if colour and len(colour) != 3:
        raise SceneError("colour needs all of red, green, blue", colour[0])
    return out


def read_roles(get: Callable[[str], np.ndarray], roles: Mapping[str, str]) -> dict[str, np.ndarray | None]:
    """The checked arrays: ``centres`` (N, 3) float64, ``radii``, ``extents`` (N,) float64 or None,
    ``colours`` (N, 4) uint8 or None. ``get(column)`` returns a column as a numpy array."""
    def col(role: str) -> np.ndarray:
        a = get(roles[role])
        if a.dtype.kind not in "iuf":
            raise SceneError(f"must hold numbers, got {a.dtype}", roles[role])
        return a.astype(np.float64, copy=False)

    centres = np.empty((len(get(roles["x"])), 3))
    for k, role in enumerate(REQUIRED):
        centres[:, k] = col(role)
        check_domain(centres[:, k], roles[role], rows="row", first_row=1)
    radii = extents = colours = None
    if "r" in roles:
        radii = col("r")
        check_domain(radii, roles["r"], limit=RADIUS_LIMIT, nonnegative=True, rows="row", first_row=1)
    if "size" in roles:
        extents = col("size")
        check_domain(extents, roles["size"], limit=RADIUS_LIMIT, nonnegative=True, rows="row", first_row=1)
    if "red" in roles:
        chans = [col(c) for c in ("red", "green", "blue")] + ([col("alpha")] if "alpha" in roles else [])
        colours = np.full((centres.shape[0], 4), 255, dtype=np.uint8)
        for k, (c, role) in enumerate(zip(chans, ("red", "green", "blue", "alpha"))):
            check_domain(c, roles[role], nonnegative=True, rows="row", first_row=1)
            unit = get(roles[role]).dtype.kind == "f" and c.max(initial=0.0) <= 1.0
            c = c * 255.0 if unit else c
            if c.max(initial=0.0) > 255.0:
                raise SceneError(f"colours are 0..255 (or 0..1), found {c.max():g}", roles[role])
            colours[:, k] = np.rint(c).astype(np.uint8)
    return {"centres": centres, "radii": radii, "extents": extents, "colours": colours}
