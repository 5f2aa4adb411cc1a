"""The one reader of the numbers in a glTF file's JSON: every count, offset, index, transform, colour factor and
LOD hint the importer (:mod:`.gltf`, :mod:`.gltf_lod`) reads goes through it.

JSON puts no bound on a number: ``10**400`` parses as a Python int that no float64 holds (``float()`` of it
raises ``OverflowError``), ``1e400`` as ``inf``, ``NaN`` and ``Infinity`` (not JSON, but Python's reader takes
them) as themselves. A number is compared with its domain exactly, as the int or float the JSON reader made, before
it is converted: a value outside is refused naming the file's own field (``nodes[3].extras.lod_distances[1]``),
the value as given and the domain, and a value inside converts without overflow. Whole numbers (counts,
offsets, lengths, indices) are at most :data:`MAX_WHOLE`, the integers every JSON reader holds exactly.

Pure: standard library only.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass
from decimal import Decimal

from viewer.domain import RADIUS_LIMIT
from viewer.terminal.text import clip

from ..errors import SceneError

__all__ = ["DISTANCE", "FLOAT", "MAX_WHOLE", "SHARE", "Domain", "number", "numbers", "real", "show", "whole",
           "whole_number"]

#: the largest whole number read (a count, offset, length or index): 2**53 - 1, the integers JSON readers hold
#: exactly (I-JSON, RFC 7493; JavaScript's Number.MAX_SAFE_INTEGER)
MAX_WHOLE = 2**53 - 1
#: characters of a value a message shows
_SHOWN = 60
#: the types of a JSON number as :mod:`json` reads it (a bool is not one)
_REAL = (float, int)


@dataclass(frozen=True)
class Domain:
    """The values a number of the file may take: ``lo`` .. ``hi`` inclusive (finite), ``text`` saying so in a
    message."""

    lo: float
    hi: float
    text: str


#: what a float64 holds: a transform's number (whose products are checked where they are made)
FLOAT = Domain(-sys.float_info.max, sys.float_info.max, f"what a float64 holds (|x| <= {sys.float_info.max:.4g})")
#: a distance, world units: 0 .. viewer.domain's RADIUS_LIMIT
DISTANCE = Domain(0.0, RADIUS_LIMIT, f"0..2**{math.log2(RADIUS_LIMIT):.0f} = {RADIUS_LIMIT:.4g} (a distance in "
                                     "world units: the numeric domain, viewer.domain)")
#: a share of the view, 0 .. 1
SHARE = Domain(0.0, 1.0, "0..1 (a share of the view's height)")


def show(v) -> str:
    """A JSON value for a message, cut short: as the file spells it (``null``, ``true``, ``[1, 2]``), an integer
    past :data:`MAX_WHOLE` as ``1e+400`` (its digits would fill the line)."""
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) > MAX_WHOLE:
        text = format(Decimal(v).normalize(), ".6g")
    elif isinstance(v, list) and any(isinstance(x, int) and not isinstance(x, bool) and abs(x) > MAX_WHOLE
                                     for x in v[:_SHOWN]):
        text = "[" + ", ".join(show(x) for x in v[:_SHOWN]) + ("]" if len(v) <= _SHOWN else ", ...")
    else:
        try:
            text = json.dumps(v)
        except (TypeError, ValueError, RecursionError):
            text = type(v).__name__
    return clip(text, _SHOWN)


def whole(v) -> int | None:
    """A JSON whole number 0 .. :data:`MAX_WHOLE` in size (``3``, or ``3.0``: JSON Schema's integers include it) as
    an int; None for anything else (``0.5``, ``true``, ``"3"``, null, ``10**400``, ``1e300``)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, int) and -MAX_WHOLE <= v <= MAX_WHOLE:
        return v
    return None


def whole_number(v, where: str, lo: int = 0) -> int:
    """A count, offset, length or stride: a whole number ``lo`` .. :data:`MAX_WHOLE`; :class:`SceneError` naming
    ``where`` and the value otherwise."""
    n = whole(v)
    if n is None or n < lo:
        past = isinstance(v, (int, float)) and not isinstance(v, bool) and v > MAX_WHOLE
        most = " and at most 2**53 - 1 (the integers a JSON reader holds exactly)" if past else ""
        raise SceneError(f"{where}: must be a whole number >= {lo}{most}, got {show(v)}")
    return n


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def real(v, domain: Domain = FLOAT) -> float | None:
    """A JSON number inside ``domain`` as a float64; None for anything else (not a number, NaN, an infinity, a
    number outside: compared exactly, so ``10**400`` is outside, never an ``OverflowError``)."""
    if _is_number(v) and domain.lo <= v <= domain.hi:  # False for NaN
        return float(v)
    return None


def _refuse(v, where: str, domain: Domain) -> SceneError:
    if not _is_number(v):
        return SceneError(f"{where}: must be a number, got {show(v)}")
    if isinstance(v, float) and not math.isfinite(v):
        return SceneError(f"{where}: {show(v)} is not a finite number")
    return SceneError(f"{where}: {show(v)} is outside {domain.text}")


def number(v, where: str, domain: Domain = FLOAT) -> float:
    """``v``, a number of the file at ``where`` (``nodes[7].extras.visibility_range_begin``), as a float64
    inside ``domain``; one :class:`SceneError` naming ``where``, the value given and the domain otherwise."""
    x = real(v, domain)
    if x is None:
        raise _refuse(v, where, domain)
    return x


def numbers(v, where: str, counts: tuple[int, ...], domain: Domain = FLOAT) -> list[float]:
    """``v``, a list of ``counts[0]`` (or ``counts[1]``, ...) numbers of the file at ``where``, as float64 values
    inside ``domain`` (:func:`number`; a value outside is named ``where[j]``)."""
    lo, hi = domain.lo, domain.hi
    if type(v) is list and len(v) in counts:  # one pass for the common case (a transform of each of 1e5 nodes)
        for x in v:
            if type(x) not in _REAL or not lo <= x <= hi:  # json makes exactly int, float, bool, str, ...
                break
        else:
            return [float(x) for x in v]
    if not isinstance(v, list) or len(v) not in counts or not all(map(_is_number, v)):
        want = " or ".join(map(str, counts))
        raise SceneError(f"{where}: must be a list of {want} numbers, got {show(v)}")
    j = next(j for j, x in enumerate(v) if not lo <= x <= hi)
    raise _refuse(v[j], f"{where}[{j}]", domain)
