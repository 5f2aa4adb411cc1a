"""Hostile input, eighth round, the scenes' part (importers, scene files, recipes, sweep specs), through the real
command line (in process): every case exits 2 with one error line naming the file and the field, column or
row, no traceback, nothing half-written (or, where the input is valid, works as the README promises)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from tests.cli import refused, small, viewer  # noqa: F401  (small: a fixture)


# --------------------------------------------------------------------------- Parquet: rows a footer declares


def test_a_parquet_file_of_millions_of_repeated_rows_is_refused_with_the_estimate_before_reading(tmp_path, monkeypatch):
    """A Parquet column of one repeated value compresses to a few bytes for millions of rows. Before: the
    whole file was decoded first (a 4 MB file of 300,000,000 rows mapped gigabytes), and when memory ran out
    the import said 'not a readable Parquet file (truncated, or another format?): malloc of size 8388608
    failed'. Now the footer's row count is weighed against MAX_N and the memory the process may use before
    any column is decoded, and a MemoryError from pyarrow is reported as memory, not as a bad file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from viewer.scenes.importers import _build

    n = 4_000_000
    src = tmp_path / "zeros.parquet"
    pq.write_table(pa.table({"x": np.zeros(n), "y": np.zeros(n), "z": np.zeros(n)}), src)
    assert src.stat().st_size < 1_000_000
    monkeypatch.setattr(_build, "available", lambda: (100_000_000, "a test's limit"))
    out = tmp_path / "out.npz"
    status, _, err = viewer("scene", "import", src, "-o", out)
    refused(status, err, "zeros.parquet", "importing 4,000,000 rows of 3 columns would need about",
            "this process may use 100 MB (a test's limit)")
    assert not out.exists() and os.listdir(tmp_path) == ["zeros.parquet"]

    # memory that runs out inside pyarrow is a memory message, not "not a readable Parquet file"
    monkeypatch.setattr(_build, "available", lambda: (1 << 62, "no limit known"))

    def no_memory(*a, **k):
        raise pa.ArrowMemoryError("malloc of size 8388608 failed")

    monkeypatch.setattr(pq, "read_table", no_memory)
    status, _, err = viewer("scene", "import", src, "-o", out)
    line = refused(status, err, "zeros.parquet", "not enough memory to import this file")
    assert "not a readable" not in line
    assert not out.exists()
