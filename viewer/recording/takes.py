"""Recording takes of a live flight (``viewer view --record DIR``, the R key): every frame as flown.

A take ``N`` writes three files into its directory:

- ``take-N.csv`` and ``take-N.meta.json``: one row per frame of the schema every recording uses
  (:class:`viewer.recording.Recorder`, with its guarantees: whole rows only, closed on SIGTERM and Ctrl-C),
  ``frame`` and ``t`` counted from the take's first frame, ``dt`` the real step of each frame, ``index``
  the index that answered it (switching mid-take shows there);
- ``take-N.path.toml``: the flight as a camera path (the format ``viewer record --path`` reads), thinned
  to the keyframes that reproduce every flown pose at its ``t`` within
  :data:`viewer.paths.POSITION_TOLERANCE` world units and :data:`viewer.paths.ANGLE_TOLERANCE` degrees;
- in a moving world, ``take-N.world.npz``: the world as it was when the take began
  (:meth:`viewer.frame.motion.MotionState.snapshot`: the world clock, the step count, the movers' centres,
  radii and velocities), written whole when the take starts, and its clock and step count in the
  metadata's ``world``. :func:`read_take_world` reads it back beside a take's path file, so that
  ``viewer record --path take-N.path.toml`` starts the world there and runs the take's own ``dt``.

Take numbers only grow: the next take is one past the highest number in the directory, and its CSV is
created exclusively, so nothing is ever overwritten (not even by a second viewer recording into the same
directory). A take stopped before its first frame leaves no files (an empty recording is nothing to
compare); the next take of the same window still gets the next number (a later viewer may use it again). No GL here: the window passes the stats of each frame.
"""

from __future__ import annotations

import io
import os
import re
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from ..errors import UserError
from ..files.output import replace_atomically
from ..frame.motion import SNAPSHOT_FIELDS, SnapshotError, check_snapshot
from ..paths import PathRecorder, save_path
from ..terminal.text import clip
from .meta import read_meta
from .writer import Recorder

__all__ = ["WORLD_FIELDS", "Take", "TakeDir", "TakeWorld", "next_take_number", "read_take_world"]

_TAKE_FILE = re.compile(r"^take-(\d+)\.(?:csv|meta\.json|path\.toml|world\.npz)$")

#: the arrays of a take's world file (what :meth:`viewer.frame.motion.MotionState.snapshot` gives)
WORLD_FIELDS = SNAPSHOT_FIELDS


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

    def __init__(self, number: int, directory: Path, meta: dict[str, Any], *, flush_rows: int = 256,
                 world: Mapping[str, np.ndarray] | None = None) -> None:
        self.number = number
        self.directory = directory
        self.csv_path = directory / f"take-{number}.csv"
        self.path_file = directory / f"take-{number}.path.toml"
        #: ``take-N.world.npz``, the moving world as the take began (None: a static scene)
        self.world_file: Path | None = None
        if world is not None:
            meta = dict(meta)
            meta["world"] = self._write_world(world)
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

    def _write_world(self, world: Mapping[str, np.ndarray]) -> dict[str, Any]:
        """Write the snapshot ``world`` whole (a temporary file, then a rename) as ``take-N.world.npz``;
        returns the metadata's ``world`` section. A :class:`UserError` when it cannot be written."""
        missing = [f for f in WORLD_FIELDS if f not in world]
        if missing:
            raise ValueError(f"a take's world needs {', '.join(missing)}")
        arrays = {f: np.asarray(world[f]) for f in WORLD_FIELDS}
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        f = self.directory / f"take-{self.number}.world.npz"
        try:
            replace_atomically(f, buf.getvalue())
        except OSError as exc:
            raise UserError(f"{f}: cannot write: {exc.strerror or exc}") from None
        self.world_file = f
        return {"t": float(arrays["t"]), "step": int(arrays["step"]), "movers": int(arrays["ids"].size),
                "file": f.name}

    @property
    def elapsed(self) -> float:
        """Wall-clock seconds since the take started."""
        return time.monotonic() - self.started

    def append(self, stats) -> None:
        """Record one frame's :class:`viewer.frame.FrameStats` (its ``dt`` the real step, its pose the
        camera's after the frame's update); ``frame`` and ``t`` are renumbered from the take's start. In a
        split screen each view's row of a frame is appended in turn, view 0 first: the rows of views 1.. keep
        their frame's number and time, and the path file follows view 0 (the camera flown)."""
        if getattr(stats, "view", 0):
            self.recorder.append(stats, frame=self.frames - 1, t=self.t)
            return
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
                for f in (self.csv_path, self.recorder.meta_path, self.world_file):
                    if f is None:
                        continue
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
        world = "" if self.world_file is None else f", {self.world_file.name}"
        rows = self.recorder.rows_written
        each = f"{self.frames} frames ({rows} rows: split screen)" if rows != self.frames else f"{rows} frames"
        return (f"{self.name}: {each}, {self.t:.2f} s flown -> {self.csv_path}"
                f" (+ .meta.json{wrote_path}{world})")


class TakeDir:
    """The directory takes go to. Checked (or created) when made, so a bad ``--record DIR`` fails before
    the window opens."""

    def __init__(self, directory: str | os.PathLike) -> None:
        from ..files.output import prepare_out_dir

        self.directory = prepare_out_dir(directory, create=True)
        self.last_number = 0  # the last take started here: numbers grow even past a take that left no files

    def start(self, meta: dict[str, Any], *, flush_rows: int = 256,
              world: Mapping[str, np.ndarray] | None = None) -> Take:
        """Start the next take (never overwriting one) with metadata ``meta`` (:func:`build_meta`).

        world : in a moving world, its snapshot as the take begins (:meth:`viewer.frame.motion.MotionState.snapshot`,
            taken before the take's first frame advances it), kept as ``take-N.world.npz``
        """
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
            try:
                return Take(n, self.directory, meta, flush_rows=flush_rows, world=world)
            except BaseException:  # nothing written: the claimed number is free again
                for f in (csv, self.directory / f"take-{n}.world.npz"):
                    try:
                        f.unlink()
                    except OSError:
                        pass
                raise
        raise UserError(f"{self.directory}: cannot find a free take number")


@dataclass
class TakeWorld:
    """What a take says about its world, read beside its path file (:func:`read_take_world`).

    name : ``take-N``; meta_file : its ``take-N.meta.json``
    snapshot : the world as the take began (:data:`WORLD_FIELDS` arrays, for
        :func:`viewer.frame.motion.resumed`), or None: the take records none (a static scene, or a take of
        an older viewer)
    world_file : the ``take-N.world.npz`` it came from (None with no snapshot)
    t, dt : (F,) float64 seconds, the take's rows as flown (``t`` from its first frame, ``dt`` each frame's
        real step), or None when its CSV is gone
    """

    name: str
    meta_file: Path
    snapshot: dict[str, np.ndarray] | None
    world_file: Path | None
    t: np.ndarray | None
    dt: np.ndarray | None

    @property
    def clock(self) -> float:
        """The world clock when the take began, seconds (0 with no snapshot)."""
        return 0.0 if self.snapshot is None else float(self.snapshot["t"])

    @property
    def step(self) -> int:
        """Motion steps taken before the take began (0 with no snapshot)."""
        return 0 if self.snapshot is None else int(self.snapshot["step"])


def read_take_world(path_file: str | os.PathLike) -> TakeWorld | None:
    """The world of the take whose camera path is ``path_file`` (``DIR/take-N.path.toml``), from
    ``take-N.meta.json``, ``take-N.world.npz`` and ``take-N.csv`` beside it; None when ``path_file`` is not a
    take's path (another name, or no take metadata beside it).

    A metadata file or world file that cannot be read, a value of either outside the rule of a world snapshot
    (:func:`viewer.frame.motion.check_snapshot`: the clock, the step count, each mover's centre, view radius and
    velocity inside the numeric domain), or a world file that is not the one the metadata names (another clock
    or step count), is a :class:`UserError` naming the file, the field and the value given.
    """
    p = Path(path_file)
    m = re.match(r"^(take-\d+)\.path\.toml$", p.name)
    if not m:
        return None
    name = m.group(1)
    csv = p.with_name(f"{name}.csv")
    meta = read_meta(csv)
    if meta is None:
        return None
    meta_file = p.with_name(f"{name}.meta.json")
    t = dt = None
    if csv.is_file():
        from .reader import read_run

        run = read_run(csv)
        t, dt = np.asarray(run["t"], dtype=np.float64), np.asarray(run["dt"], dtype=np.float64)
    world = meta.get("world")
    if world is None:
        return TakeWorld(name, meta_file, None, None, t, dt)
    if not isinstance(world, dict) or not isinstance(world.get("file"), str):
        raise UserError(f"{meta_file}: field 'world.file' must be the name of the take's world file")
    given = {k: world[k] for k in ("t", "step") if world.get(k) is not None}
    try:  # the metadata's clock and step count by the world file's own rule
        check_snapshot(given, fields=tuple(given))
    except SnapshotError as exc:
        raise UserError(f"{meta_file}: field 'world.{exc.field}': {exc.problem}") from None
    wf = p.with_name(Path(world["file"]).name)  # beside the take, whatever the field says
    snap = _read_world_file(wf)
    for key, have in (("t", float(snap["t"])), ("step", int(snap["step"]))):
        want = given.get(key)
        if want is not None and want != have:
            raise UserError(f"{wf}: its {key} {have:g} is not the take's ({meta_file.name}: world.{key} "
                            f"{clip(str(want), 30)}): not this take's world file")
    return TakeWorld(name, meta_file, snap, wf, t, dt)


def _read_world_file(f: Path) -> dict[str, np.ndarray]:
    """The arrays of a take's world file, checked (:func:`viewer.frame.motion.check_snapshot`); a
    :class:`UserError` naming it (and the field, with the value given) when it is missing, damaged or out of
    the rule."""
    try:
        with np.load(f, allow_pickle=False) as z:
            missing = [k for k in WORLD_FIELDS if k not in z.files]
            if missing:
                raise UserError(f"{f}: not a take's world file (no {', '.join(missing)})")
            snap = {k: np.asarray(z[k]) for k in WORLD_FIELDS}
    except UserError:
        raise
    except FileNotFoundError:
        raise UserError(f"{f}: no such file (the take's world as it began; its metadata names it)") from None
    except (OSError, ValueError, TypeError, EOFError, KeyError, zipfile.BadZipFile) as exc:  # TypeError: a .npy
        raise UserError(f"{f}: not a take's world file ({clip(str(exc), 80) or type(exc).__name__})") from None
    try:
        return check_snapshot(snap)
    except SnapshotError as exc:
        raise UserError(f"{f}: field '{exc.field}': {exc.problem}") from None
