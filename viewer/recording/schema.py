"""The per-frame CSV schema: the one definition of the columns, and a version number saying which set it is.

A recording is a plain CSV (a header row, then one row per frame) with a metadata file beside it
(:mod:`viewer.recording.meta`) that records the schema version. Everything else derives from the
:class:`Column` lists here: :class:`viewer.frame.FrameStats` (one field per column the frame fills),
the recorder's header and formats, the reader's checks, and the README's CSV table (a test compares
them). To add a column, append a new entry to :data:`SCHEMAS` with the next version number (old
columns first, in the same order) and compute the value where the frame is made; recordings of every
version listed here stay readable.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "COLUMNS",
    "COLUMN_INFO",
    "Column",
    "FRAME_COLUMN_INFO",
    "SCHEMAS",
    "SCHEMA_NAME",
    "SCHEMA_VERSION",
    "STAGES",
    "columns_for",
    "version_of_header",
]

SCHEMA_NAME = "viewer-frames"


@dataclass(frozen=True, slots=True)
class Column:
    """One CSV column.

    name : the header text
    kind : ``"int"``, ``"float"`` or ``"str"``
    unit : the unit of the values ("" when dimensionless / a count)
    doc : what the value is, for the README table and ``--help``
    fmt : how the writer formats a value (``None``: ``repr`` of the float, exact round trip)
    source : who fills it: ``"frame"`` (a field of :class:`viewer.frame.FrameStats`) or ``"recorder"``
        (the recorder, while appending the row)
    """

    name: str
    kind: str
    unit: str
    doc: str
    fmt: str | None = None
    source: str = "frame"


_MS = "%.4f"  # 0.1 microsecond resolution, far below perf_counter's noise on a frame

_V1: tuple[Column, ...] = (
    Column("frame", "int", "", "frame number, from 0"),
    Column("t", "float", "s", "time on the camera path (simulation time, the sum of dt)"),
    Column("dt", "float", "s", "the time step of this frame (fixed in `viewer record`)"),
    Column("cam_x", "float", "world units", "camera position x"),
    Column("cam_y", "float", "world units", "camera position y"),
    Column("cam_z", "float", "world units", "camera position z"),
    Column("yaw", "float", "degrees", "camera yaw"),
    Column("pitch", "float", "degrees", "camera pitch"),
    Column("index", "str", "", "the index that answered the query (a key of `INDEXES`)"),
    Column("objects", "int", "", "objects in the index"),
    Column("candidates", "int", "", "objects whose distance to the camera the index tested"),
    Column("visible", "int", "", "objects whose view distance holds the camera (the query's answer)"),
    Column("drawn", "int", "", "visible objects also inside the view frustum (the instances drawn)"),
    Column("nodes_visited", "int", "", "tree nodes / grid cells / buckets the query entered"),
    Column("max_nodes_per_level", "int", "", "the most nodes the query entered on one tree level"),
    Column("moved", "int", "", "objects moved (updated in the index) this frame"),
    Column("update_ms", "float", "ms", "the update stage: setting the camera pose, and moving objects in the index", _MS),
    Column("query_ms", "float", "ms", "the index query (`query_into`)", _MS),
    Column("cull_ms", "float", "ms", "frustum cull of the visible set", _MS),
    Column("gather_ms", "float", "ms", "gathering instance records of the drawn objects", _MS),
    Column("upload_ms", "float", "ms", "writing the instance records into the GPU buffer", _MS),
    Column("draw_ms", "float", "ms", "the instanced draw, including waiting for the GPU to finish", _MS),
    Column("frame_ms", "float", "ms", "the whole frame (all stages and overhead, recording excluded)", _MS),
    Column(
        "record_ms",
        "float",
        "ms",
        "time spent in the recorder during this frame (buffering, and any flush to disk); "
        "not part of `frame_ms`",
        _MS,
        source="recorder",
    ),
)

# version 2: visibility events (dynamic worlds), after every version 1 column
_V2: tuple[Column, ...] = _V1 + (
    Column("entered", "int", "", "objects that came into view distance since the last frame (the first frame: all visible)"),
    Column("left", "int", "", "objects that went out of view distance since the last frame (with `--hysteresis`: "
                              "beyond r + margin)"),
)

# version 3: draw calls (an imported scene draws one instanced draw per distinct mesh)
_V3: tuple[Column, ...] = _V2 + (
    Column("draw_calls", "int", "", "instanced draws of the objects this frame (1 for sprites or cubes, one per "
                                    "distinct mesh with drawn instances for a scene drawn with its own meshes; 0 when "
                                    "nothing is drawn)"),
)

#: every schema version this code reads, oldest first
SCHEMAS: dict[int, tuple[Column, ...]] = {1: _V1, 2: _V2, 3: _V3}

#: the version new recordings are written with
SCHEMA_VERSION: int = max(SCHEMAS)

#: the columns of :data:`SCHEMA_VERSION`, in file order
COLUMN_INFO: tuple[Column, ...] = SCHEMAS[SCHEMA_VERSION]
COLUMNS: tuple[str, ...] = tuple(c.name for c in COLUMN_INFO)

#: the columns a frame fills (the fields of :class:`viewer.frame.FrameStats`), in file order
FRAME_COLUMN_INFO: tuple[Column, ...] = tuple(c for c in COLUMN_INFO if c.source == "frame")

#: the timed stages, in pipeline order, then the whole frame (the plot and compare rows)
STAGES: tuple[str, ...] = (
    "update_ms",
    "query_ms",
    "cull_ms",
    "gather_ms",
    "upload_ms",
    "draw_ms",
    "frame_ms",
)


def columns_for(version: int) -> tuple[Column, ...]:
    """The columns of schema ``version``; ``KeyError`` for a version this code does not know."""
    return SCHEMAS[version]


def version_of_header(header: list[str] | tuple[str, ...]) -> int | None:
    """The schema version whose columns are exactly ``header``, or None."""
    names = tuple(h.strip() for h in header)
    for v, cols in SCHEMAS.items():
        if names == tuple(c.name for c in cols):
            return v
    return None
