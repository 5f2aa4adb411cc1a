"""One frame's row: :class:`FrameStats`, a slotted dataclass with one field per column a frame fills
(:data:`viewer.frame.stages.FRAME_COLUMN_INFO`), derived from the declarations, never written by hand."""

from __future__ import annotations

from dataclasses import field, make_dataclass
from typing import Any

from .stages import FRAME_COLUMN_INFO, STAGES, culler_of

__all__ = ["FRAME_COLUMNS", "FrameStats"]

#: Column names of a frame row, in order.
FRAME_COLUMNS: tuple[str, ...] = tuple(c.name for c in FRAME_COLUMN_INFO)

_CULLING_COLUMNS: tuple[str, ...] = tuple(s.column for s in STAGES if s.culling)


class _FrameStatsRow:
    """What every :class:`FrameStats` can do besides holding its fields."""

    __slots__ = ()

    def as_row(self) -> tuple:
        """The values in :data:`FRAME_COLUMNS` order."""
        return tuple(getattr(self, f) for f in FRAME_COLUMNS)

    def as_dict(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in FRAME_COLUMNS}

    @property
    def culler(self) -> str:
        """What the user picked (``--index``, the ``I`` cycle): the index under CPU culling, else the mode."""
        return culler_of(self.index, self.culling)

    @property
    def cpu_ms(self) -> float:
        """The culling stages' sum (query + cull + gather + upload: the stages declared ``culling``), ms."""
        return sum(getattr(self, c) for c in _CULLING_COLUMNS)


_KIND_TYPES = {"int": (int, 0), "float": (float, 0.0), "str": (str, "")}

FrameStats = make_dataclass(
    "FrameStats",
    [(c.name, _KIND_TYPES[c.kind][0], field(default=_KIND_TYPES[c.kind][1])) for c in FRAME_COLUMN_INFO],
    bases=(_FrameStatsRow,),
    slots=True,
)
FrameStats.__module__ = __name__
FrameStats.__doc__ = "One frame's row for the recorder (fields from the column declarations, in file order):\n\n" + (
    "\n".join(f"    {c.name} : {c.kind}{f' ({c.unit})' if c.unit else ''}, {c.doc}" for c in FRAME_COLUMN_INFO)
)
