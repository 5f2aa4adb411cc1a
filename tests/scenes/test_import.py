"""Importing scenes: glTF (with EXT_mesh_gpu_instancing), PLY, CSV / TSV and Parquet round-trip to the exact
centres and radii; view-distance rules; every bad file a SceneError naming the file (the command's refusals of
them: tests/cli/test_scene_import.py)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from tests.support.gltf_writer import build, expected, write_glb, write_gltf
from tests.support.cli import run_cli
from viewer.scenes import SceneError, load_scene
from viewer.scenes.importers import import_scene, parse_rule

RNG = np.random.default_rng(42)
N = 500
CENTRES = RNG.uniform(-1000, 1000, (N, 3))
RADII = RNG.uniform(1, 300, N)
RGB = RNG.integers(0, 256, (N, 3))


def imported(capsys, tmp_path, src, *flags):
    out = tmp_path / "scene.npz"
    code, stdout, err = run_cli("scene", "import", src, "-o", out, *flags)
    assert code == 0, err
    assert stdout.startswith(f"wrote {out}: ")
    return load_scene(out)


def write_csv(path: Path, names=("x", "y", "z", "r"), sep=",", centres=CENTRES, radii=RADII, colours=True):
    cols = [centres[:, 0], centres[:, 1], centres[:, 2], radii]
    head = list(names)
    if colours:
        head += ["red", "green", "blue"]
    with open(path, "w") as fh:
        fh.write(sep.join(head) + "\n")
        for i in range(centres.shape[0]):
            vals = [repr(float(c[i])) for c in cols]
            if colours:
                vals += [str(int(v)) for v in RGB[i]]
            fh.write(sep.join(vals) + "\n")
    return path


# --------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("kind", ["glb", "gltf-external", "gltf-data-uri"])
def test_gltf_objects_are_mesh_nodes_and_gpu_instances_with_world_bounds(tmp_path, capsys, kind):
    if kind == "glb":
        src = write_glb(tmp_path / "level.glb")
    else:
        src = write_gltf(tmp_path / "level.gltf", external=kind == "gltf-external")
    s = imported(capsys, tmp_path, src)
    centres, extents, ids = expected()
    assert s.n == 5  # node 0, three instances on node 3, node 2 (a child of a rotated node)
    np.testing.assert_array_equal(s.centres, centres)
    # the default rule, from the file's own scale: the median object seen from an eighth of the extent
    extent = float(np.ptp(centres, axis=0).max())
    factor = float(f"{min(200.0, extent / 8 / np.median(extents)):.2g}")
    cap = float(f"{extent / 2:.2g}")
    np.testing.assert_array_equal(s.radii, np.minimum(factor * extents, cap))
    np.testing.assert_array_equal(s.sizes, (extents / 2).astype(np.float32))
    np.testing.assert_array_equal(s.meshes.ids, ids)
    assert s.meshes.k == 2 and s.meshes.faces.shape[0] == 12 + 4
    assert s.colours[:4].tolist() == [[255, 0, 0, 255]] * 4  # the material's base colour
    assert s.colours[4].tolist() == [0, 0, 255, 255]  # the mean vertex colour
    assert s.recipe["import"]["format"] == "gltf"
    assert s.recipe["import"]["view_distance"].startswith(f"size:factor={factor:g}")
    # transforms map each mesh's vertices onto the object's world-space box
    v, _ = s.meshes.mesh(0)
    a = s.meshes.transforms[2]
    w = v.astype(np.float64) @ a[:, :3].T + a[:, 3]
    np.testing.assert_allclose((w.min(0) + w.max(0)) / 2, centres[2], atol=1e-9)


def test_a_gltf_file_is_a_scene_for_every_command(tmp_path, capsys):
    src = write_glb(tmp_path / "level.glb")
    code, out, err = run_cli("scene", "info", src)
    assert code == 0, err
    assert "imported   gltf file level.glb, view distances size:factor=" in out
    assert "(default, from the file's 1010-unit extent" in out  # its centres span 1009.5 in z
    assert "meshes     2 distinct, 16 triangles" in out
    assert load_scene(src).n == 5


def test_ply_points_round_trip(tmp_path, capsys):
    from plyfile import PlyData, PlyElement

    for text in (True, False):
        v = np.zeros(N, dtype=[("x", "f8"), ("y", "f8"), ("z", "f8"), ("r", "f8"),
                               ("red", "u1"), ("green", "u1"), ("blue", "u1")])
        v["x"], v["y"], v["z"] = CENTRES.T
        v["r"] = RADII
        v["red"], v["green"], v["blue"] = RGB.T
        src = tmp_path / f"cloud-{text}.ply"
        PlyData([PlyElement.describe(v, "vertex")], text=text).write(str(src))
        s = imported(capsys, tmp_path, src)
        np.testing.assert_array_equal(s.centres, CENTRES)
        np.testing.assert_array_equal(s.radii, RADII)
        np.testing.assert_array_equal(s.colours[:, :3], RGB)
        assert s.meshes is None


def test_an_ascii_ply_file_reports_its_rows_as_it_reads_them(tmp_path, monkeypatch):
    """plyfile parses ASCII rows in Python (seconds a million): the import calls progress(rows, total) as it
    goes, rising, ending at (total, total), and reads the same objects as without a callback; a binary file,
    read at disk speed, and a call without a callback report nothing."""
    from plyfile import PlyData, PlyElement

    from viewer.scenes.importers import ply

    monkeypatch.setattr(ply, "PROGRESS_LINES", 100)
    n = 1050
    v = np.zeros(n, dtype=[("x", "f8"), ("y", "f8"), ("z", "f8"), ("r", "f8")])
    v["x"], v["y"], v["z"] = RNG.uniform(-50, 50, (3, n))
    v["r"] = RNG.uniform(1, 9, n)
    calls = []
    for text in (True, False):
        src = tmp_path / f"rows-{text}.ply"
        PlyData([PlyElement.describe(v, "vertex")], text=text).write(str(src))
        s = import_scene(src, progress=lambda done, total: calls.append((text, done, total)))
        np.testing.assert_array_equal(s.radii, v["r"])
    done = [d for t, d, _ in calls if t]
    assert [c for c in calls if not c[0]] == []  # binary: nothing to report
    assert len(done) >= 10 and done == sorted(done) and calls[-1][1:] == (n, n), calls[-3:]


@pytest.mark.parametrize("sep, suffix", [(",", "csv"), ("\t", "tsv")])
def test_tables_round_trip_with_mapped_columns(tmp_path, capsys, sep, suffix):
    src = write_csv(tmp_path / f"placements.{suffix}", names=("px", "py", "pz", "view"), sep=sep)
    s = imported(capsys, tmp_path, src, "--columns", "x=px,y=py,z=pz,r=view")
    np.testing.assert_array_equal(s.centres, CENTRES)
    np.testing.assert_array_equal(s.radii, RADII)
    np.testing.assert_array_equal(s.colours[:, :3], RGB)
    assert s.recipe["import"]["columns"] == {"x": "px", "y": "py", "z": "pz", "r": "view"}


def test_parquet_round_trip(tmp_path, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq

    src = tmp_path / "placements.parquet"
    pq.write_table(pa.table({"x": CENTRES[:, 0], "y": CENTRES[:, 1], "z": CENTRES[:, 2], "r": RADII,
                             "size": RADII / 10, "note": ["a"] * N}), src)
    s = imported(capsys, tmp_path, src)
    np.testing.assert_array_equal(s.centres, CENTRES)
    np.testing.assert_array_equal(s.radii, RADII)
    np.testing.assert_array_equal(s.sizes, (RADII / 20).astype(np.float32))


def test_view_distance_rules(tmp_path, capsys):
    src = tmp_path / "sized.csv"
    sizes = np.array([0.5, 1.0, 5.0, 10.0, 50.0, 500.0])
    c = np.column_stack([np.arange(6) * 100.0, np.zeros(6), np.zeros(6)])
    with open(src, "w") as fh:
        fh.write("x,y,z,size\n" + "".join(f"{float(x)!r},0,0,{float(s)!r}\n" for x, s in zip(c[:, 0], sizes)))
    s = imported(capsys, tmp_path, src, "--view-distance", "table:1=300,10=2000,100=inf")
    diag = s.world * math.sqrt(3)
    assert s.radii.tolist() == [300, 300, 2000, 2000, diag, diag]  # larger than 100: the last distance
    assert s.recipe["import"]["inf_means"] == diag
    s = imported(capsys, tmp_path, src, "--view-distance", "size:factor=200")
    np.testing.assert_array_equal(s.radii, sizes * 200)
    s = imported(capsys, tmp_path, src, "--view-distance", "constant:value=inf")
    assert (s.radii == diag).all()
    # points without sizes: a tenth of the diagonal by default
    pts = write_csv(tmp_path / "pts.csv", names=("x", "y", "z", "w"), colours=False)
    s = imported(capsys, tmp_path, pts)
    assert np.allclose(s.radii, s.world * math.sqrt(3) / 10)


def test_rule_parsing_refuses_nonsense():
    for bad in ("constant", "constant:value=-1", "size:factor=0", "table:10=1,1=2", "table:", "cone:x=1",
                "table:1=nan", "size:factor=1,x=2"):
        with pytest.raises(SceneError, match="--view-distance"):
            parse_rule(bad)
    assert parse_rule("table:1=300,10=2000,100=inf").distances == (300.0, 2000.0, math.inf)


def test_a_large_table_imports_exactly(tmp_path):
    """Correct on a large table too (the speed of a 1e6-row import is measured by hand, see the README)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    n = 200_000
    c = np.random.default_rng(1).uniform(-1e4, 1e4, (n, 3))
    src = tmp_path / "big.csv"
    pcsv.write_csv(pa.table({"x": c[:, 0], "y": c[:, 1], "z": c[:, 2], "r": np.full(n, 50.0)}), src)
    s = import_scene(src)
    np.testing.assert_array_equal(s.centres, c)


# --------------------------------------------------------------------------- bad files


def _gltf_with(tmp_path, name, change):
    doc, blob = build()
    change(doc)
    return write_glb(tmp_path / name, doc, blob)


def _bad_files(tmp_path: Path) -> dict[str, tuple[Path, list[str], str]]:
    """name -> (file, extra flags, a fragment of the one expected message)."""
    good_glb = write_glb(tmp_path / "good.glb").read_bytes()
    cases = {}
    (tmp_path / "truncated.glb").write_bytes(good_glb[: len(good_glb) - 200])
    cases["truncated glb"] = (tmp_path / "truncated.glb", [], "")
    (tmp_path / "notgltf.glb").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(100))
    cases["wrong format glb"] = (tmp_path / "notgltf.glb", [], "not a readable glTF file")
    gl = write_gltf(tmp_path / "nobuf.gltf")
    (tmp_path / "nobuf.bin").unlink()
    cases["missing buffer"] = (gl, [], "buffers[0] (nobuf.bin): missing")
    cases["non-finite transform"] = (
        _gltf_with(tmp_path, "inf.glb", lambda d: d["nodes"][0].update(translation=[float("inf"), 0, 0])),
        [], "nodes[0].translation[0]: Infinity is not a finite number")
    cases["gltf outside the domain"] = (
        _gltf_with(tmp_path, "far.glb", lambda d: d["nodes"][0].update(translation=[1e300, 0, 0])),
        [], "field 'centres': object 0: [1e+300, 0.0, 0.0] is outside the numeric domain")
    cases["nan instance"] = (
        _gltf_with(tmp_path, "naninst.glb", lambda d: d["nodes"][0].update(matrix=[float("nan")] + [0.0] * 15)),
        [], "nodes[0].matrix[0]: NaN is not a finite number")
    csv = write_csv(tmp_path / "ok.csv").read_text()
    (tmp_path / "truncated.csv").write_text(csv[: len(csv) // 2].rsplit(",", 1)[0])
    cases["truncated csv"] = (tmp_path / "truncated.csv", [], "not a readable CSV file")
    (tmp_path / "noz.csv").write_text("x,y,r\n1,2,3\n")
    cases["missing column"] = (tmp_path / "noz.csv", [], "field 'z': missing column z")
    (tmp_path / "nan.csv").write_text("x,y,z,r\n1,2,3,4\n1,nan,3,4\n")
    cases["nan"] = (tmp_path / "nan.csv", [], "field 'y': row 2: nan is not a finite number")
    (tmp_path / "huge.csv").write_text("x,y,z,r\n1,2,3,4\n1e31,2,3,4\n")
    cases["outside the domain"] = (tmp_path / "huge.csv", [], "field 'x': row 2: 1e+31 is outside the numeric domain")
    (tmp_path / "neg.csv").write_text("x,y,z,r\n1,2,3,-4\n")
    cases["negative radius"] = (tmp_path / "neg.csv", [], "field 'r': row 1: -4.0 is negative")
    (tmp_path / "text.csv").write_text("x,y,z\n1,2,3\nfoo,2,3\n")
    cases["text"] = (tmp_path / "text.csv", [], "field 'x': must hold numbers, found 'foo' in row 2")
    (tmp_path / "table.parquet").write_text(csv)
    cases["wrong format parquet"] = (tmp_path / "table.parquet", [], "not a readable Parquet file")
    (tmp_path / "cut.ply").write_bytes(b"ply\nformat binary_little_endian 1.0\nelement vertex 10\n"
                                       b"property float x\nproperty float y\nproperty float z\nend_header\n"
                                       + bytes(20))
    cases["truncated ply"] = (tmp_path / "cut.ply", [], "the header declares 10 'vertex' rows, at least 120 bytes")
    cases["unknown column"] = (tmp_path / "ok.csv", ["--columns", "r=view"], "no column 'view'")
    (tmp_path / "points.csv").write_text("x,y,z\n1,2,3\n4,5,6\n")
    cases["sizes needed"] = (tmp_path / "points.csv", ["--view-distance", "size:factor=2"],
                             "the rule 'size:factor=2' needs object sizes")
    cases["bad rule"] = (tmp_path / "ok.csv", ["--view-distance", "size:factor=-2"], "field '--view-distance'")
    cases["no such file"] = (tmp_path / "absent.csv", [], "no such file")
    return cases


#: the bad files, each refused by ``viewer scene import`` with one line (its table: tests/cli/test_scene_import.py)
BAD = ["truncated glb", "wrong format glb", "missing buffer", "non-finite transform", "gltf outside the domain",
       "nan instance",
       "truncated csv", "missing column", "nan", "outside the domain", "negative radius", "text",
       "wrong format parquet", "truncated ply", "unknown column", "sizes needed", "bad rule", "no such file"]


def test_bad_files_refuse_in_process_too(tmp_path):
    """Every bad case is a SceneError naming the file (what load_scene gives every command)."""
    for case, (src, flags, fragment) in _bad_files(tmp_path).items():
        if flags:
            continue
        with pytest.raises(SceneError) as info:
            load_scene(src)
        assert str(src) in str(info.value) and fragment in str(info.value), (case, str(info.value))
