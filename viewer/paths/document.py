"""A camera path as a document, and writing it: the dict a JSON file holds, the annotated TOML text, and
the atomic save. Reading and validating is :mod:`viewer.paths.files`.

Below :mod:`viewer.paths.spline`: this module takes any object with a path's keyframe arrays
(:class:`Keyframes`), so :class:`~viewer.paths.spline.CameraPath` can write itself without an import cycle.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..errors import UserError
from ..files.output import check_output_file, replace_atomically

__all__ = ["PATH_FORMAT", "PATH_VERSION", "Keyframes", "path_to_dict", "path_to_toml", "save_path"]

PATH_FORMAT = "viewer-camera-path"
PATH_VERSION = 1


class Keyframes(Protocol):
    """What writing needs of a path: times (K,) seconds, positions (K, 3) world units, yaw and pitch (K,)
    degrees, all float64, and a name."""

    times: np.ndarray
    positions: np.ndarray
    yaw: np.ndarray
    pitch: np.ndarray
    name: str


def path_to_dict(path: Keyframes) -> dict[str, Any]:
    """The document of ``path`` (what the JSON file holds): format, version, name and one
    ``{"t", "position", "yaw", "pitch"}`` table per keyframe, as Python floats."""
    return {
        "format": PATH_FORMAT,
        "version": PATH_VERSION,
        "name": path.name,
        "keyframe": [
            {"t": float(t), "position": [float(v) for v in p], "yaw": float(y), "pitch": float(pi)}
            for t, p, y, pi in zip(path.times, path.positions, path.yaw, path.pitch)
        ],
    }


def path_to_toml(path: Keyframes) -> str:
    """The TOML file of ``path``: a comment explaining the fields, then one ``[[keyframe]]`` each."""
    lines = [
        "# A camera path (viewer record --path, viewer view --path). Edit freely:",
        "#   t        seconds, strictly increasing",
        "#   position [x, y, z], world units",
        "#   yaw      degrees: 0 looks down -Z, 90 down +X (turns take the short way round)",
        "#   pitch    degrees: + looks up, within +-89",
        f'format = "{PATH_FORMAT}"',
        f"version = {PATH_VERSION}",
        f"name = {json.dumps(path.name)}",
        "",
    ]
    for t, p, y, pi in zip(path.times, path.positions, path.yaw, path.pitch):
        lines += [
            "[[keyframe]]",
            f"t = {_num(t)}",
            f"position = [{_num(p[0])}, {_num(p[1])}, {_num(p[2])}]",
            f"yaw = {_num(y)}",
            f"pitch = {_num(pi)}",
            "",
        ]
    return "\n".join(lines)


def _num(v: float) -> str:
    """A TOML float that reads back to the same float64."""
    r = repr(float(v))
    return r if ("." in r or "e" in r or "n" in r) else r + ".0"


def save_path(path: Keyframes, dest: str | os.PathLike) -> Path:
    """Write ``path`` to ``dest`` (TOML; JSON when the suffix is ``.json``) atomically; returns ``dest``.
    A target :func:`~viewer.files.output.check_output_file` refuses (a missing directory, a directory, a device
    such as /dev/null: a rename would replace it) or a failed write is a :class:`UserError` naming it."""
    d = check_output_file(dest)
    text = json.dumps(path_to_dict(path), indent=2) + "\n" if d.suffix.lower() == ".json" else path_to_toml(path)
    try:
        replace_atomically(d, text.encode("utf-8"))
    except OSError as exc:
        raise UserError(f"{d}: cannot write: {exc.strerror or exc}") from None
    return d
