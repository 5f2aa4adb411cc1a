"""Strict validation of the small tables a recipe is made of (TOML or a Python dict).

A table is checked against a *spec*: a dict mapping each known field to a :class:`Param`. Unknown
fields, missing required fields, wrong types, NaN/inf and out-of-range values each raise one
:class:`~scenes.errors.SceneError` naming the field by its dotted path (``radius.min``). Extending a
recipe (e.g. a future ``[motion]`` table) is adding an entry to a spec.
"""

from __future__ import annotations

import math
import numbers
import reprlib
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from viewer.domain import COORD_LIMIT

from .errors import SceneError

__all__ = ["REQUIRED", "Param", "validate_table", "check_colour", "show"]

_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxlist, _REPR.maxtuple, _REPR.maxdict = 4, 8, 8, 6
_REPR.maxstring, _REPR.maxother, _REPR.maxlong = 80, 80, 40


def show(v) -> str:
    """``repr(v)`` for a message, cut short: a value nested 5000 deep or a megabyte long prints as a line."""
    try:
        return _REPR.repr(v)
    except (RecursionError, ValueError):  # pragma: no cover - reprlib stops at maxlevel
        return f"a {type(v).__name__}"


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()

_KINDS = ("int", "float", "str", "bool", "vec3", "table", "colour", "palette")


@dataclass(frozen=True)
class Param:
    """One field of a table.

    kind : ``int`` (integral floats such as ``1e6`` accepted), ``float`` (ints accepted, must be
        finite), ``str``, ``bool``, ``vec3`` (3 finite numbers), ``table`` (a nested table, checked
        by the owner), ``colour`` (``"#rrggbb"``), ``palette`` (a palette name or a list of colours).
    default : the value when the field is absent, or ``REQUIRED``.
    lo, hi : inclusive bounds for numbers; ``lo_open`` makes ``lo`` exclusive.
    choices : the allowed strings.
    doc : one line for ``--help`` and the recipe headers.
    """

    kind: str
    default: Any = REQUIRED
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    choices: tuple[str, ...] | None = None
    doc: str = ""

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:  # pragma: no cover - programming error
            raise TypeError(f"unknown Param kind {self.kind!r}")


def _is_number(v) -> bool:
    # numbers.Real covers numpy scalars too; a bool is not a number here
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


def _number(v, field: str, integral: bool):
    if not _is_number(v):
        want = "an integer" if integral else "a number"
        raise SceneError(f"must be {want}, got {type(v).__name__} {show(v)}", field)
    if isinstance(v, numbers.Integral):
        if integral:
            return int(v)
        if abs(v) > COORD_LIMIT:
            raise SceneError(f"must be within +-2**100 (the numeric domain, viewer.domain), got {_short(v)}", field)
        return float(v)
    v = float(v)
    if not math.isfinite(v):
        raise SceneError(f"must be finite, got {show(v)}", field)
    if not integral and abs(v) > COORD_LIMIT:
        # every length, position and rate of a recipe lives in the numeric domain the indexes answer in
        raise SceneError(f"must be within +-2**100 (the numeric domain, viewer.domain), got {show(v)}", field)
    if integral:
        if not v.is_integer():
            raise SceneError(f"must be an integer, got {show(v)}", field)
        return int(v)
    return v


def _short(v) -> str:
    """An integer as text, long ones abbreviated (a 400-digit number in a message helps no one)."""
    t = str(v)
    return t if len(t) <= 24 else f"{t[:8]}... ({len(t.lstrip('-'))} digits)"


def check_colour(v, field: str) -> tuple[int, int, int]:
    """``"#rrggbb"`` -> (r, g, b) ints 0..255."""
    if not isinstance(v, str) or len(v) != 7 or v[0] != "#":
        raise SceneError(f"must be a colour written '#rrggbb', got {show(v)}", field)
    try:
        return int(v[1:3], 16), int(v[3:5], 16), int(v[5:7], 16)
    except ValueError:
        raise SceneError(f"must be a colour written '#rrggbb', got {show(v)}", field) from None


def _check(p: Param, v, field: str):
    k = p.kind
    if k in ("int", "float"):
        v = _number(v, field, integral=(k == "int"))
        if p.lo is not None and (v <= p.lo if p.lo_open else v < p.lo):
            raise SceneError(f"must be {'>' if p.lo_open else '>='} {p.lo:g}, got {_short(v)}", field)
        if p.hi is not None and v > p.hi:
            raise SceneError(f"must be <= {p.hi:g}, got {_short(v)}", field)
        return v
    if k == "str":
        if not isinstance(v, str):
            raise SceneError(f"must be a string, got {type(v).__name__} {show(v)}", field)
        if p.choices is not None and v not in p.choices:
            raise SceneError(f"must be one of {', '.join(p.choices)}; got {show(v)}", field)
        return v
    if k == "bool":
        if not isinstance(v, bool):
            raise SceneError(f"must be true or false, got {show(v)}", field)
        return v
    if k == "vec3":
        if not isinstance(v, (list, tuple)) or len(v) != 3:
            raise SceneError(f"must be a list of 3 numbers, got {show(v)}", field)
        return [_number(x, f"{field}[{i}]", integral=False) for i, x in enumerate(v)]
    if k == "table":
        if not isinstance(v, Mapping):
            raise SceneError(f"must be a table, got {type(v).__name__} {show(v)}", field)
        return dict(v)
    if k == "colour":
        check_colour(v, field)
        return v
    if k == "palette":
        if isinstance(v, str):
            if p.choices is not None and v not in p.choices:
                raise SceneError(
                    f"must be a palette name ({', '.join(p.choices)}) or a list of '#rrggbb' colours; got {show(v)}",
                    field,
                )
            return v
        if not isinstance(v, (list, tuple)) or not v:
            raise SceneError(f"must be a palette name or a non-empty list of '#rrggbb' colours, got {show(v)}", field)
        for i, c in enumerate(v):
            check_colour(c, f"{field}[{i}]")
        return list(v)
    raise AssertionError(k)  # pragma: no cover


def validate_table(table, spec: Mapping[str, Param], prefix: str = "", what: str = "table") -> dict:
    """Check ``table`` against ``spec``; return a new dict with every field present (defaults filled).

    ``prefix`` is the dotted path of the table (``"radius"``), used in error messages.
    """
    where = prefix or what
    if not isinstance(table, Mapping):
        raise SceneError(f"must be a table, got {type(table).__name__} {show(table)}", prefix or None)
    out: dict = {}
    for key in table:
        if key not in spec:
            known = ", ".join(spec) or "none"
            raise SceneError(f"unknown field in {where} (known fields: {known})", _join(prefix, key))
    for key, p in spec.items():
        field = _join(prefix, key)
        if key in table and table[key] is None and p.default is None:
            out[key] = None  # an optional field left unset (a checked recipe written back as JSON)
        elif key in table:
            out[key] = _check(p, table[key], field)
        elif p.default is REQUIRED:
            raise SceneError(f"missing (required in {where})", field)
        else:
            out[key] = p.default
    return out


def _join(prefix: str, key) -> str:
    return f"{prefix}.{key}" if prefix else str(key)
