"""Output files are checked before the work that fills them: a screenshot, a figure or a scene file
whose target cannot be written fails in a moment with a message, not after minutes of rendering.

Pure: standard library only.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..errors import UserError

__all__ = ["check_output_file", "prepare_out_dir", "replace_atomically"]


def check_output_file(path: str | os.PathLike, what: str | None = None, suffixes: tuple[str, ...] = ()) -> Path:
    """Check that a file can be written at ``path`` (through a temporary file and a rename, as every
    writer here does); returns it as a :class:`Path`.

    Refused with a :class:`UserError` naming ``what`` (a flag such as ``--screenshot``) and the path: an
    empty name, a name ending in a separator, an existing directory or non-regular file (a device, a
    FIFO: a rename would replace it), a missing directory, and a directory in which a file cannot be
    created (permissions, a read-only file system: probed by creating and removing a temporary file,
    which is what tells, even for root). ``suffixes`` (e.g. ``(".npz",)``) restricts the file type.
    """
    label = f"{what} {path}" if what else str(path)
    text = os.fspath(path)
    if not text.strip():
        raise UserError(f"{what or 'output'}: the file name is empty")
    p = Path(text)
    if text.endswith(("/", os.sep)) or p.is_dir():
        raise UserError(f"{label}: is a directory, expected a file name")
    if suffixes and p.suffix.lower() not in suffixes:
        raise UserError(f"{label}: the file name must end in {' or '.join(suffixes)}")
    if p.exists() and not p.is_file():
        raise UserError(f"{label}: exists and is not a regular file (a device or a pipe?); choose a file name")
    d = p.parent if str(p.parent) else Path(".")
    if not d.is_dir():
        raise UserError(f"{label}: directory {d} does not exist")
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".probe", dir=d)
    except OSError as exc:
        raise UserError(f"{label}: cannot write in {d}: {exc.strerror or exc}") from None
    os.close(fd)
    os.unlink(probe)
    return p


def replace_atomically(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file beside it and a rename, so no reader ever sees a
    half-written file. On failure the temporary file is removed and the ``OSError`` propagates (the caller
    says what it was writing)."""
    p = Path(path)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, p)
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise


def prepare_out_dir(out_dir: str | os.PathLike, *, create: bool = True) -> Path:
    """Check that ``out_dir`` can be written (it, or its nearest existing ancestor, is a writable
    directory) and, when ``create``, create it; returns it. :class:`UserError` otherwise."""
    d = Path(out_dir)
    if d.exists() and not d.is_dir():
        raise UserError(f"{d}: exists and is not a directory")
    anc = d
    while not anc.exists():
        if anc.parent == anc:
            break
        anc = anc.parent
    if anc.exists() and not anc.is_dir():
        raise UserError(f"{d}: cannot create the output directory: {anc} is not a directory")
    if not os.access(anc, os.W_OK | os.X_OK):
        raise UserError(f"{d}: cannot create the output directory: {anc} is not writable")
    if create:
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(f"{d}: cannot create the output directory: {exc.strerror or exc}") from None
    return d
