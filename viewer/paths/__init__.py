"""Camera paths: keyframes of position and orientation over time, smoothly interpolated.

A path is a list of keyframes ``(t, position, yaw, pitch)``: ``t`` in seconds (strictly
increasing), ``position`` (3,) world units, ``yaw`` / ``pitch`` in degrees with the camera's
conventions (:mod:`viewer.camera`: yaw 0 looks down -Z, yaw 90 down +X, pitch +90 straight up;
pitch within +-89).

One module per concern, no GL in any:

- :mod:`.spline`: :class:`CameraPath` (the interpolation) and :class:`PoseSamples` (poses at a fixed step)
- :mod:`.files`: :func:`load_path` (TOML, or JSON by suffix, validated field by field)
- :mod:`.document`: :func:`save_path` (the document a path file holds, written atomically)
- :mod:`.capture`: :class:`PathRecorder` (keyframes from a flight) and :func:`simplify` (thinned to a tolerance)
- :mod:`.generate`: :func:`generated_path` (a fly-through fitted to the scene, paced by what it draws) and
  :func:`drawn_share`; :func:`probe_index` (which index paces it)
"""

from .capture import ANGLE_TOLERANCE, POSITION_TOLERANCE, PathRecorder, simplify
from .document import PATH_FORMAT, PATH_VERSION, save_path
from .files import load_path, path_from_dict
from .generate import DRAWN_SHARE, GENERATED, drawn_share, generated_path, probe_index
from .spline import FRAME_DT, MAX_PITCH, CameraPath, PoseSamples

__all__ = [
    "ANGLE_TOLERANCE",
    "DRAWN_SHARE",
    "FRAME_DT",
    "GENERATED",
    "MAX_PITCH",
    "PATH_FORMAT",
    "PATH_VERSION",
    "POSITION_TOLERANCE",
    "CameraPath",
    "PathRecorder",
    "PoseSamples",
    "drawn_share",
    "generated_path",
    "load_path",
    "path_from_dict",
    "probe_index",
    "save_path",
    "simplify",
]
