"""A recording's frames as a Chrome Trace Event file (``viewer record --trace FILE.json``), for Perfetto.

The file is the JSON object format of the Trace Event format: ``{"traceEvents": [...], "displayTimeUnit":
"ms", "otherData": {...}}``, which Perfetto (and ``chrome://tracing``) open as they are. Each culler
recorded (each ``--index``; each view of a split screen) is a process of its own, named after it, with one
track (a thread) per stage of :data:`viewer.frame.stages.STAGES` and one for the whole frame, in pipeline
order. A frame is:

- a complete event (``"ph": "X"``) ``frame`` on the frame track: ``ts`` the frame's start (``perf_counter``,
  microseconds since the trace's first frame), ``dur`` its ``frame_ms``;
- one complete event per stage that took time, on that stage's track: ``dur`` the row's ``<stage>_ms``
  exactly (to the CSV's 0.1 microsecond), the stages laid end to end from the frame's start in pipeline
  order. The stages are timed as durations (:mod:`viewer.frame.pipeline`), not as start times: a stage's
  place inside its frame is this reconstruction, its length is measured; what the stages leave of
  ``frame_ms`` (the visibility events, overhead) shows as the frame's tail;
- a counter event (``"ph": "C"``) ``gpu_ms``: the device's time of the frame's GL work (the row's
  ``gpu_ms``, GL timer queries; on llvmpipe its clock, CPU work), when the recording has that column.

Every event's ``args`` carry the frame number (and the view, the index and the culling mode). The file is
written whole at :meth:`TraceWriter.close` (a temporary file, then a rename): an interrupted run leaves
none. Standard library only, like the rest of :mod:`viewer.recording`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..files.output import replace_atomically
from ..frame.stages import COLUMN_INFO, GPU_COLUMN, STAGES

__all__ = ["FRAME_TRACK", "TRACE_FORMAT", "TraceWriter", "stage_tracks"]

#: what the file says it is (its ``otherData.format``)
TRACE_FORMAT = "viewer-trace"

#: the track (thread) of the whole frame; the stages' tracks follow it, numbered 1.. in pipeline order
FRAME_TRACK = "frame"


def stage_tracks() -> dict[str, int]:
    """Track name -> thread id: the frame (0), then each stage of :data:`viewer.frame.stages.STAGES` (1..)."""
    return {FRAME_TRACK: 0, **{s.name: j + 1 for j, s in enumerate(STAGES)}}


#: how the CSV writes a time in ms (every timed column alike): a span's length is the value the CSV holds
_MS_FORMAT = next(c.fmt for c in COLUMN_INFO if c.name == "frame_ms")


def _us(ms: float) -> float:
    """Milliseconds as microseconds, exactly as the CSV holds them (its format: 0.1 microsecond)."""
    return round(float(_MS_FORMAT % float(ms)) * 1e3, 1)


class TraceWriter:
    """Frames collected in memory, written as one Chrome Trace Event file at :meth:`close`.

    path : the JSON file to write (checked by the caller before the run; replaced whole at close)
    meta : a few facts for ``otherData`` (the scene, the machine line, the GL renderer...), JSON values

    :meth:`add` once per recorded row, with the ``perf_counter()`` seconds at which its frame began.
    """

    def __init__(self, path: str | os.PathLike, meta: dict[str, Any] | None = None) -> None:
        self.path = Path(path)
        self.meta = dict(meta or {})
        self._events: list[dict] = []
        self._processes: dict[str, int] = {}  # process label -> pid
        self._origin: float | None = None
        self.frames = 0

    def _pid(self, label: str) -> int:
        pid = self._processes.get(label)
        if pid is None:
            pid = self._processes[label] = len(self._processes) + 1
            self._events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": label}})
            self._events.append({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0,
                                 "args": {"sort_index": pid}})
            for name, tid in stage_tracks().items():
                self._events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": name}})
                self._events.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid,
                                     "args": {"sort_index": tid}})
        return pid

    def add(self, label: str, row, start: float) -> None:
        """One frame of the culler ``label`` (its process): ``row`` a :class:`viewer.frame.FrameStats` (or anything
        with its fields), ``start`` ``perf_counter()`` seconds when the frame began."""
        if self._origin is None:
            self._origin = start
        pid = self._pid(label)
        ts = round((start - self._origin) * 1e6, 1)
        frame, view = int(row.frame), int(getattr(row, "view", 0))
        args = {"frame": frame, "view": view, "index": str(row.index), "culling": str(row.culling)}
        self._events.append({"ph": "X", "name": FRAME_TRACK, "cat": "frame", "pid": pid, "tid": 0, "ts": ts,
                             "dur": _us(row.frame_ms), "args": args})
        at = ts
        for tid, s in enumerate(STAGES, start=1):
            dur = _us(getattr(row, s.column))
            if dur > 0:
                self._events.append({"ph": "X", "name": s.name, "cat": "stage", "pid": pid, "tid": tid, "ts": at,
                                     "dur": dur, "args": {"frame": frame, "view": view}})
                at = round(at + dur, 1)
        gpu = getattr(row, GPU_COLUMN, None)
        if gpu is not None:
            self._events.append({"ph": "C", "name": GPU_COLUMN, "pid": pid, "tid": 0, "ts": ts,
                                 "args": {GPU_COLUMN: _us(gpu) / 1e3}})  # ms, as the CSV holds it
        self.frames += 1

    @property
    def events(self) -> list[dict]:
        """The trace's events so far (metadata events first for each process)."""
        return list(self._events)

    def close(self) -> Path:
        """Write the file whole; returns its path. A :class:`UserError` naming it when it cannot be written."""
        doc = {"traceEvents": self._events, "displayTimeUnit": "ms",
               "otherData": {"format": TRACE_FORMAT, "frames": self.frames, **self.meta}}
        try:
            replace_atomically(self.path, json.dumps(doc, separators=(",", ":")).encode())
        except OSError as exc:
            raise UserError(f"--trace {self.path}: cannot write: {exc.strerror or exc}") from None
        return self.path
