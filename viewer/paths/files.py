"""Camera path files: TOML (or JSON with the same fields, by suffix), written to be edited by hand::

    format = "viewer-camera-path"
    version = 1
    name = "my flight"

    [[keyframe]]
    t = 0.0
    position = [0.0, 10.0, 50.0]
    yaw = 0.0
    pitch = -5.0

Reading parses with the standard library (``tomllib``, ``json``) and validates every field: any problem,
including a document nested too deeply or a number too large for a float64, is one
:class:`viewer.errors.UserError` naming the file and the field. Writing is :mod:`viewer.paths.document`'s
(re-exported here): through a temporary file and a rename, and every float reads back bit for bit.
"""

from __future__ import annotations

import json
import math
import os
import reprlib
import stat
import tomllib
from pathlib import Path
from typing import Any

from ..domain import ANGLE_LIMIT, COORD_LIMIT
from ..errors import UserError
from .document import PATH_FORMAT, PATH_VERSION, path_to_dict, path_to_toml, save_path
from .spline import MAX_PITCH, CameraPath

__all__ = ["MAX_FILE_BYTES", "PATH_FORMAT", "PATH_VERSION", "load_path", "path_from_dict", "path_to_dict",
           "path_to_toml", "save_path"]

#: the largest path file read (a ten-minute take with a keyframe per frame is about 6 MB)
MAX_FILE_BYTES = 256 * 2**20

_TOP_FIELDS = {"format", "version", "name", "keyframe", "scene"}
_KEY_FIELDS = ("t", "position", "yaw", "pitch")

_short = reprlib.Repr()
_short.maxlevel, _short.maxstring, _short.maxother, _short.maxlong = 3, 40, 40, 40


def _show(v: Any) -> str:
    """A short repr for messages (bounded depth and length: the value may be a huge or deep document)."""
    return _short.repr(v)


def load_path(path: str | os.PathLike) -> CameraPath:
    """Read a path file (TOML, or JSON by suffix). Every problem is one :class:`UserError` naming
    the file and the field."""
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise UserError(f"{p}: no such camera path file") from None
    except OSError as exc:
        raise UserError(f"{p}: cannot read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise UserError(f"{p}: is a directory, expected a camera path file (.toml or .json)")
    if not stat.S_ISREG(st.st_mode):
        # a FIFO or a device (/dev/zero) would block or never end
        raise UserError(f"{p}: not a regular file, expected a camera path file (.toml or .json)")
    if st.st_size > MAX_FILE_BYTES:
        raise UserError(f"{p}: {st.st_size} bytes is too large for a camera path file (at most {MAX_FILE_BYTES})")
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise UserError(f"{p}: cannot read: {exc.strerror or exc}") from None
    if not raw.strip():
        raise UserError(f"{p}: empty file; a camera path needs at least 2 [[keyframe]] tables")
    try:
        text = raw.decode("utf-8-sig")  # a byte-order mark (some editors write one) is neither TOML nor JSON
    except UnicodeDecodeError:
        raise UserError(f"{p}: not a text file (expected TOML or JSON)") from None
    kind = "JSON" if p.suffix.lower() == ".json" else "TOML"
    try:
        data = json.loads(text) if kind == "JSON" else tomllib.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"{p}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{p}: not valid TOML ({exc})") from None
    except RecursionError:
        raise UserError(f"{p}: not a camera path: arrays or tables nested too deeply to read as {kind}") from None
    except ValueError as exc:  # an integer literal of more than 4300 digits
        raise UserError(f"{p}: not valid {kind} ({exc})") from None
    try:
        return path_from_dict(data, where=str(p))
    except RecursionError:  # nested just shallowly enough to parse
        raise UserError(f"{p}: not a camera path: values nested too deeply") from None


def path_from_dict(data: Any, where: str = "<path>") -> CameraPath:
    """Validate a parsed path document (see the module docstring) and build the path."""
    if not isinstance(data, dict):
        raise UserError(f"{where}: expected a table of fields at the top level")
    unknown = sorted(str(k) for k in set(data) - _TOP_FIELDS)
    if unknown:
        raise UserError(f"{where}: unknown field {_show(unknown[0])} (allowed: {', '.join(sorted(_TOP_FIELDS))})")
    fmt = data.get("format", PATH_FORMAT)
    if fmt != PATH_FORMAT:
        raise UserError(f"{where}: field 'format' is {_show(fmt)}, expected {PATH_FORMAT!r}")
    ver = data.get("version", PATH_VERSION)
    if not isinstance(ver, int) or isinstance(ver, bool) or ver != PATH_VERSION:
        raise UserError(f"{where}: field 'version' is {_show(ver)}; this viewer reads version {PATH_VERSION}")
    from ..scenes.errors import SceneError
    from ..scenes.limits import check_name, stem_name

    name = data.get("name", stem_name(where))  # the file's stem, any control character in it as U+FFFD
    if not isinstance(name, str):
        raise UserError(f"{where}: field 'name' must be a string")
    try:
        check_name(name)  # every command prints the name: as a scene's, no control characters
    except SceneError as exc:
        raise UserError(f"{where}: field 'name' {exc.problem}") from None
    keys = data.get("keyframe")
    if keys is None:
        raise UserError(f"{where}: no keyframes (add [[keyframe]] tables with t, position, yaw, pitch)")
    if not isinstance(keys, list):
        raise UserError(f"{where}: field 'keyframe' must be a list of tables ([[keyframe]])")
    if len(keys) < 2:
        raise UserError(f"{where}: a camera path needs at least 2 keyframes, found {len(keys)}")
    ts, ps, ys, pis = [], [], [], []
    for i, k in enumerate(keys):
        at = f"{where}: keyframe[{i}]"
        if not isinstance(k, dict):
            raise UserError(f"{at}: must be a table with t, position, yaw, pitch")
        missing = [f for f in _KEY_FIELDS if f not in k]
        if missing:
            raise UserError(f"{at}: missing field {missing[0]!r}")
        extra = sorted(str(f) for f in set(k) - set(_KEY_FIELDS))
        if extra:
            raise UserError(f"{at}: unknown field {_show(extra[0])} (allowed: {', '.join(_KEY_FIELDS)})")
        t = _number(k["t"], f"{at}.t")
        pos = k["position"]
        if not isinstance(pos, list) or len(pos) != 3:
            raise UserError(f"{at}.position: must be a list of 3 numbers [x, y, z], got {_show(pos)}")
        pos = [_number(v, f"{at}.position", limit=COORD_LIMIT) for v in pos]
        yaw = _number(k["yaw"], f"{at}.yaw", limit=ANGLE_LIMIT, what="the largest angle a path may hold, in degrees")
        pitch = _number(k["pitch"], f"{at}.pitch")
        if abs(pitch) > MAX_PITCH:
            raise UserError(f"{at}.pitch: {pitch:g} is outside -{MAX_PITCH:g}..{MAX_PITCH:g} degrees")
        if ts and t <= ts[-1]:
            raise UserError(f"{at}.t: {t:g} is not after the previous keyframe's t = {ts[-1]:g} (times must increase)")
        ts.append(t)
        ps.append(pos)
        ys.append(yaw)
        pis.append(pitch)
    try:
        return CameraPath(ts, ps, ys, pis, name=name)
    except ValueError as exc:  # what the keyframes make of the curve (its speed, its time span)
        raise UserError(f"{where}: {exc}") from None


def _number(v: Any, where: str, limit: float = math.inf, what: str = "the largest coordinate a scene may hold") -> float:
    """``v`` as a finite float64 of magnitude at most ``limit`` (``what``: the limit's words), else a
    :class:`UserError` at ``where``."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise UserError(f"{where}: must be a number, got {_show(v)}")
    try:
        f = float(v)
    except OverflowError:  # an integer beyond float64 (a 400-digit literal)
        digits = int(abs(v).bit_length() * math.log10(2)) + 1
        raise UserError(f"{where}: an integer of about {digits} digits is too large (at most about 1.8e308)") from None
    if not math.isfinite(f):
        raise UserError(f"{where}: must be finite, got {_show(v)}")
    if abs(f) > limit:
        raise UserError(f"{where}: {f:g} is beyond {what} ({limit:g})")
    return f
