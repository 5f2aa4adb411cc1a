"""Recording takes of a live flight (``viewer view --record DIR``, the R key): every frame as flown.

A take ``N`` writes three files into its directory:

- ``take-N.csv`` and ``take-N.meta.json``: one row per frame of the schema every recording uses
  (:class:`viewer.recording.Recorder`, with its guarantees: whole rows only, closed on SIGTERM and Ctrl-C),
  ``frame`` and ``t`` counted from the take's first frame, ``dt`` the real step of each frame, ``index``
  the index that answered it (switching mid-take shows there);
- ``take-N.path.toml``: the flight as a camera path (the format ``viewer record --path`` reads), thinned
  to the keyframes that reproduce every flown pose at its ``t`` within
  :data:`viewer.paths.POSITION_TOLERANCE` world units and :data:`viewer.paths.ANGLE_TOLERANCE` degrees.

Take numbers only grow: the next take is one past the highest number in the directory, and its CSV is
created exclusively, so nothing is ever overwritten (not even by a second viewer recording into the same
directory). A take stopped before its first frame leaves no files (an empty recording is nothing to
compare); the next take of the same window still gets the next number (a later viewer may use it again). No GL here: the window passes the stats of each frame.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..paths import PathRecorder, save_path
from .writer import Recorder

__all__ = ["Take", "TakeDir", "next_take_number"]

_TAKE_FILE = re.compile(r"^take-(\d+)\.(?:csv|meta\.json|path\.toml)$")


def next_take_number(directory: str | os.PathLike) -> int:
    """One past the highest take number of any ``take-N.*`` file in ``directory`` (1 for none)."""
    highest = 0
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return 1
    for name in names:
        m = _TAKE_FILE.match(name)
        if m:
            highest = max(highest, int(m.group(1)))
    return highest + 1


class Take:
    """One take: a :class:`Recorder` for the rows and a :class:`PathRecorder` for the poses.

    Use :meth:`TakeDir.start` to make one. :meth:`append` once per frame, :meth:`close` at the end
    (safe twice).
    """

    def __init__(self, number: int, directory: Path, meta: dict[str, Any], *, flush_rows: int = 256) -> None:
        self.number = number
        self.directory = directory
        self.csv_path = directory / f"take-{number}.csv"
        self.path_file = directory / f"take-{number}.path.toml"
        self.started = time.monotonic()
        self.t = 0.0  # seconds of flight since the take's first frame (the sum of the later frames' dt)
        self.frames = 0
        self.indexes: list[str] = []
        self.closed = False
        self.path_written: Path | None = None
        self.poses = PathRecorder(interval=0.0, name=f"take-{number}")
        self.recorder = Recorder(self.csv_path, meta, flush_rows=flush_rows)

    @property
    def name(self) -> str:
        return f"take-{self.number}"

    @property
    def elapsed(self) -> float:
        """Wall-clock seconds since the take started."""
        return time.monotonic() - self.started

    def append(self, stats) -> None:
        """Record one frame's :class:`viewer.frame.FrameStats` (its ``dt`` the real step, its pose the
        camera's after the frame's update); ``frame`` and ``t`` are renumbered from the take's start."""
        if self.frames:
            self.t += float(stats.dt)
        self.recorder.append(stats, frame=self.frames, t=self.t)
        self.poses.add(self.t, (stats.cam_x, stats.cam_y, stats.cam_z, stats.yaw, stats.pitch))
        if stats.culler not in self.indexes:
            self.indexes.append(stats.culler)
        self.frames += 1

    def close(self, ended: str = "closed") -> str:
        """Finish the CSV and metadata, write the path file; returns one line saying what was written.

        The path file needs two frames with distinct times; a shorter take keeps its CSV only. A take
        closed before its first frame (R pressed twice in a row) leaves no file at all (its number is free
        again) and the line says so.
        """
        if self.closed:
            return f"{self.name}: already closed"
        self.closed = True
        if self.frames == 0:
            try:
                self.recorder.close(ended=ended)
            finally:
                for f in (self.csv_path, self.recorder.meta_path):
                    try:
                        f.unlink()
                    except OSError:  # already gone; nothing else to do on the way out of a window
                        pass
            return f"{self.name}: no frames recorded, no files written"
        meta = self.recorder.meta
        meta["indexes"] = list(self.indexes)
        if len(self.indexes) > 1:
            meta["label"] = f"{self.name}: {', '.join(self.indexes)}"
        wrote_path = ""
        try:
            if len(self.poses) >= 2:
                try:
                    path = self.poses.path(thin=True)
                except ValueError as exc:  # a flight whose curve leaves the numeric domain: the rows stay
                    wrote_path = f"; no path file: {exc}"
                else:
                    self.path_written = save_path(path, self.path_file)
                    meta["path"] = {"name": self.name, "file": self.path_file.name, "keyframes": len(path),
                                    "flown_frames": self.frames}
                    wrote_path = f", {self.path_file.name}"
        finally:
            self.recorder.close(ended=ended)
        return (f"{self.name}: {self.recorder.rows_written} frames, {self.t:.2f} s flown -> {self.csv_path}"
                f" (+ .meta.json{wrote_path})")


class TakeDir:
    """The directory takes go to. Checked (or created) when made, so a bad ``--record DIR`` fails before
    the window opens."""

    def __init__(self, directory: str | os.PathLike) -> None:
        from ..host.output import prepare_out_dir

        self.directory = prepare_out_dir(directory, create=True)
        self.last_number = 0  # the last take started here: numbers grow even past a take that left no files

    def start(self, meta: dict[str, Any], *, flush_rows: int = 256) -> Take:
        """Start the next take (never overwriting one) with metadata ``meta`` (:func:`build_meta`)."""
        for _ in range(1000):
            n = max(next_take_number(self.directory), self.last_number + 1)
            csv = self.directory / f"take-{n}.csv"
            try:  # claim the number: a concurrent viewer would take the next one
                fd = os.open(csv, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                continue
            except OSError as exc:
                raise UserError(f"{csv}: cannot write: {exc.strerror or exc}") from None
            os.close(fd)
            self.last_number = n
            return Take(n, self.directory, meta, flush_rows=flush_rows)
        raise UserError(f"{self.directory}: cannot find a free take number")
