"""The README's example level: ``python -m viewer.scenes.forest`` writes a glTF of instanced meshes that
``viewer scene import`` reads back, one object per instance, three meshes."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_the_forest_writer_makes_a_level_the_importer_reads(tmp_path):
    pytest.importorskip("pygltflib")
    from viewer.scenes import import_scene

    out = tmp_path / "forest.glb"
    run = subprocess.run([sys.executable, "-m", "viewer.scenes.forest", str(out), "--trees", "400", "--seed", "3"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "wrote" in run.stdout and "452 objects, 3 meshes" in run.stdout  # 400 pines, 50 rocks, 2 huts
    s = import_scene(out)
    assert s.n == 452 and s.meshes is not None and sorted(s.meshes.counts().tolist()) == [2, 50, 400]
