"""Hostile input, eighth round, the scenes' part (importers, scene files, recipes, sweep specs), through the real
command line (in process): every case exits 2 with one error line naming the file and the field, column or
row, no traceback, nothing half-written (or, where the input is valid, works as the README promises)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from tests.support.cli import refused, small, viewer  # noqa: F401  (small: a fixture)


# --------------------------------------------------------------------------- CSV: rows its size implies


def test_a_csv_file_too_large_for_memory_is_refused_with_the_estimate_before_parsing(tmp_path, monkeypatch):
    """A CSV / TSV file was parsed whole by pyarrow with no estimate first: a file of hundreds of millions of
    rows (MAX_N allows 500,000,000) would be killed by the kernel with no message. Now its rows are estimated
    from the lines of its first MiB and weighed against the memory the process may use, before parsing."""
    from viewer.scenes.importers import _build, tables

    n = 60_000  # 2.2 MB: more than the sampled MiB
    src = tmp_path / "big.csv"
    rng = np.random.default_rng(3)
    np.savetxt(src, rng.uniform(0, 1000, (n, 4)), fmt="%.6f", delimiter=",", header="x,y,z,r", comments="")
    size = src.stat().st_size
    assert size > tables._SAMPLE
    monkeypatch.setattr(_build, "available", lambda: (5_000_000, "a test's limit"))
    out = tmp_path / "out.npz"
    status, _, err = viewer("scene", "import", src, "-o", out)
    line = refused(status, err, "big.csv", "importing about ", " rows of 4 columns (", " of text) would need about",
                   "this process may use 5 MB (a test's limit)")
    rows = int(line.split("importing about ")[1].split(" rows")[0].replace(",", ""))
    assert 0.97 * n <= rows <= 1.03 * n, line  # the estimate from the first MiB's lines
    assert not out.exists() and os.listdir(tmp_path) == ["big.csv"]
    tsv = tmp_path / "big.tsv"
    tsv.write_text(src.read_text().replace(",", "\t"))
    status, _, err = viewer("scene", "import", tsv, "-o", out)
    refused(status, err, "big.tsv", " rows of 4 columns (")

    monkeypatch.setattr(_build, "available", lambda: (1 << 62, "no limit known"))
    status, _, err = viewer("scene", "import", src, "-o", out)  # room enough: imported as before
    assert status == 0, err
    assert out.exists()


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


# --------------------------------------------------------------------------- PLY: a count below the rows


def _ply(path, count: int, rows: int, binary: bool, tail: bytes = b"") -> None:
    head = (f"ply\nformat {'binary_little_endian' if binary else 'ascii'} 1.0\nelement vertex {count}\n"
            "property float x\nproperty float y\nproperty float z\nend_header\n").encode()
    v = np.arange(3 * rows, dtype="<f4").reshape(rows, 3)
    body = v.tobytes() if binary else "".join(f"{a:g} {b:g} {c:g}\n" for a, b, c in v).encode()
    path.write_bytes(head + body + tail)


@pytest.mark.parametrize("binary", [False, True], ids=["ascii", "binary"])
def test_a_ply_header_declaring_fewer_rows_than_the_file_holds_is_refused(tmp_path, binary):
    """plyfile reads the rows a header declares and stops. Before: a PLY file of 3 vertices whose header said
    'element vertex 2' imported as 2 objects with exit status 0: the third vertex (and any past it) was lost
    without a word. Now data after the declared rows is one message naming the element and its count;
    whitespace after an ASCII file's last row, or a line end after a binary file's, is still no data."""
    from viewer.scenes import load_scene

    src, out = tmp_path / "cloud.ply", tmp_path / "out.npz"
    _ply(src, 2, 3, binary)
    status, _, err = viewer("scene", "import", src, "-o", out)
    refused(status, err, "cloud.ply", "'vertex'", "goes on after the rows its header declares",
            "'element vertex 2'")
    assert not out.exists()

    _ply(src, 3, 3, binary, tail=b"\n" if binary else b"\n  \n")
    status, _, err = viewer("scene", "import", src, "-o", out)
    assert status == 0, err
    assert load_scene(out).n == 3


# --------------------------------------------------------------------------- glTF: one accessor, many primitives


@pytest.mark.parametrize("how", ["primitives", "meshes"])
def test_a_gltf_naming_one_accessor_from_many_primitives_is_refused_with_the_estimate(tmp_path, monkeypatch, how):
    """Each accessor is decoded once and weighed against memory, but every primitive copies its POSITION and
    indices into its mesh's arrays. Before: a 99 KB .gltf of one mesh with 3,000 primitives, each naming the
    same 1,000,000-vertex accessor (no bufferView: zeros), went on to allocate about 170 GB (with an address-
    space limit 'not enough memory' after seconds; without one, the kernel's kill with no message). Now
    the vertices and indices of every mesh to decode are counted from the accessors before any is read, and
    refused with the estimate. Here 100 primitives (or meshes) of 100,000 vertices against a 500 MB limit."""
    import json

    from viewer.scenes.importers import _build

    prims = [{"attributes": {"POSITION": 0}}] * 100
    if how == "primitives":
        nodes, meshes = [{"mesh": 0}], [{"primitives": prims}]
    else:
        nodes, meshes = [{"mesh": k} for k in range(100)], [{"primitives": prims[:1]}] * 100
    doc = {"asset": {"version": "2.0"}, "nodes": nodes, "meshes": meshes,
           "accessors": [{"componentType": 5126, "count": 100_000, "type": "VEC3"}]}
    src, out = tmp_path / "fan.gltf", tmp_path / "out.npz"
    src.write_text(json.dumps(doc))
    monkeypatch.setattr(_build, "available", lambda: (500_000_000, "a test's limit"))
    status, _, err = viewer("scene", "import", src, "-o", out)
    refused(status, err, "fan.gltf", "10,000,000 vertices and 10,000,000 indices would need about 1.12 GB",
            "this process may use 500 MB (a test's limit)")
    assert os.listdir(tmp_path) == ["fan.gltf"]


# --------------------------------------------------------------------------- .npz: compressed entries


def test_a_compressed_scene_file_too_big_to_load_is_refused_from_its_headers(tmp_path, monkeypatch):
    """A .npz entry of zeros compresses a thousandfold. Before: a 4.6 MB file (np.savez_compressed of
    150,000,000 centres and radii) was decompressed entry by entry (18 s, 3.6 GB under a 4 GB address-space
    limit) until numpy ran out, and then said 'field 'radii': cannot be read (truncated or corrupt file?):
    MemoryError: ...'. Now every entry's size is read from its .npy header and weighed against the memory the
    process may use before any is decompressed, naming the largest; a MemoryError while reading an entry
    is reported as memory, not as a damaged file."""
    import viewer.system.memory as memory

    n = 4_000_000
    src = tmp_path / "zeros.npz"
    np.savez_compressed(src, format_version=np.int64(2), centres=np.zeros((n, 3)), radii=np.zeros(n))
    assert src.stat().st_size < 1_000_000
    monkeypatch.setattr(memory, "available", lambda: (100_000_000, "a test's limit"))
    status, out, err = viewer("scene", "info", src)
    refused(status, err, "zeros.npz", "'centres'", "the file's entries hold 128 MB (centres 96 MB)",
            "would need about 192 MB of memory; this process may use 100 MB (a test's limit)")
    assert out == ""

    monkeypatch.setattr(memory, "available", lambda: (1 << 62, "no limit known"))

    def no_memory(*a, **k):
        raise MemoryError("Unable to allocate 96 MB")

    monkeypatch.setattr(np.lib.format, "read_array", no_memory)
    status, out, err = viewer("scene", "info", src)
    line = refused(status, err, "zeros.npz", "not enough memory to hold this scene")
    assert "corrupt" not in line


# --------------------------------------------------------------------------- sweep files


def test_a_sweep_listing_an_index_twice_with_a_space_is_refused(tmp_path):
    """``viewer bench --index "octree; octree"`` is refused ('--index lists octree twice'), and so was a sweep
    listing "octree" twice; but the sweep compared the specs as written. Before: indexes = ["octree",
    " octree"] passed ('1 tasks, each measuring octree, octree', exit 0) and the run measured octree once.
    Now the specs are compared without their surrounding spaces, as bench labels them."""
    src = tmp_path / "twice.toml"
    src.write_text('indexes = ["octree", " octree"]\n[axes]\nscene = ["uniform"]\nn = [1000]\n')
    out = tmp_path / "out"
    status, stdout, err = viewer("sweep", src, "--dry-run", "-o", out)
    refused(status, err, "twice.toml", "indexes", "an index spec is listed twice")
    assert stdout == "" and not out.exists()


# --------------------------------------------------------------------------- glTF: numbers at the float64 edges


@pytest.mark.parametrize("scale", [1e300, 1e-320], ids=["huge", "denormal"])
def test_a_gltf_rotation_of_huge_or_tiny_components_is_the_rotation_it_names(tmp_path, scale):
    """glTF rotations are unit quaternions only to float32 precision, so the importer normalises them. Before:
    a rotation [1e300, 1e300, 1e300, 1e300] (whose squares overflow) or [1e-320, 0, 0, 0] (whose squares
    underflow to 0) was 'normalised' to zeros, and the node imported as if it had no rotation, exit 0 (with a
    numpy RuntimeWarning on stderr for the first): a silently wrong box and centre. Now such a quaternion is
    scaled by its largest component first, and imports as the same rotation written small."""
    from tests.support.gltf_writer import build, write_glb
    from viewer.scenes import load_scene

    def imported(rotation, name):
        doc, blob = build()
        doc["nodes"][2]["rotation"] = rotation  # the tetrahedron: a rotation moves its box
        out = tmp_path / f"{name}.npz"
        status, _, err = viewer("scene", "import", write_glb(tmp_path / f"{name}.glb", doc, blob), "-o", out)
        assert status == 0 and err == "", err
        return load_scene(out)

    q = [1.0, 1.0, 1.0, 1.0] if scale > 1 else [1.0, 0.0, 0.0, 0.0]  # 120 degrees about (1, 1, 1); 180 about x
    odd = imported([c * scale for c in q], "odd")
    plain = imported([c / (2.0 if scale > 1 else 1.0) for c in q], "plain")
    unrotated = imported([0.0, 0.0, 0.0, 1.0], "unrotated")
    assert np.array_equal(odd.centres, plain.centres) and np.array_equal(odd.sizes, plain.sizes)
    assert not np.allclose(odd.centres, unrotated.centres)


def test_overflowing_transforms_and_view_distances_print_one_line_not_numpy_warnings(tmp_path):
    """A product of finite transforms (a parent and a child each scaled by 1e200) or a view-distance rule
    (size:factor=1e300 on sizes of 1e30) can overflow to inf, which is then refused naming the node or the
    view distance. Before: numpy's 'RuntimeWarning: overflow encountered in matmul' (or 'in multiply') and
    the source line it came from were printed above the error line: three lines on stderr, not one."""
    from tests.support.gltf_writer import build, write_glb

    doc, blob = build()
    doc["nodes"][1]["scale"] = doc["nodes"][2]["scale"] = [1e200, 1e200, 1e200]
    src, out = write_glb(tmp_path / "far.glb", doc, blob), tmp_path / "out.npz"
    status, _, err = viewer("scene", "import", src, "-o", out)
    refused(status, err, "far.glb", "nodes[2]: its world transform is not finite")
    assert len(err.strip().splitlines()) == 1, err

    table = tmp_path / "big.csv"
    table.write_text("x,y,z,size\n0,0,0,1e30\n1e30,0,0,1e30\n")
    status, _, err = viewer("scene", "import", table, "--view-distance", "size:factor=1e300", "-o", out)
    refused(status, err, "big.csv", "'view distance'", "inf is not a finite number")
    assert len(err.strip().splitlines()) == 1, err
    assert not out.exists()


# --------------------------------------------------------------------------- table colours


def test_a_colour_channel_of_zeros_and_ones_beside_0_255_channels_is_read_on_their_scale(tmp_path):
    """Colour columns are 0..255, or 0..1 floats, and the scale was picked per column. Before: a table whose
    colours were 0..255 written as floats (red 1.0 and 0.0, green 200.0 and 250.5, blue 100.0 and 3.0) imported
    red as 0..1, so the first object's red 1 became 255 beside its green 200: a colour that is not the file's,
    exit 0. Now red, green and blue share one scale (0..1 only when a channel holds fractions and none
    exceeds 1); alpha keeps its own, so 0..1 colours with an alpha of 255 read as before."""
    from viewer.scenes import load_scene

    src, out = tmp_path / "paint.csv", tmp_path / "out.npz"
    src.write_text("x,y,z,red,green,blue\n0,0,0,1.0,200.0,100.0\n1,1,1,0.0,250.5,3.0\n")
    status, _, err = viewer("scene", "import", src, "-o", out)
    assert status == 0, err
    assert load_scene(out).colours.tolist() == [[1, 200, 100, 255], [0, 250, 3, 255]]

    src.write_text("x,y,z,red,green,blue,alpha\n0,0,0,0.5,0.2,1.0,255\n1,1,1,0.0,1,0.25,128\n")
    status, _, err = viewer("scene", "import", src, "-o", out)
    assert status == 0, err
    assert load_scene(out).colours.tolist() == [[128, 51, 255, 255], [0, 255, 64, 128]]


# --------------------------------------------------------------------------- .npz: an import's provenance


@pytest.mark.parametrize("provenance, field, words", [
    (5, "recipe.import", "must be a JSON object"),
    ({"format": "csv", "inf_means": "far"}, "recipe.import.inf_means", "must be a number, got 'far'"),
    ({"format": "glb", "lod_hints": 7}, "recipe.import.lod_hints", "must be a JSON object, got 7"),
    ({"format": "csv", "ranges": ["begin"]}, "recipe.import.ranges", "must be a JSON object"),
], ids=["not-a-table", "inf_means", "lod_hints", "ranges"])
def test_a_scene_file_whose_import_record_has_the_wrong_types_is_refused_naming_the_field(tmp_path, provenance,
                                                                                        field, words):
    """A recipe without a generator (an import's provenance, ``recipe.import``) was kept unchecked. Before:
    'viewer scene info' on a .npz whose recipe was {"import": 5} (or whose inf_means was a string, lod_hints a
    number, ranges a list) exited 1 with a traceback (AttributeError: 'int' object has no attribute 'get'; or
    ValueError: Unknown format code 'g'). Now the scene constructor checks the provenance's fields have the
    types an import writes, naming the field, for every command; a real import's record still loads."""
    import json

    src = tmp_path / "odd.npz"
    np.savez(src, format_version=np.int64(2), centres=np.zeros((3, 3)), radii=np.ones(3),
             recipe=np.str_(json.dumps({"import": provenance})))
    status, out, err = viewer("scene", "info", src)
    refused(status, err, "odd.npz", f"'{field}'", words)
    assert out == ""

    table, good = tmp_path / "pts.csv", tmp_path / "good.npz"
    table.write_text("px,y,z,r,begin\n0,0,0,5,0\n1,1,1,5,0.5\n")
    assert viewer("scene", "import", table, "--columns", "x=px", "-o", good)[0] == 0
    status, out, err = viewer("scene", "info", good)
    assert status == 0 and "imported   csv file pts.csv" in out and "columns {'x': 'px'}" in out, err
