"""Named columns -> the arrays of a scene: which column plays which role, checked values.

Roles: ``x``, ``y``, ``z`` (the centre, required), ``r`` (the view distance), ``size`` (the object's extent,
world units), ``red``, ``green``, ``blue``, ``alpha`` (0..255 integers, or 0..1 floats); visibility ranges
(issue 24): ``begin`` (the begin of the object's range, world units, 0 <= begin <= its view distance),
``lod1``, ``lod2``, ... (up to ``lod7``: its LOD switch distances, ascending along a row; an empty cell,
or ``inf``, means no further switch: only after the row's last one) and ``parent`` (its visibility parent,
an HLOD proxy: the 0-based index of the parent's data row, -1 none; no row its own parent, no cycles).
A column named as the role plays it; ``--columns x=px,y=py,z=pz,r=view`` maps other names. A bad value
is one message naming the column and the data row (counted from 1, as an editor shows them).
"""

from __future__ import annotations

from typing import Callable, Mapping

import numpy as np

from viewer.domain import RADIUS_LIMIT

from ..errors import SceneError
from ..construct import MAX_LOD_SWITCHES, check_domain

__all__ = ["LOD_ROLES", "RANGE_ROLES", "ROLES", "check_parent_rows", "check_ranges", "parse_columns",
           "resolve_columns", "read_roles"]

#: the LOD switch-distance columns, in order
LOD_ROLES = tuple(f"lod{k}" for k in range(1, MAX_LOD_SWITCHES + 1))
#: the visibility-range roles (issue 24)
RANGE_ROLES = ("begin", *LOD_ROLES, "parent")
ROLES = ("x", "y", "z", "r", "size", "red", "green", "blue", "alpha", *RANGE_ROLES)
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
        if role in out:
            raise SceneError(f"role {role} is given twice ({out[role]!r} and {name!r}); give it one column",
                             "--columns")
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
    _one_role_each(out)
    missing = [r for r in REQUIRED if r not in out]
    if missing:
        raise SceneError(f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)} (the file has "
                         f"{', '.join(names) or 'none'}; map others with --columns x=NAME,...)", missing[0])
    colour = [r for r in ("red", "green", "blue") if r in out]
    if colour and len(colour) != 3:
        raise SceneError("colour needs all of red, green, blue", colour[0])
    lods = [r for r in LOD_ROLES if r in out]
    if lods != list(LOD_ROLES[: len(lods)]):
        gap = next(r for r in LOD_ROLES[: len(lods) + 1] if r not in out)
        after = next(r for r in lods if LOD_ROLES.index(r) > LOD_ROLES.index(gap))
        raise SceneError(f"there is a column {after} but no {gap}: the LOD switch distances are lod1, lod2, ... "
                         "with none left out", out[after])
    return out


def _one_role_each(roles: Mapping[str, str]) -> None:
    """A :class:`SceneError` naming ``--columns`` when one column would play two roles of ``roles`` ({role:
    column}: mapped, or a column named as its role), e.g. ``--columns x=y`` in a file with a column y: its
    values would be read as both coordinates."""
    plays: dict[str, list[str]] = {}
    for role, col in roles.items():
        plays.setdefault(col, []).append(role)
    for col, both in plays.items():
        if len(both) > 1:
            raise SceneError(f"column {col!r} would play {', '.join(both[:-1])} and {both[-1]}; each role reads "
                             "a column of its own", "--columns")


def _row_error(i: int, first_row: int, rows: str, text: str, field: str) -> SceneError:
    return SceneError(f"{rows} {i + first_row}: {text}", field)


def check_parent_rows(parent: np.ndarray, field: str = "parent", rows: str = "row", first_row: int = 1) -> np.ndarray:
    """(N,) int64 parents, checked: whole numbers -1 .. N-1 (a 0-based row index), no row its own parent,
    no cycle; :class:`SceneError` naming ``field`` and the first bad row (counted from ``first_row``)."""
    a = np.asarray(parent)
    n = a.shape[0]
    if a.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(a) | (a != np.floor(a)))
        if bad.size:
            i = int(bad[0])
            raise _row_error(i, first_row, rows, f"parent {a[i]:g} is not a whole number (a 0-based row index, "
                                                 "-1 none)", field)
    elif a.dtype.kind not in "iu":
        raise SceneError(f"must hold whole numbers, got {a.dtype}", field)
    out_of = np.flatnonzero((a < -1) | (a > n - 1))
    if out_of.size:
        i = int(out_of[0])
        raise _row_error(i, first_row, rows, f"parent {a[i]:g} is not a row: 0..{n - 1} (data rows counted from 0), "
                                             "or -1 for none", field)
    p = a.astype(np.int64)
    own = np.flatnonzero(p == np.arange(n))
    if own.size:
        i = int(own[0])
        raise _row_error(i, first_row, rows, f"parent {p[i]} is the row itself", field)
    anc = p.copy()  # pointer doubling: a chain that does not end within N steps is a cycle
    for _ in range(max(1, int(n).bit_length()) + 1):
        has = anc >= 0
        if not has.any():
            return p
        anc[has] = anc[anc[has]]
    start = int(np.flatnonzero(anc >= 0)[0])
    seen, k = {}, start  # walk to the cycle and name it
    while k not in seen:
        seen[k] = len(seen)
        k = int(p[k])
    cycle = list(seen)[seen[k]:] + [k]
    shown = " -> ".join(map(str, cycle[:8])) + (" -> ..." if len(cycle) > 8 else "")
    raise _row_error(k, first_row, rows, f"its chain of parents is a cycle ({shown}, 0-based rows)", field)


def check_ranges(lod: np.ndarray | None, names: list[str], rows: str = "row", first_row: int = 1) -> np.ndarray | None:
    """(N, L) float64 LOD switch distances (columns ``names``), checked row by row: each finite value >= 0
    in the numeric domain, ascending along a row, +inf (an empty cell) only after the row's last switch;
    :class:`SceneError` naming the column and the first bad row."""
    if lod is None:
        return None
    for j, name in enumerate(names):
        v = lod[:, j]
        nan = np.flatnonzero(np.isnan(v))
        if nan.size:
            raise _row_error(int(nan[0]), first_row, rows, "is not a number (NaN)", name)
        check_domain(np.where(np.isposinf(v), 0.0, v), name, limit=RADIUS_LIMIT, nonnegative=True, rows=rows,
                     first_row=first_row)
    for j in range(1, lod.shape[1]):
        a, b = lod[:, j - 1], lod[:, j]
        gap = np.flatnonzero(np.isposinf(a) & ~np.isposinf(b))
        if gap.size:
            i = int(gap[0])
            raise _row_error(i, first_row, rows, f"{names[j]} = {b[i]:g} after an empty {names[j - 1]} (a row's "
                                                 "switch distances come first, empty cells only after them)",
                             names[j])
        down = np.flatnonzero(b < a)
        if down.size:
            i = int(down[0])
            raise _row_error(i, first_row, rows, f"{names[j]} = {b[i]:g} is below {names[j - 1]} = {a[i]:g} (a row's "
                                                 "LOD switch distances ascend)", names[j])
    return lod


def read_roles(get: Callable[..., np.ndarray], roles: Mapping[str, str]) -> dict[str, np.ndarray | None]:
    """The checked arrays: ``centres`` (N, 3) float64, ``radii``, ``extents`` (N,) float64 or None,
    ``colours`` (N, 4) uint8 or None; ``begin`` (N,) float64, ``lod`` (N, L) float64 (+inf for an empty
    cell) and ``parent`` (N,) int64, each None without its columns (the begin <= view distance check waits
    for the view distances: :func:`viewer.scenes.importers._build.make_scene`). ``get(column, empty=None)``
    returns a column as a numpy array (``empty``: the value of an empty cell; None: an empty cell is an
    error)."""
    def col(role: str, empty=None) -> np.ndarray:
        a = get(roles[role]) if empty is None else get(roles[role], empty=empty)
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
        names = ("red", "green", "blue", "alpha") if "alpha" in roles else ("red", "green", "blue")
        chans = [col(c) for c in names]
        for c, role in zip(chans, names):
            check_domain(c, roles[role], nonnegative=True, rows="row", first_row=1)
        # one scale for red, green and blue together (alpha has its own): 0..1 when a channel holds fractions
        # and none exceeds 1, else 0..255 (a red of 0.0 and 1.0 beside a green of 200.0 is 0..255, as green says)
        def unit(group):
            return (any(get(roles[role]).dtype.kind == "f" for _, role in group)
                    and max(c.max(initial=0.0) for c, _ in group) <= 1.0)

        pairs = list(zip(chans, names))
        scale = {role: unit(pairs[:3]) for role in names[:3]} | {role: unit(pairs[3:]) for role in names[3:]}
        colours = np.full((centres.shape[0], 4), 255, dtype=np.uint8)
        for k, (c, role) in enumerate(pairs):
            c = c * 255.0 if scale[role] else c
            if c.max(initial=0.0) > 255.0:
                raise SceneError(f"colours are 0..255 (or 0..1), found {c.max():g}", roles[role])
            colours[:, k] = np.rint(c).astype(np.uint8)
    begin = lod = parent = None
    if "begin" in roles:
        begin = col("begin")
        check_domain(begin, roles["begin"], limit=RADIUS_LIMIT, nonnegative=True, rows="row", first_row=1)
    lods = [r for r in LOD_ROLES if r in roles]
    if lods:
        lod = np.stack([col(r, empty=np.inf) for r in lods], 1)
        check_ranges(lod, [roles[r] for r in lods])
    if "parent" in roles:
        a = get(roles["parent"])
        if a.dtype.kind not in "iuf":
            raise SceneError(f"must hold numbers, got {a.dtype}", roles["parent"])
        parent = check_parent_rows(a, roles["parent"])
    return {"centres": centres, "radii": radii, "extents": extents, "colours": colours, "begin": begin,
            "lod": lod, "parent": parent, "range_columns": {r: roles[r] for r in RANGE_ROLES if r in roles}}
