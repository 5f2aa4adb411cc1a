"""CSV / TSV and Parquet tables of object placements, read with pyarrow (multi-threaded C++ readers: a
million-row CSV in a fraction of a second), one row per object, columns named in a header."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..errors import SceneError
from .columns import read_roles, resolve_columns

__all__ = ["read_table"]


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


def _schema_names(path: Path, fmt: str) -> list[str] | None:
    if fmt != "parquet":
        return None
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return list(_opened(path, pq.read_schema).names)
    except (pa.ArrowInvalid, pa.ArrowException, OSError) as exc:
        raise SceneError(f"not a readable Parquet file (truncated, or another format?): {exc}") from None


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
    names = _schema_names(path, fmt)
    if names is not None:  # Parquet: read only the columns that play a role
        roles = resolve_columns(names, mapping)
        _check_unique(names, roles, fmt)
        table = _arrow_table(path, fmt, sorted(set(roles.values())))
    else:
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
