"""Per-frame recording: the CSV schema, the recorder, the metadata beside it, and reading runs back.

No GL and no plotting here (plots live in :mod:`viewer.reports.plot`, imported lazily by ``viewer plot``).

Public API::

    from viewer.recording import Recorder, build_meta, read_run, COLUMNS, SCHEMA_VERSION
    rec = Recorder("runs/a.csv", build_meta(scene=scene, index="octree", headless=True))
    rec.append(frame_stats)          # once per frame
    rec.close()
"""

from .meta import build_meta, gl_info, meta_path_for, read_meta, run_label, write_meta
from .reader import Run, read_run, read_runs
from .schema import COLUMN_INFO, COLUMNS, SCHEMA_NAME, SCHEMA_VERSION, SCHEMAS, TIMED_COLUMNS, Column
from .trace import TraceWriter
from .writer import Recorder

__all__ = [
    "COLUMNS",
    "COLUMN_INFO",
    "Column",
    "Recorder",
    "Run",
    "SCHEMAS",
    "SCHEMA_NAME",
    "SCHEMA_VERSION",
    "TIMED_COLUMNS",
    "TraceWriter",
    "build_meta",
    "gl_info",
    "meta_path_for",
    "read_meta",
    "read_run",
    "read_runs",
    "run_label",
    "write_meta",
]
