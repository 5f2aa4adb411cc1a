"""The per-frame CSV schema: its name, and which columns each version has.

A recording is a plain CSV (a header row, then one row per frame) with a metadata file beside it
(:mod:`viewer.recording.meta`) that records the schema version. The columns are declared once, with the
frame's stages, in :mod:`viewer.frame.stages` (each with the version that added it); this module only
derives the versions from them: version v has every column added at or before v, in file order. The
recorder's header and formats, the reader's checks and the CSV table in ``viewer/recording/README.md``
(a test compares them) all follow. Recordings of every version listed here stay readable.
"""

from __future__ import annotations

from ..frame.stages import (
    COLUMN_INFO,
    FRAME_COLUMN_INFO,
    SCHEMA_VERSION,
    TIMED_COLUMNS,
    Column,
    columns_of_version,
)

__all__ = [
    "COLUMNS",
    "COLUMN_INFO",
    "Column",
    "FRAME_COLUMN_INFO",
    "SCHEMAS",
    "SCHEMA_NAME",
    "SCHEMA_VERSION",
    "TIMED_COLUMNS",
    "columns_for",
    "version_of_header",
]

SCHEMA_NAME = "viewer-frames"

#: every schema version this code reads, oldest first
SCHEMAS: dict[int, tuple[Column, ...]] = {v: columns_of_version(v) for v in range(1, SCHEMA_VERSION + 1)}

#: the column names of :data:`SCHEMA_VERSION`, in file order
COLUMNS: tuple[str, ...] = tuple(c.name for c in COLUMN_INFO)


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
