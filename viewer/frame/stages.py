"""The stages of a frame and the columns of its row: each declared once, here.

A frame runs its stages in order (:data:`STAGES`), each timed in place; the frame's row
(:class:`viewer.frame.FrameStats`) holds the camera, the counts and one ``<stage>_ms`` column per stage.
Everything else derives from these declarations: the CSV schema and its versions
(:mod:`viewer.recording.schema`), ``FrameStats`` and its ``cpu_ms``, the HUD's lines, the panel's graphs'
colours, ``viewer view``'s printed medians, ``plot``'s panels and ``compare``'s rows.

To add a stage: declare it in :data:`STAGES` (in pipeline order) with ``since`` one above the newest
version (:data:`SCHEMA_VERSION`), any count it produces in ``_DECLARED`` with the same ``since``, then time
its work into ``frame.stage_ms[name]`` (and its counts into ``frame.counts[name]``) where it runs
(:mod:`viewer.frame.culling` for the CPU culling stages). The schema version follows, and every older
version stays readable.

Imports nothing beyond the standard library, so reading recordings never loads numba.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "COLUMN_INFO",
    "Column",
    "FRAME_COLUMN_INFO",
    "GPU_COLUMN",
    "HUD_COUNTS",
    "NO_INDEX",
    "SCHEMA_VERSION",
    "STAGES",
    "STAGE_COLUMNS",
    "Stage",
    "TIMED_COLUMNS",
    "TIME_STATS",
    "columns_of_version",
    "culler_of",
]

#: The ``index`` column of a frame culled by a mode without an index (the GPU's).
NO_INDEX = "none"

_MS = "%.4f"  # 0.1 microsecond resolution, far below perf_counter's noise on a frame


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a frame's row (and of the recording's CSV).

    name : the header text
    kind : ``"int"``, ``"float"`` or ``"str"``
    unit : the unit of the values ("" when dimensionless / a count)
    doc : what the value is, for the CSV table and ``--help``
    fmt : how the writer formats a value (``None``: ``repr`` of the float, exact round trip)
    source : who fills it: ``"frame"`` (a field of :class:`viewer.frame.FrameStats`) or ``"recorder"``
    since : the schema version that added it (a recording of version v has every column with since <= v)
    hud : its label on the HUD's count line and in ``viewer view``'s summary ("": not shown)
    """

    name: str
    kind: str
    unit: str
    doc: str
    fmt: str | None = None
    source: str = "frame"
    since: int = 1
    hud: str = ""


@dataclass(frozen=True, slots=True)
class Stage:
    """One timed stage of a frame.

    name : its name; its column is ``<name>_ms``, milliseconds
    doc : what it times (the column's doc)
    colour : (r, g, b) in 0..1, the panel's graphs' and the plots' colour of it
    culling : part of the culling cost (``FrameStats.cpu_ms``: what a culling mode makes cheap)
    since : the schema version that added its column
    """

    name: str
    doc: str
    colour: tuple[float, float, float]
    culling: bool = False
    since: int = 1
    unit: str = "ms"

    @property
    def column(self) -> str:
        return f"{self.name}_ms"

    def as_column(self) -> Column:
        return Column(self.column, "float", self.unit, self.doc, _MS, since=self.since)


#: The stages of a frame, in pipeline order.
STAGES: tuple[Stage, ...] = (
    Stage("motion", "the world's own step: advancing the scene's movers to this frame's time (the simulation: the "
                    "same work whatever the culling; 0 in a still world and in a view other than the first). "
                    "Recordings before schema version 7 counted it in `update_ms`", (0.45, 0.40, 0.35), since=7),
    Stage("update", "the update stage: setting the camera pose, and moving the movers in the culling mode "
                    "(re-filing them in its index, or writing their rows); from schema version 7 without the "
                    "world's own step (`motion_ms`)", (0.60, 0.60, 0.60)),
    Stage("query", "the index query (`query_into`; with culling `gpu`, the whole dispatch)",
          (0.95, 0.30, 0.25), culling=True),
    Stage("cull", "frustum cull of the visible set", (0.98, 0.75, 0.20), culling=True),
    Stage("lod", "LOD selection: each drawn object's band from its switch distances, the band counts and band "
                 "changes (0 for a scene without LOD switches)", (0.20, 0.80, 0.80), culling=True, since=6),
    Stage("gather", "gathering instance records of the drawn objects (nearest first; grouped by mesh for a "
                    "scene drawn with its own meshes)", (0.30, 0.75, 0.35), culling=True),
    Stage("upload", "writing the instance records into the GPU buffer", (0.25, 0.60, 0.95), culling=True),
    Stage("draw", "the instanced draw, including waiting for the GPU to finish", (0.70, 0.45, 0.90)),
)

_FRAME_MS = Column("frame_ms", "float", "ms", "the whole frame (all stages and overhead, recording excluded)", _MS)
#: Not a stage: it overlaps the stages GL runs (the draw; with culling `gpu` or `coherent` the query's dispatches).
_GPU_MS = Column("gpu_ms", "float", "ms", "the device's own time of the frame's GL work, from GL timer queries "
                 "(`GL_TIME_ELAPSED`): the draw and, with culling `gpu` or `coherent`, their compute dispatches; 0 "
                 "where none is timed (a context without timer queries). On a software renderer (llvmpipe) it is that "
                 "renderer's clock, CPU work, not a GPU's", _MS, since=8)
_BY_NAME = {s.name: s for s in STAGES}


def _stages_since(version: int) -> tuple[Column, ...]:
    return tuple(s.as_column() for s in STAGES if s.since == version)


#: Every column in file order: version 1's columns, then each later version's, each in declaration order.
#: A stage's column sits with the columns of its ``since`` version (version 1's between the counts and
#: ``frame_ms``, later ones after every older column).
_DECLARED: tuple[Column, ...] = (
    Column("frame", "int", "", "frame number, from 0"),
    Column("t", "float", "s", "time on the camera path (simulation time, the sum of dt)"),
    Column("dt", "float", "s", "the time step of this frame (fixed in `viewer record`)"),
    Column("cam_x", "float", "world units", "camera position x"),
    Column("cam_y", "float", "world units", "camera position y"),
    Column("cam_z", "float", "world units", "camera position z"),
    Column("yaw", "float", "degrees", "camera yaw"),
    Column("pitch", "float", "degrees", "camera pitch"),
    Column("index", "str", "", "the index that answered the query (a key of `INDEXES`; `none` for a culling "
                               "mode without one)"),
    Column("objects", "int", "", "objects in the index", hud="objects"),
    Column("candidates", "int", "", "objects whose distance to the camera the index tested", hud="candidates"),
    Column("visible", "int", "", "objects in range: whose view distance holds the camera and, with "
                                                    "begin distances, whose begin it has reached (the query's answer)", hud="visible"),
    Column("drawn", "int", "", "visible objects also inside the view frustum (the instances drawn)", hud="drawn"),
    Column("nodes_visited", "int", "", "tree nodes / grid cells / buckets the query entered", hud="nodes"),
    Column("max_nodes_per_level", "int", "", "the most nodes the query entered on one tree level", hud="max/level"),
    Column("moved", "int", "", "objects moved (updated in the index) this frame"),
    *_stages_since(1),
    _FRAME_MS,
    Column("record_ms", "float", "ms", "time spent in the recorder during this frame (buffering, and any flush to "
                                       "disk); not part of `frame_ms`", _MS, source="recorder"),
    # version 2: visibility events (dynamic worlds)
    Column("entered", "int", "", "objects that came into view distance since the last frame (the first frame: all "
                                 "visible)", since=2),
    Column("left", "int", "", "objects that went out of view distance since the last frame (with `--hysteresis`: "
                              "beyond r + margin)", since=2),
    # version 3: draw calls (an imported scene draws one instanced draw per distinct mesh)
    Column("draw_calls", "int", "", "instanced draws of the objects this frame (1 for sprites or cubes, one per "
                                    "distinct mesh with drawn instances for a scene drawn with its own meshes; 0 when "
                                    "nothing is drawn)", since=3, hud="draw calls"),
    # version 4: the culling mode, apart from the index
    Column("culling", "str", "", "the culling mode: `cpu` (the index, then the CPU frustum cull and gather) or "
                                 "`gpu` (one compute dispatch, then an indirect draw)", since=4),
    # version 5: many views culled together in one frame
    Column("view", "int", "", "which of the frame's views the row is (0: the first camera; `viewer record --views "
                              "K` writes K rows a frame, one per view)", since=5),
    # version 6: visibility ranges, LOD bands and HLOD (issue 24)
    Column("band0", "int", "", "drawn objects in LOD band 0 (the finest; every drawn object in a scene without LOD "
                               "switches)", since=6),
    Column("band1", "int", "", "drawn objects in LOD band 1", since=6),
    Column("band2", "int", "", "drawn objects in LOD band 2", since=6),
    Column("band3", "int", "", "drawn objects in LOD band 3 or coarser", since=6),
    Column("band_changes", "int", "", "objects whose LOD band changed since the last frame (drawn with another band, "
                                      "newly drawn, or no longer drawn)", since=6),
    Column("proxies", "int", "", "drawn HLOD proxies (objects that are some object's visibility parent)", since=6),
    *(c for v in sorted({s.since for s in STAGES if s.since > 1}) for c in _stages_since(v)),
    # version 8: the device's own time of the frame's GL work (issue 46)
    _GPU_MS,
)

#: Every column, in file order (the newest version's).
COLUMN_INFO: tuple[Column, ...] = tuple(sorted(_DECLARED, key=lambda c: c.since))

#: The version of the newest columns (what new recordings are written with).
SCHEMA_VERSION: int = max(c.since for c in COLUMN_INFO)

#: The columns a frame fills (the fields of :class:`viewer.frame.FrameStats`), in file order.
FRAME_COLUMN_INFO: tuple[Column, ...] = tuple(c for c in COLUMN_INFO if c.source == "frame")

#: ``<stage>_ms`` of every stage, in pipeline order.
STAGE_COLUMNS: tuple[str, ...] = tuple(s.column for s in STAGES)

#: The timed columns: every stage, the whole frame, then the device's time of its GL work (the rows of ``plot``
#: and ``compare``; a recording of an older version lacks the newer ones).
TIMED_COLUMNS: tuple[str, ...] = (*STAGE_COLUMNS, _FRAME_MS.name, _GPU_MS.name)

#: The column of the device's time of a frame's GL work (GL timer queries), outside the stages.
GPU_COLUMN: str = _GPU_MS.name

#: The statistics a timed column is summarised by over a run's frames (``compare``'s columns, ``record``'s
#: summary, the bench's moving frames), each a percentile of the frames (numpy's default, linear
#: interpolation): the typical frame, and the worst ones a player notices as a stutter.
TIME_STATS: tuple[tuple[str, float], ...] = (("median", 50.0), ("p95", 95.0), ("p99", 99.0), ("max", 100.0))

#: The count columns the HUD and the summaries show, with their labels, in file order.
HUD_COUNTS: tuple[tuple[str, str], ...] = tuple((c.name, c.hud) for c in COLUMN_INFO if c.hud)


def culler_of(index: str, culling: str) -> str:
    """What the user picked (``--index``, the ``I`` cycle) from a row's ``index`` and ``culling`` columns:
    the index, or the culling mode when it has none."""
    return culling if index == NO_INDEX else index


def columns_of_version(version: int) -> tuple[Column, ...]:
    """The columns of schema ``version`` (1..:data:`SCHEMA_VERSION`), in file order; ``KeyError`` otherwise."""
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= SCHEMA_VERSION:
        raise KeyError(version)
    return tuple(c for c in COLUMN_INFO if c.since <= version)


def stage(name: str) -> Stage:
    """The stage called ``name``; ``KeyError`` otherwise."""
    return _BY_NAME[name]
