"""Importing visibility ranges, LOD bands and HLOD parents: CSV / Parquet columns begin, lod1,
lod2, ... and parent; glTF MSFT_lod (LOD nodes, screen-coverage and distance hints) and a node hierarchy as
visibility parents, on files built here with pygltflib."""

from __future__ import annotations

import copy
import math
import os
from pathlib import Path

import numpy as np
import pytest

from viewer.domain import RADIUS_LIMIT
from viewer.scenes import SceneError, import_scene, load_scene, save_scene
from viewer.scenes.hlod import DEFAULT_SWITCH, DEFAULT_WINDOW, PAD

from tests.support.cli import refused, run_cli

ROOT = Path(__file__).resolve().parents[2]

CUBE = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], np.float32)
CUBE_F = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1], [2, 3, 7], [2, 7, 6],
                   [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]], np.uint16)
TETRA = np.array([[-1, -1, -1], [1, -1, -1], [0, 1, -1], [0, 0, 1]], np.float32)
TETRA_F = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]], np.uint16)
TRI = np.array([[-1, -1, 0], [1, -1, 0], [0, 1, 0]], np.float32)
TRI_F = np.array([[0, 1, 2]], np.uint16)
SLAB = CUBE * np.array([8, 1, 8], np.float32)


def _glb(path: Path, nodes: list[dict], roots: list[int], meshes=((CUBE, CUBE_F), (TETRA, TETRA_F), (TRI, TRI_F),
                                                                    (SLAB, CUBE_F))) -> Path:
    """A GLB file written by pygltflib: ``meshes`` (vertices, faces) and ``nodes`` as keyword dicts of
    pygltflib.Node."""
    import pygltflib as G

    blob = bytearray()
    g = G.GLTF2(asset=G.Asset(version="2.0"), scene=0, scenes=[G.Scene(nodes=roots)],
                extensionsUsed=["MSFT_lod"])

    def add(arr, ctype, typ, target):
        data = np.ascontiguousarray(arr).tobytes()
        g.bufferViews.append(G.BufferView(buffer=0, byteOffset=len(blob), byteLength=len(data), target=target))
        acc = G.Accessor(bufferView=len(g.bufferViews) - 1, componentType=ctype, count=len(arr), type=typ)
        if typ == "VEC3":
            acc.min, acc.max = arr.min(0).tolist(), arr.max(0).tolist()
        g.accessors.append(acc)
        blob.extend(data + b"\0" * (-len(data) % 4))
        return len(g.accessors) - 1

    for v, f in meshes:
        pos = add(v, G.FLOAT, "VEC3", G.ARRAY_BUFFER)
        idx = add(f.reshape(-1), G.UNSIGNED_SHORT, "SCALAR", G.ELEMENT_ARRAY_BUFFER)
        g.meshes.append(G.Mesh(primitives=[G.Primitive(attributes=G.Attributes(POSITION=pos), indices=idx)]))
    for nd in nodes:
        g.nodes.append(G.Node(**nd))
    g.buffers.append(G.Buffer(byteLength=len(blob)))
    g.set_binary_blob(bytes(blob))
    g.save_binary(str(path))
    return path


LEVEL = [
    # 0: a house, LOD nodes 1 and 2, screen-coverage hints (the spec's example)
    {"mesh": 0, "translation": [10, 0, 0], "extensions": {"MSFT_lod": {"ids": [1, 2]}},
     "extras": {"MSFT_screencoverage": [0.5, 0.2, 0.01]}},
    {"mesh": 1},  # 1: LOD 1 (also a scene root here: it places no object of its own)
    {"mesh": 2},  # 2: LOD 2
    # 3: a tree with one LOD and a distance hint
    {"mesh": 0, "translation": [-10, 0, 0], "scale": [2, 2, 2], "extensions": {"MSFT_lod": {"ids": [1]}},
     "extras": {"lod_distances": [42.0]}},
    # 4: a block proxy over its children 5 and 6 (no begin hint: the HLOD rule)
    {"mesh": 3, "translation": [0, 0, 50], "children": [5, 6]},
    {"mesh": 1, "translation": [3, 0, 0]},
    {"mesh": 2, "translation": [-3, 0, 2]},
    # 7: a proxy with Godot's begin hint, child 8; 9 a group node without a mesh, child 10: no parent
    {"mesh": 3, "translation": [0, 0, -50], "children": [8], "extras": {"visibility_range_begin": 300.0}},
    {"mesh": 0, "translation": [1, 0, 0]},
    {"translation": [0, 5, 0], "children": [10]},
    {"mesh": 1},
]
ROOTS = [0, 1, 3, 4, 7, 9]


def _by_node(scene) -> dict[str, int]:
    """Object rows by what they are (the importer orders objects by base mesh, then as met)."""
    c = scene.centres
    return {name: int(np.argmin(np.abs(c - np.array(at)).sum(1))) for name, at in (
        ("house", [10, 0, 0]), ("tree", [-10, 0, 0]), ("proxy4", [0, 0, 50]), ("k5", [3, 0, 50]),
        ("k6", [-3, 0, 52]), ("proxy7", [0, 0, -50]), ("k8", [1, 0, -50]), ("lone", [0, 5, 0]))}


def test_msft_lod_levels_and_switch_distances(tmp_path):
    s = import_scene(_glb(tmp_path / "level.glb", LEVEL, ROOTS), view_distance="constant:value=1000")
    assert s.n == 8  # the LOD nodes 1 and 2 place no objects
    at = _by_node(s)
    m = s.meshes
    # the house: LOD 0 = the cube, band 1 the tetrahedron, band 2 the triangle
    base = int(m.ids[at["house"]])
    chain = [m.band_mesh(base, b) for b in range(3)]
    assert [m.mesh(k)[1].shape[0] for k in chain] == [12, 4, 1]
    assert np.array_equal(m.mesh(chain[1])[0], TETRA) and np.array_equal(m.mesh(chain[2])[0], TRI)
    # coverage c -> d = R / (c tan 30deg), R half the box diagonal (the cube's box: edges 2, so R = sqrt 3)
    t = math.tan(math.radians(30))
    assert s.lod.shape == (8, 2)
    assert s.lod[at["house"]] == pytest.approx([math.sqrt(3) / (0.5 * t), math.sqrt(3) / (0.2 * t)], rel=1e-12)
    # the tree: its own distance hint, one switch (its band 1 = the tetrahedron, then stays)
    assert s.lod[at["tree"]].tolist() == [42.0, math.inf]
    tb = int(m.ids[at["tree"]])
    assert tb != base and [m.mesh(m.band_mesh(tb, b))[1].shape[0] for b in range(3)] == [12, 4, 4]
    # objects without MSFT_lod: one band, their own mesh
    for k in ("k8", "k5", "lone"):
        assert np.isinf(s.lod[at[k]]).all() and m.band_mesh(int(m.ids[at[k]]), 2) == int(m.ids[at[k]])
    hints = s.recipe["import"]["lod_hints"]
    assert hints["nodes"] == 2 and hints["switches from"] == {"lod_distances": 1, "MSFT_screencoverage": 1}


def test_node_hierarchy_becomes_visibility_parents_without_a_hole(tmp_path):
    s = import_scene(_glb(tmp_path / "level.glb", LEVEL, ROOTS), view_distance="constant:value=100")
    at = _by_node(s)
    p = s.parent
    assert p[at["k5"]] == at["proxy4"] and p[at["k6"]] == at["proxy4"] and p[at["k8"]] == at["proxy7"]
    assert p[at["lone"]] == -1 and p[at["house"]] == -1 and p[at["proxy4"]] == -1
    assert s.begin[at["proxy7"]] == 300.0  # the hint
    # the rule: 4 x the covering radius of the children (distance to the proxy + sqrt 3 x half-extent)
    kids = [at["k5"], at["k6"]]
    off = np.linalg.norm(s.centres[kids] - s.centres[at["proxy4"]], axis=1)
    cover = (off + math.sqrt(3) * s.sizes[kids].astype(np.float64)).max()
    assert s.begin[at["proxy4"]] == pytest.approx(DEFAULT_SWITCH * cover, rel=1e-12)
    # no hole: every child reaches its proxy's begin x (1 + window) + its distance to it
    for proxy, ks in ((at["proxy4"], kids), (at["proxy7"], [at["k8"]])):
        off = np.linalg.norm(s.centres[ks] - s.centres[proxy], axis=1)
        assert (s.radii[ks] >= (s.begin[proxy] * (1 + DEFAULT_WINDOW) + off) * (1 + PAD) * (1 - 1e-15)).all()
        assert s.radii[proxy] >= s.begin[proxy] * (1 + DEFAULT_WINDOW)
    assert s.radii[at["lone"]] == 100.0  # objects in no group keep the rule's distance
    from viewer.frame.ranges import brute_in_range

    rng = np.random.default_rng(1)
    for _ in range(300):  # exactly one of {proxy, children} outside the window, by the runtime's rule
        q = s.centres[at["proxy7"]] + rng.normal(size=3) * rng.uniform(0, 600)
        shown = brute_in_range(s.centres, s.radii, s.begin, s.parent, q, fade=DEFAULT_WINDOW)
        d = np.linalg.norm(q - s.centres[at["proxy7"]])
        if d < 300 * (1 - 1e-9):
            assert shown[at["k8"]] and not shown[at["proxy7"]]
        elif 300 * 1.15 * (1 + 1e-9) < d <= s.radii[at["proxy7"]] * (1 - 1e-9):
            assert shown[at["proxy7"]] and not shown[at["k8"]]


def test_imported_ranges_round_trip_through_npz(tmp_path):
    s = import_scene(_glb(tmp_path / "level.glb", LEVEL, ROOTS))
    save_scene(s, tmp_path / "level.npz")
    r = load_scene(tmp_path / "level.npz")
    for key in ("centres", "radii", "begin", "lod", "parent"):
        assert np.array_equal(getattr(s, key), getattr(r, key)), key
    assert np.array_equal(s.meshes.lods, r.meshes.lods)


def test_a_gltf_without_lods_or_mesh_hierarchy_reads_as_before(tmp_path):
    from tests.support.gltf_writer import write_glb

    path = write_glb(tmp_path / "plain.glb")
    s = import_scene(path)
    assert s.begin is None and s.lod is None and s.parent is None and s.meshes.lods is None
    assert "lod_hints" not in s.recipe["import"] and "ranges" not in s.recipe["import"]


@pytest.mark.parametrize("node0, words", [
    ({"mesh": 0, "extensions": {"MSFT_lod": {"ids": [9]}}}, "MSFT_lod.ids[0]"),
    ({"mesh": 0, "extensions": {"MSFT_lod": {"ids": [3]}}}, "has no mesh"),
    ({"mesh": 0, "extensions": {"MSFT_lod": {"ids": []}}}, "non-empty list"),
    ({"extensions": {"MSFT_lod": {"ids": [1]}}}, "but no mesh"),
    ({"mesh": 0, "extensions": {"MSFT_lod": {"ids": [1, 2]}}, "extras": {"MSFT_screencoverage": [0.1, 0.5]}},
     "must not increase"),
    ({"mesh": 0, "extensions": {"MSFT_lod": {"ids": [1, 2]}}, "extras": {"MSFT_screencoverage": [0.5, 2.0]}},
     "0..1"),
    ({"mesh": 0, "extensions": {"MSFT_lod": {"ids": [1]}}, "extras": {"lod_distances": [1, 2]}},
     "a list of 1 numbers"),
])
def test_bad_msft_lod_is_one_message_naming_the_node(tmp_path, node0, words):
    nodes = [node0, {"mesh": 1}, {"mesh": 2}, {"translation": [1, 2, 3]}]
    with pytest.raises(SceneError) as e:
        import_scene(_glb(tmp_path / "bad.glb", nodes, [0]))
    assert words in str(e.value) and "bad.glb" in str(e.value)


@pytest.mark.parametrize("field, node, value", [("lod_distances", 3, [10**400]),
                                                ("MSFT_screencoverage", 0, [0.5, -10**400]),
                                                ("visibility_range_begin", 7, 10**400)])
def test_a_hint_no_float_holds_exits_2_from_scene_info_naming_the_nodes_field(tmp_path, field, node, value):
    """A JSON integer of 401 digits (no float64 holds it) in a glTF LOD hint: one line naming the node's field
    and the value as given, never an OverflowError nor the scene's lod or begin array; nothing written.
    (Every other hostile glTF number is in scene import's table: tests/cli/test_scene_import.py.)"""
    nodes = copy.deepcopy(LEVEL)
    nodes[node]["extras"] = {field: value}
    src = _glb(tmp_path / "level.glb", nodes, ROOTS)
    code, out, err = run_cli("scene", "info", src, cwd=tmp_path)
    at = f"[{len(value) - 1}]" if isinstance(value, list) else ""
    line = refused(code, err, str(src), f"nodes[{node}].extras.{field}{at}: ", "1e+400 is outside 0..")
    assert "field '" not in line and out == ""
    assert os.listdir(tmp_path) == ["level.glb"]


@pytest.mark.parametrize("field, node", [("lod_distances", 3), ("visibility_range_begin", 7)])
def test_a_distance_hint_at_the_domain_edge_is_read_and_one_ulp_past_it_is_refused(tmp_path, field, node):
    """2**100 world units (viewer.domain's RADIUS_LIMIT) is the largest switch or begin distance a hint gives."""
    nodes = copy.deepcopy(LEVEL)
    for k, hint in enumerate((RADIUS_LIMIT, float(np.nextafter(RADIUS_LIMIT, np.inf)))):
        nodes[node]["extras"] = {field: [hint] if field == "lod_distances" else hint}
        src = _glb(tmp_path / f"level{k}.glb", nodes, ROOTS)
        if k == 0:
            s = import_scene(src)
            row = _by_node(s)["tree" if field == "lod_distances" else "proxy7"]
            assert (s.lod[row, 0] if field == "lod_distances" else s.begin[row]) == RADIUS_LIMIT
            continue
        with pytest.raises(SceneError) as e:
            import_scene(src)
        assert e.value.field is None and e.value.problem.startswith(f"nodes[{node}].extras.{field}")
        assert "1.2676506002282297e+30 is outside 0..2**100" in e.value.problem


# --------------------------------------------------------------------------- tables


def _parquet(path: Path, cols: dict) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table(cols), path)
    return path


def test_csv_and_parquet_range_columns_round_trip(tmp_path):
    csv = tmp_path / "p.csv"
    csv.write_text("x,y,z,r,begin,lod1,lod2,parent\n0,0,0,100,0,10,20,2\n1,0,0,100,0,10,,2\n"
                   "5,0,0,300,50,,,-1\n")
    pq = _parquet(tmp_path / "p.parquet", {
        "x": [0.0, 1.0, 5.0], "y": [0.0, 0, 0], "z": [0.0, 0, 0], "r": [100.0, 100, 300],
        "begin": [0.0, 0, 50], "lod1": [10.0, 10, None], "lod2": [20.0, None, None], "parent": [2, 2, -1]})
    for path in (csv, pq):
        s = import_scene(path)
        assert s.begin.tolist() == [0, 0, 50] and s.parent.tolist() == [2, 2, -1]
        assert s.lod.tolist() == [[10, 20], [10, math.inf], [math.inf, math.inf]]
        save_scene(s, tmp_path / "out.npz")
        r = load_scene(tmp_path / "out.npz")
        for key in ("begin", "lod", "parent", "radii", "centres"):
            assert np.array_equal(getattr(s, key), getattr(r, key)), (path, key)


def test_mapped_range_columns_and_an_old_table_unchanged(tmp_path):
    p = tmp_path / "m.csv"
    p.write_text("px,py,pz,start,switch_a,up\n0,0,0,0,5,-1\n2,0,0,1,6,0\n")
    s = import_scene(p, columns="x=px,y=py,z=pz,begin=start,lod1=switch_a,parent=up",
                     view_distance="constant:value=50")
    assert s.begin.tolist() == [0, 1] and s.lod.tolist() == [[5], [6]] and s.parent.tolist() == [-1, 0]
    old = tmp_path / "old.csv"
    old.write_text("x,y,z,r\n0,0,0,5\n1,1,1,6\n")
    s = import_scene(old)
    assert s.begin is None and s.lod is None and s.parent is None and not s.has_ranges


BAD_ROWS = [  # (the third data row, the column named, words)
    ("0,0,0,100,0,30,20,-1", "lod2", "row 3: lod2 = 20 is below lod1 = 30"),
    ("0,0,0,100,200,10,20,-1", "begin", "row 3: begin 200 is beyond the object's view distance 100"),
    ("0,0,0,100,0,,20,-1", "lod2", "row 3: lod2 = 20 after an empty lod1"),
    ("0,0,0,100,0,10,20,5", "parent", "row 3: parent 5 is not a row: 0..2"),
    ("0,0,0,100,0,10,20,2", "parent", "row 3: parent 2 is the row itself"),
    ("0,0,0,100,0,10,20,1", "parent", "cycle (1 -> 2 -> 1"),
    ("0,0,0,100,-1,10,20,-1", "begin", "row 3: -1.0 is negative"),
    ("0,0,0,100,0,nan,20,-1", "lod1", "row 3: is not a number"),
]


@pytest.mark.parametrize("row, column, words", BAD_ROWS)
def test_bad_range_values_name_the_file_row_and_column(tmp_path, row, column, words):
    p = tmp_path / "bad.csv"
    p.write_text(f"x,y,z,r,begin,lod1,lod2,parent\n1,1,1,50,0,1,2,-1\n2,2,2,50,0,1,2,2\n{row}\n")
    with pytest.raises(SceneError) as e:
        import_scene(p)
    assert e.value.field == column and words in e.value.problem and str(p) in str(e.value)


def test_a_begin_beyond_the_view_distance_exits_2_from_scene_info(tmp_path):
    """(Range columns with a gap, lod1 and lod3, are in scene import's table: tests/cli/test_scene_import.py.)"""
    p = tmp_path / "bad.csv"
    p.write_text("x,y,z,begin\n1,1,1,50\n")
    r = run_cli("scene", "info", p, "--view-distance", "constant:value=10", cwd=ROOT)
    assert r.returncode == 2 and "row 1: begin 50 is beyond the object's view distance 10" in r.stderr


def test_scene_info_prints_the_ranges(tmp_path):
    p = tmp_path / "p.csv"
    p.write_text("x,y,z,r,begin,lod1,lod2,parent\n0,0,0,100,0,10,20,2\n1,0,0,100,0,10,,2\n5,0,0,300,50,,,-1\n")
    r = run_cli("scene", "info", p, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "begin      1 object with a begin > 0: 50 (all)" in out
    assert "objects by switches: 1 with 0, 1 with 1, 1 with 2" in out
    assert "parents    1 proxy (HLOD parents), 2 children, 2 (all) per proxy" in out
    from viewer.reports.scene_info import describe

    d = describe(import_scene(p))["ranges"]
    assert d["parents"] == {**d["parents"], "proxies": 1, "children": 2, "children_short_of_the_window": 0}
    assert d["lod"]["switches"] == 2 and d["begin"]["objects"] == 1


def test_ply_vertex_properties_carry_ranges_too(tmp_path):
    p = tmp_path / "pts.ply"
    p.write_text("ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
                 "property float r\nproperty float begin\nproperty float lod1\nproperty int parent\nend_header\n"
                 "0 0 0 100 0 10 2\n1 0 0 100 0 12 2\n4 0 0 200 30 inf -1\n")
    s = import_scene(p)
    assert s.begin.tolist() == [0, 0, 30] and s.lod.tolist() == [[10], [12], [math.inf]]
    assert s.parent.tolist() == [2, 2, -1]
    p.write_text(p.read_text().replace("4 0 0 200 30 inf -1", "4 0 0 20 30 inf -1"))
    with pytest.raises(SceneError) as e:
        import_scene(p)
    assert e.value.field == "begin" and "row 3: begin 30 is beyond the object's view distance 20" in e.value.problem
