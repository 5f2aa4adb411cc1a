"""The CSV schema is the one definition of the columns: the recording README's table says what it says."""

from __future__ import annotations

import re
from pathlib import Path

from viewer.recording.schema import COLUMN_INFO, SCHEMA_VERSION

README = Path(__file__).resolve().parents[2] / "viewer" / "recording" / "README.md"


def readme_csv_table() -> tuple[int, list[tuple[str, str, str, str]]]:
    """The schema version viewer/recording/README.md names and its CSV table's rows (name, type, unit, meaning)."""
    text = README.read_text(encoding="utf-8")
    head = re.search(r"\*\*The CSV\*\* \(schema version (\d+)", text)
    assert head, f"{README}: no '**The CSV** (schema version N' paragraph"
    rows = []
    lines = text[head.end():].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| column |"))
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        assert len(cells) == 4, f"{README} CSV table: a row without 4 cells: {line}"
        rows.append((cells[0].strip("`"), cells[1], cells[2], cells[3]))
    return int(head.group(1)), rows


def test_readme_csv_table_is_the_schema():
    version, rows = readme_csv_table()
    assert version == SCHEMA_VERSION
    want = [(c.name, c.kind, c.unit or "-", c.doc) for c in COLUMN_INFO]
    assert rows == want
