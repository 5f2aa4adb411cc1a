"""CSV / TSV and Parquet tables of object placements, read with pyarrow (multi-threaded C++ readers: a
million-row CSV in a fraction of a second), one row per object, columns named in a header."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from viewer.system.memory import format_bytes

from ..errors import SceneError
from ..limits import MAX_N
from ._build import need_memory
from .columns import read_roles, resolve_columns

__all__ = ["read_table"]

#: peak bytes of a Parquet import a row, and a column read a row (measured: 105 a row for x, y, z; 170 with
#: r, size, red, green, blue too: the decoded column, its float64 copy, the scene built and written)
_PER_ROW = 64
_PER_VALUE = 16
#: ... and of a CSV / TSV import, a byte of the file on top (pyarrow's read buffers and parsed blocks). Measured
#: peaks less the interpreter's: 2,000,000 rows of 4 columns (63 MB) 416 MB, of 3 longer columns (110 MB) 442
#: MB, 3,000,000 rows of 7 (197 MB) at least 667 MB; these estimates: 414, 500 and 1,021 MB
_PER_TEXT_BYTE = 2.5
#: the head of a CSV / TSV file whose lines estimate its rows (a smaller file is read without an estimate)
_SAMPLE = 1 << 20


def _opened(path: Path, read):
    """``read(path)``; pyarrow takes a path as UTF-8 text, so a path holding bytes that are not UTF-8 (a
    file named on another system) is opened here and ``read`` given the open file."""
    try:
        os.fspath(path).encode("utf-8")
    except UnicodeEncodeError:
        with open(path, "rb") as fh:
            return read(fh)
    return read(path)


def _text_encoding(path: Path) -> str:
    """The encoding of a CSV / TSV file: UTF-16 when it starts with a UTF-16 byte-order mark (spreadsheets
    save 'Unicode text' so), else UTF-8 (a UTF-8 byte-order mark is skipped)."""
    with open(path, "rb") as fh:
        return "utf-16" if fh.read(2) in (b"\xff\xfe", b"\xfe\xff") else "utf8"


def _arrow_table(path: Path, fmt: str, wanted=None):
    import pyarrow as pa

    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            return _opened(path, lambda src: pq.read_table(src, columns=wanted))
        import pyarrow.csv as pcsv

        parse = pcsv.ParseOptions(delimiter="\t" if fmt == "tsv" else ",")
        # only an empty field is missing: "nan" and "inf" are read as numbers (and refused as not finite)
        convert = pcsv.ConvertOptions(null_values=[""], strings_can_be_null=True)
        read = pcsv.ReadOptions(encoding=_text_encoding(path))
        table = _opened(path, lambda src: pcsv.read_csv(src, read_options=read, parse_options=parse,
                                                        convert_options=convert))
    except MemoryError:  # pyarrow's ArrowMemoryError is an ArrowException too: not a sign of a bad file
        raise
    except (pa.ArrowInvalid, pa.ArrowException, OSError, ValueError) as exc:
        what = "Parquet" if fmt == "parquet" else fmt.upper()
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SceneError(f"not a readable {what} file (truncated, or another format?): {msg}") from None
    try:
        table.column_names  # decoded from UTF-8 only when asked for
    except UnicodeDecodeError as exc:
        raise SceneError(f"its header is not UTF-8 text (byte {exc.object[exc.start]:#04x} in "
                         f"{exc.object.decode('utf-8', 'replace')!r}): save it as UTF-8, or as UTF-16 with a "
                         "byte-order mark") from None
    return table


def _parquet_meta(path: Path):
    """A Parquet file's footer (its schema and row count), read without its data."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return _opened(path, pq.read_metadata)
    except (pa.ArrowInvalid, pa.ArrowException, OSError) as exc:
        raise SceneError(f"not a readable Parquet file (truncated, or another format?): {exc}") from None


def _check_rows(rows: int, columns: int) -> None:
    """Refuse, before a Parquet file's columns are decoded, more rows than a scene holds or than memory
    allows: a compressed column of a repeated value takes a few bytes for millions of rows."""
    if rows > MAX_N:
        raise SceneError(f"holds {rows:,} data rows; a scene holds at most {MAX_N:,} objects")
    need_memory(float(rows) * (_PER_ROW + _PER_VALUE * columns), f"importing {rows:,} rows of {columns} columns")


def _check_text(path: Path, fmt: str) -> None:
    """Refuse, before a CSV / TSV file is parsed, one that would not fit in memory: its rows estimated from
    the lines of its first MiB, its columns from its header. (Parsed whole, a file of hundreds of millions
    of rows would be killed by the kernel with no message, or page the machine to a halt.)"""
    size = path.stat().st_size
    with open(path, "rb") as fh:
        head = fh.read(_SAMPLE)
    if len(head) >= size:
        return
    rows = int(size * max(1, head.count(b"\n")) / len(head))
    first = head.split(b"\n", 1)[0]
    columns = first.count(b"\t" if fmt == "tsv" else b",") + 1
    need_memory(rows * float(_PER_ROW + _PER_VALUE * columns) + _PER_TEXT_BYTE * size,
                f"importing about {rows:,} rows of {columns} columns ({format_bytes(size)} of text)")


def _check_unique(names: list[str], roles: dict[str, str], fmt: str) -> None:
    """Every column that plays a role is named once: one named twice could be either (``x,x,y,z``)."""
    for name in roles.values():
        at = [k + 1 for k, n in enumerate(names) if n == name]
        if len(at) > 1:
            where = "header" if fmt != "parquet" else "schema"
            raise SceneError(f"the {where} names column {name!r} {len(at)} times (columns "
                             f"{', '.join(map(str, at))}); the column that plays a role needs a name of its own", name)


def read_table(path: Path, fmt: str, mapping: dict[str, str]) -> dict:
    """The arrays of a table file (see :func:`.columns.read_roles`); ``fmt`` is csv, tsv or parquet."""
    if fmt == "parquet":  # read only the columns that play a role, once their size is known to fit
        meta = _parquet_meta(path)
        names = list(meta.schema.to_arrow_schema().names)
        roles = resolve_columns(names, mapping)
        _check_unique(names, roles, fmt)
        wanted = sorted(set(roles.values()))
        _check_rows(meta.num_rows, len(wanted))
        table = _arrow_table(path, fmt, wanted)
    else:
        _check_text(path, fmt)
        table = _arrow_table(path, fmt)
        roles = resolve_columns(list(table.column_names), mapping)
        _check_unique(list(table.column_names), roles, fmt)

    if table.num_rows == 0:
        raise SceneError("holds no data rows, only its column names: no object to import")

    def get(name: str, empty=None) -> np.ndarray:
        import pyarrow as pa
        import pyarrow.compute as pc

        col = table.column(name)
        if col.null_count and empty is None:  # an empty cell, whatever the column's type
            row = int(pc.index(pc.is_null(col), True).as_py())
            raise SceneError(f"row {row + 1}: empty value", name)
        if col.null_count and pa.types.is_null(col.type):  # a column of empty cells only
            return np.full(len(col), empty, dtype=np.float64)
        if not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)):
            values = col.to_pylist()
            for i, v in enumerate(values):
                try:
                    if v is not None:  # an empty cell here means `empty`
                        float(v)
                except (TypeError, ValueError):
                    raise SceneError(f"must hold numbers, found {v!r} in row {i + 1}", name) from None
            raise SceneError(f"must hold numbers, not {col.type}", name)
        if col.null_count:  # an empty cell means `empty` (a LOD column: no switch)
            col = pc.fill_null(col.cast(pa.float64()), float(empty))
        try:
            return col.to_numpy()
        except Exception as exc:  # an arrow type numpy cannot hold
            raise SceneError(f"cannot be read as numbers ({col.type}): {exc}", name) from None

    return read_roles(get, roles)
