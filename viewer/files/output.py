"""Output files are checked before the work that fills them: a screenshot, a figure or a scene file
whose target cannot be written fails in a moment with a message, not after minutes of rendering.

Pure: standard library only.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator

from ..errors import UserError

__all__ = ["TEMP_NAME_ROOM", "CannotWrite", "atomic_file", "check_name_lengths", "check_output_file", "filled_dir",
           "name_max", "prepare_out_dir", "PROBE_SUFFIX", "probe_dir", "refuse_replacing", "replace_atomically"]


#: bytes a temporary file's name adds to the name of the file it replaces (``.NAME.`` + 8 random characters
#: + ``.probe`` / ``.tmp``, or ``.NAME.PID.tmp``): a file name must leave that room under the system's limit
TEMP_NAME_ROOM = 16


def _shown(text: str, most: int = 120) -> str:
    """``text`` for a message: whole when short, else its start and end (the suffix stays visible)."""
    return text if len(text) <= most else f"{text[:most // 2]}...{text[-(most // 3):]} ({len(text)} characters)"


def name_max(directory: str | os.PathLike) -> int:
    """The longest file name, in bytes, the file system of ``directory`` (or of its nearest existing
    ancestor) allows: ``os.pathconf(..., "PC_NAME_MAX")``, 255 when that cannot be asked."""
    d = Path(directory)
    while True:
        try:
            if d.is_dir():
                break
        except OSError:
            pass
        if d.parent == d:
            break
        d = d.parent
    try:
        v = os.pathconf(d if str(d) else ".", "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255
    return int(v) if v and v > 0 else 255


def check_name_lengths(path: str | os.PathLike, what: str | None = None, *, room: int = 0) -> None:
    """A :class:`UserError` naming ``what`` when a component of ``path`` is longer (in bytes, as the file
    system counts them) than the file system allows (:func:`name_max`), or, for the last component, than
    that less ``room`` (the bytes a temporary file's name adds, :data:`TEMP_NAME_ROOM`)."""
    text = os.fspath(path)
    parts = [c for c in text.split(os.sep) if c not in ("", ".", "..")]
    if not parts:
        return
    limit = name_max(Path(text).parent if parts else Path("."))
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        most = limit - room if last else limit
        size = len(os.fsencode(part))
        if size > most:
            label = f"{what} {_shown(text)}" if what else _shown(text)
            kind = "file" if last else "directory"
            extra = f" ({limit} less {room} for the temporary file written beside it)" if last and room else ""
            name = f"the {kind} name" if len(parts) == 1 else f"the {kind} name {_shown(part, 60)!r}"
            raise UserError(f"{label}: {name} is {size} bytes long; a {kind} name here can have at most "
                            f"{most} bytes{extra}")


def check_output_file(path: str | os.PathLike, what: str | None = None, suffixes: tuple[str, ...] = ()) -> Path:
    """Check that a file can be written at ``path`` (through a temporary file and a rename, as every
    writer here does); returns it as a :class:`Path`.

    Refused with a :class:`UserError` naming ``what`` (a flag such as ``--screenshot``) and the path: an
    empty name, a name ending in a separator, a name (or a directory name on the way) longer than the file
    system allows (``PC_NAME_MAX`` bytes, usually 255; the file's own name :data:`TEMP_NAME_ROOM` bytes less,
    for its temporary file), an existing directory or non-regular file (a device, a FIFO: a rename would
    replace it), a missing directory, and a directory in which a file cannot be created (permissions, a
    read-only file system: probed by creating and removing a temporary file, which is what tells, even for
    root). ``suffixes`` (e.g. ``(".npz",)``) restricts the file type.
    """
    text = os.fspath(path)
    label = f"{what} {_shown(text)}" if what else _shown(text)
    if not text.strip():
        raise UserError(f"{what or 'output'}: the file name is empty")
    if text.endswith(("/", os.sep)):
        raise UserError(f"{label}: is a directory, expected a file name")
    check_name_lengths(text, what, room=TEMP_NAME_ROOM)
    p = Path(text)
    try:
        if p.is_dir():
            raise UserError(f"{label}: is a directory, expected a file name")
        if suffixes and p.suffix.lower() not in suffixes:
            raise UserError(f"{label}: the file name must end in {' or '.join(suffixes)}")
        if p.exists() and not p.is_file():
            raise UserError(f"{label}: exists and is not a regular file (a device or a pipe?); choose a file name")
        d = p.parent if str(p.parent) else Path(".")
        if not d.is_dir():
            why = f"{_shown(str(d))} is not a directory" if d.exists() else f"directory {_shown(str(d))} does not exist"
            raise UserError(f"{label}: {why}")
    except OSError as exc:  # a path the system refuses to look at (too long as a whole, a loop of links)
        raise UserError(f"{label}: cannot use this path: {exc.strerror or exc}") from None
    try:
        probe_dir(d, f".{p.name}.")
    except OSError as exc:
        raise UserError(f"{label}: cannot write in {_shown(str(d))}: {exc.strerror or exc}") from None
    return p


def refuse_replacing(files, what: str, made_by: str, force: bool) -> None:
    """Refuse (:class:`UserError`) to replace a measurement: unless ``force``, name the first of ``files`` that
    exists already (a symbolic link included). ``what``: the flag and directory (``-o maps/city``);
    ``made_by``: what wrote such files (``viewer map``). Measurements take minutes and are not written twice
    alike, so an earlier one is replaced only when asked (``--force``), as ``viewer record`` does."""
    if force:
        return
    there = [Path(f) for f in files if os.path.lexists(f)]
    if there:
        more = f" (and {len(there) - 1} more of its files)" if len(there) > 1 else ""
        raise UserError(f"{what}: {_shown(str(there[0]))} exists already{more}, written by {made_by}; write into "
                        "another directory, or pass --force to replace it")


#: the suffix of a probe file (:func:`probe_dir`): one a stop left behind is removed by :func:`filled_dir`
PROBE_SUFFIX = ".probe"


def probe_dir(d: str | os.PathLike, prefix: str) -> None:
    """Create a new file ``PREFIX<random>.probe`` in directory ``d`` and remove it: ``OSError`` when ``d`` cannot
    take a file of that name. (A stop between the two, Ctrl-C or SIGTERM, can leave it: :func:`filled_dir`
    removes such a leftover from a directory it made.)"""
    fd, probe = tempfile.mkstemp(prefix=prefix, suffix=PROBE_SUFFIX, dir=d)  # a new name: never a planted link
    try:
        os.close(fd)
    finally:
        os.unlink(probe)


class CannotWrite(UserError, OSError):
    """An output file the system would not let us write (a full disk, a quota, a file too large, no
    permission): still an :class:`OSError` (``errno``, ``strerror``, ``filename``: the file meant, not its
    temporary file) for a caller that handles those, and a :class:`UserError` the CLI prints as one line
    ``PATH: cannot write: REASON`` when none does."""

    def __str__(self) -> str:
        return f"{self.filename}: cannot write: {self.strerror}"

    @classmethod
    def naming(cls, exc: OSError, path: str | os.PathLike) -> CannotWrite:
        """``exc`` as a :class:`CannotWrite` naming ``path``."""
        return exc if isinstance(exc, cls) else cls(exc.errno, exc.strerror or str(exc), os.fspath(path))


@contextmanager
def atomic_file(path: str | os.PathLike, *, text: bool = False, mode: int = 0o644, sync: bool = False,
                **open_kwargs) -> Iterator[IO]:
    """Write ``path`` whole or not at all: the block writes into a uniquely named temporary file beside it
    (created exclusively, so never an existing file or a link planted at a fixed name), which is renamed over
    ``path`` when the block ends (a link at ``path`` is replaced, never written through). On any error the
    temporary file is removed and the error propagates (an :class:`OSError` as :class:`CannotWrite` naming
    ``path``); ``path`` is untouched.

    text : open in text mode (``open_kwargs`` such as ``newline``, ``encoding`` apply); mode : the file's
    permission bits (mkstemp makes it private); sync : fsync before the rename (data that must survive a crash)
    """
    p = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    except OSError as exc:
        raise CannotWrite.naming(exc, p) from None
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w" if text else "wb", **open_kwargs) as fh:
            yield fh
            if sync:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, p)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise CannotWrite.naming(exc, p) from None
        raise


def replace_atomically(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` through :func:`atomic_file`, so no reader ever sees a half-written file. On
    failure the temporary file is removed and the ``OSError`` propagates (the caller says what it was writing)."""
    with atomic_file(path) as fh:
        fh.write(data)


def prepare_out_dir(out_dir: str | os.PathLike, *, create: bool = True, what: str | None = None) -> Path:
    """Check that ``out_dir`` can be written (it, or its nearest existing ancestor, is a writable
    directory, and no name on the way is longer than the file system allows: :func:`check_name_lengths`)
    and, when ``create``, create it; returns it. :class:`UserError` (naming ``what``, e.g. ``-o``) otherwise."""
    text = os.fspath(out_dir)
    label = f"{what} {_shown(text)}" if what else _shown(text)
    if not text.strip():
        raise UserError(f"{what or 'output directory'}: the directory name is empty")
    check_name_lengths(text, what)
    d = Path(text)
    try:
        if d.exists() and not d.is_dir():
            raise UserError(f"{label}: exists and is not a directory")
        anc = d
        while not anc.exists():
            if anc.parent == anc:
                break
            anc = anc.parent
        if anc.exists() and not anc.is_dir():
            raise UserError(f"{label}: cannot create the output directory: {_shown(str(anc))} is not a directory")
    except OSError as exc:  # a path the system refuses to look at (too long as a whole, a loop of links)
        raise UserError(f"{label}: cannot use this path: {exc.strerror or exc}") from None
    if not os.access(anc, os.W_OK | os.X_OK):
        raise UserError(f"{label}: cannot create the output directory: {_shown(str(anc))} is not writable")
    if create:
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(f"{label}: cannot create the output directory: {exc.strerror or exc}") from None
    return d


def writable_dir(path: str | os.PathLike, flag: str = "--out") -> None:
    """Create the output directory ``path`` if needed and check a file can be written there, before any work;
    raises :class:`viewer.errors.UserError` naming ``flag`` otherwise."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe_dir(path, ".write-test.")
    except OSError as exc:
        raise UserError(f"cannot write to {flag} {path}: {exc.strerror}") from None


@contextmanager
def filled_dir(out_dir: str | os.PathLike, make=None) -> Iterator[Path]:
    """Create the output directory ``out_dir`` (``make(out_dir)``; default :func:`prepare_out_dir`) for a block
    that fills it: when ``make`` or the block fails (an error, Ctrl-C, SIGTERM: :class:`viewer.cli.Terminated`), each
    directory it created (``out_dir`` and the missing ones above it) that is still empty is removed again, so a
    run stopped before writing leaves nothing behind. A directory that existed, or holds anything, is kept."""
    d = Path(out_dir)
    made = []  # the directories ``make`` creates, innermost first
    p = d
    while not os.path.lexists(p) and p.parent != p:
        made.append(p)
        p = p.parent
    try:
        (make or prepare_out_dir)(d)
        yield d
    except BaseException:
        for p in made:
            try:
                for name in os.listdir(p):  # a probe a stop interrupted (check_output_file's, --out's)
                    if name.startswith(".") and name.endswith(PROBE_SUFFIX):
                        os.unlink(p / name)
                p.rmdir()  # only when empty
            except OSError:
                break
        raise
