"""PLY point clouds (ASCII or binary), read with plyfile: each vertex is an object; its properties are
columns (``x``, ``y``, ``z``, optional ``r``, ``size``, ``red``, ``green``, ``blue``, ``alpha``, or others
mapped with ``--columns``). Faces, if any, are ignored."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np

from ..errors import SceneError
from .columns import read_roles, resolve_columns

__all__ = ["read_ply"]


#: bytes a value takes at the least: binary, by PLY type; ASCII, one digit and a separator
_SIZES = {"char": 1, "int8": 1, "uchar": 1, "uint8": 1, "short": 2, "int16": 2, "ushort": 2, "uint16": 2,
          "int": 4, "int32": 4, "uint": 4, "uint32": 4, "float": 4, "float32": 4, "double": 8, "float64": 8}


#: lines of an ASCII file read between two calls of the progress callback
PROGRESS_LINES = 1 << 16


class _CountingText:
    """An ASCII PLY file as plyfile reads it (``readline``, ``read``), calling ``progress(lines, total)``
    every :data:`PROGRESS_LINES` lines: plyfile parses ASCII rows in Python, so a file of millions of
    vertices reads for seconds, and a large file shows how far it is."""

    def __init__(self, fh, total: int, progress: Callable[[int, int], None]):
        self._fh = fh
        self._total = max(1, total)
        self._progress = progress
        self._lines = 0

    def readline(self, *args) -> str:
        self._lines += 1
        if self._lines % PROGRESS_LINES == 0:
            self._progress(min(self._lines, self._total), self._total)
        return self._fh.readline(*args)

    def read(self, *args):
        return self._fh.read(*args)

    def finish(self) -> None:
        """The whole file is read: the last call, ``progress(total, total)``."""
        self._progress(self._total, self._total)

    def __getattr__(self, name):
        return getattr(self._fh, name)


def _check_counts(path: Path) -> tuple[bool, int] | None:
    """Refuse, before plyfile allocates its arrays, a header whose elements cannot fit in the file: each row
    needs at least its values' bytes (binary) or a digit and a separator a value (ASCII). A header that does
    not read simply is left to plyfile, which says what is wrong with it. Returns whether the data is binary
    and the rows the header declares (None: no header found)."""
    with open(path, "rb") as fh:
        head = fh.read(1 << 16)
    end = head.find(b"end_header")
    if end < 0:
        return None
    words = [ln.split() for ln in head[:end].decode("ascii", "replace").splitlines()]
    binary = any(w[:1] == ["format"] and len(w) > 1 and w[1].startswith("binary") for w in words)
    rows: dict[str, list[int]] = {}  # element: [rows declared, bytes a row at the least]
    current = None
    for w in words:
        if w[:1] == ["element"]:
            current = w[1] if len(w) == 3 and w[2].isdigit() else None
            if current is not None:
                rows[current] = [int(w[2]), 0]
        elif w[:1] == ["property"] and current is not None and len(w) >= 3:
            kind = w[2] if w[1] == "list" else w[1]  # a list: at least its length
            rows[current][1] += _SIZES.get(kind, 1) if binary else 2
    need = sum(n * b for n, b in rows.values())
    data = path.stat().st_size - end - len("end_header")
    if need > data + 1:  # + 1: the last value of an ASCII file needs no separator
        biggest = max(rows, key=lambda e: rows[e][0] * rows[e][1])
        declared = " and ".join(f"{n:,} '{e}' rows" for e, (n, _) in rows.items() if n)
        raise SceneError(f"the header declares {declared}, at least {need:,} bytes of data after it, and the file "
                         f"holds {max(data, 0):,} (truncated, or a wrong count?)", biggest)
    return binary, sum(n for n, _ in rows.values())


def _check_rest(fh, binary: bool, ply) -> None:
    """Refuse data left in ``fh`` after the rows the header declares (plyfile stops reading there): a count
    below the rows in the file would drop the objects past it without a word. Whitespace after an ASCII file's
    last row, or a line end after a binary file's, is not data."""
    last = ply.elements[-1] if ply.elements else None
    if binary:
        rest = fh.read(3)
        found = bool(rest) and (len(rest) > 2 or bool(rest.strip()))
    else:
        found = False
        while chunk := fh.read(1 << 20):
            if chunk.strip():
                found = True
                break
    if found and last is not None:
        counts = ", ".join(f"{e.count:,} '{e.name}'" for e in ply.elements)
        raise SceneError(f"the file goes on after the rows its header declares ({counts}): a wrong count in "
                         f"'element {last.name} {last.count}'? (rows past it would be lost)", last.name)


def read_ply(path: Path, mapping: dict[str, str], progress: Callable[[int, int], None] | None = None) -> dict:
    """The arrays of a PLY file's ``vertex`` element (see :func:`.columns.read_roles`). ``progress(lines,
    total)`` is called while an ASCII file is read (binary data reads at disk speed)."""
    from plyfile import PlyData, PlyParseError

    header = _check_counts(path)
    try:
        if header is None:  # no header: plyfile says what is wrong
            ply = PlyData.read(str(path))
        else:  # binary data as bytes; ASCII as text, read as plyfile reads it (line ends of any kind)
            binary, rows = header
            with open(path, "rb") if binary else open(path, encoding="ascii") as fh:
                text = None if binary or progress is None else _CountingText(fh, rows, progress)
                ply = PlyData.read(fh if text is None else text)
                _check_rest(fh, binary, ply)
                if text is not None:
                    text.finish()
        if "vertex" not in ply:
            raise SceneError(f"has no 'vertex' element (elements: {', '.join(e.name for e in ply.elements)})")
        data = ply["vertex"].data
    except SceneError:
        raise
    except OverflowError as exc:  # an ASCII value its property's type cannot hold (a uchar of 300)
        raise SceneError(f"not a readable PLY file: a value does not fit its property's type ({exc})") from None
    except (PlyParseError, ValueError, EOFError, OSError, IndexError, KeyError, TypeError) as exc:
        raise SceneError(f"not a readable PLY file (truncated, or another format?): {exc}") from None
    names = list(data.dtype.names or ())
    roles = resolve_columns(names, mapping)
    if data.shape[0] == 0:
        raise SceneError("holds no vertices", "vertex")

    def get(name: str, empty=None) -> np.ndarray:  # a PLY value is never empty
        a = np.asarray(data[name])
        if a.dtype == object or a.ndim != 1:
            raise SceneError("is a list property, not a number per vertex", name)
        return a

    return read_roles(get, roles)
