"""Hostile input, sixth round, through the real command line (in process): every case exits 2 with one error
line naming the file, field or flag, no traceback, nothing half-written (or, where the input is valid, works
as the README promises)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from tests.cli import refused, viewer

SMALL = 'generator = "uniform"\nn = 2000\nworld = 1000.0\n'
POINTS = "x,y,z\n0,0,0\n10,0,5\n"


@pytest.fixture
def small(tmp_path):
    p = tmp_path / "small.toml"
    p.write_text(SMALL)
    return p


@pytest.fixture
def points(tmp_path):
    p = tmp_path / "pts.csv"
    p.write_text(POINTS)
    return p


# --------------------------------------------------------------------------- scene import's output


@pytest.mark.parametrize("out, words", [
    ("", ["-o/--output", "the file name is empty"]),
    ("fifo.npz", ["-o/--output fifo.npz", "not a regular file"]),
    ("n" * 300 + ".npz", ["-o/--output", "304 bytes long"]),
    ("pts.csv/x.npz", ["-o/--output pts.csv/x.npz", "pts.csv is not a directory"]),
], ids=["empty", "fifo", "long", "file-as-dir"])
def test_scene_import_checks_its_output_as_generate_does(tmp_path, points, out, words):
    """Before: 'scene import pts.csv -o ""' wrote pts.npz (an empty name taken as the default), '-o fifo.npz'
    replaced the FIFO with the scene, a name of 304 bytes died with an OSError traceback after the import,
    and '-o pts.csv/x.npz' said 'directory pts.csv does not exist' (it does: it is a file)."""
    if out == "fifo.npz":
        os.mkfifo(tmp_path / out)
    before = sorted(os.listdir(tmp_path))
    status, _, err = viewer("scene", "import", points, "-o", out, cwd=tmp_path)
    refused(status, err, *words)
    assert sorted(os.listdir(tmp_path)) == before
    if out == "fifo.npz":
        assert not (tmp_path / out).is_file()


# --------------------------------------------------------------------------- a .npz's JSON entries


@pytest.mark.parametrize("entry", ["extras", "recipe", "look"])
def test_a_5000_digit_integer_in_a_scene_files_json_is_one_message(tmp_path, entry):
    """Python's JSON reader refuses an integer of more than 4,300 digits with a ValueError that is no
    JSONDecodeError. Before: a traceback from 'scene info' (the metadata and the camera paths already said so
    in one line)."""
    p = tmp_path / "big.npz"
    np.savez(p, format_version=np.array(2), centres=np.array([[0.0, 0, 0], [1, 1, 1]]), radii=np.ones(2),
             **{entry: np.array('{"a": ' + "1" * 5000 + "}")})
    status, _, err = viewer("scene", "info", p)
    refused(status, err, str(p), f"field '{entry}'", "4300 digits")
