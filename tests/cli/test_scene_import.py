"""``viewer scene import`` (and the commands that import a file on the fly) against hostile files: glTF
buffers, URIs and accessors, tables too large for memory, PLY headers, text encodings, columns given two roles,
control characters in names, transforms and colours at the edges of their ranges. Every refusal exits 2 with one
line naming the file and the field, and writes nothing. The cases whose point is the memory limit run in a process
with a bounded address space (:func:`tests.support.cli.run_process`); the rest in this process."""

from __future__ import annotations

import base64
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.support.cli import refused, run_cli, run_process
from tests.support.gltf_writer import build, write_glb, write_gltf_json


LIMIT = 2 << 30  # bytes of address space each command may map


def _bounded():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def rejects(tmp_path: Path, src: Path, fragment: str, *argv, process: bool = True) -> str:
    """``viewer scene import SRC`` (or ``argv``) exits 2 with one line naming ``src`` and holding
    ``fragment``; nothing is written. In a process of bounded address space (a regression that allocates what
    it estimated fails there, not in the test run); with ``process=False`` in this process (the same command,
    for the many cases of a point one process already covers)."""
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    argv = argv or ("scene", "import", src, "-o", out / "scene.npz")
    if process:
        code, _, stderr = run_process(*argv, cwd=tmp_path, timeout=60, preexec_fn=_bounded)
    else:
        code, _, stderr = run_cli(*argv)
    lines = [ln for ln in stderr.splitlines() if ln.strip() and not ln.startswith("loading ")]  # view's progress
    assert code == 2, (code, stderr[-3000:])
    assert len(lines) == 1 and "Traceback" not in stderr, stderr[-3000:]
    assert src.name in lines[0] and fragment in lines[0], lines[0]
    assert os.listdir(out) == []
    return lines[0]


def imports(tmp_path: Path, src: Path, *flags, timeout: float = 60, process: bool = True):
    from viewer.scenes import load_scene

    out = tmp_path / "imported.npz"
    argv = ("scene", "import", src, "-o", out, *flags)
    if process:
        proc = run_process(*argv, timeout=timeout, cwd=tmp_path, preexec_fn=_bounded)
    else:
        proc = run_cli(*argv)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return load_scene(out)


#: cases run in a process of bounded address space; the others of the same point in this process (each process
#: pays the command's start-up)
SUBPROCESS = {"../../../../etc/passwd", "/etc/passwd", "data:application/gltf-buffer;base64,", "negative count",
              "POSITION as VEC2", "ROTATION as VEC3", "attributes as a string", "negative mesh", "mesh 0.5",
              "POSITION as SCALAR", "view longer than its buffer"}


def gltf(tmp_path: Path, name: str, change=None, glb: bool = True) -> Path:
    doc, blob = build()
    if change is not None:
        change(doc)
    if glb:
        return write_glb(tmp_path / name, doc, blob)
    return write_gltf_json(tmp_path / name, doc, blob)


@pytest.mark.parametrize("uri, fragment", [
    ("../../../../etc/passwd", "leads out of the glTF file's folder"),
    ("%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd", "leads out of the glTF file's folder"),
    ("/etc/passwd", "is an absolute path"),
    ("file:///etc/passwd", "the uri names file:"),
    ("http://example.com/level.bin", "the uri names http:"),
    ("outside.bin", "leads out of the glTF file's folder"),  # a link in the folder pointing out of it
])
def test_a_buffer_uri_must_stay_in_the_gltf_files_folder(tmp_path, uri, fragment):
    level = tmp_path / "level"
    level.mkdir()
    doc, blob = build()
    (tmp_path / "secret.bin").write_bytes(blob)  # a file the glTF has no business reading
    (level / "outside.bin").symlink_to(tmp_path / "secret.bin")
    doc["buffers"][0]["uri"] = uri
    src = level / "level.gltf"
    src.write_text(json.dumps(doc))
    rejects(tmp_path, src, fragment, process=uri in SUBPROCESS)


@pytest.mark.parametrize("uri", ["data:application/gltf-buffer;base64,", "data:application/octet-stream;base64,",
                                 "my%20level.bin", "bin/level%231.bin"])
def test_data_uris_of_either_media_type_and_percent_encoded_paths_are_read(tmp_path, uri):
    doc, blob = build()
    if uri.startswith("data:"):
        uri += base64.b64encode(blob).decode()
    src = write_gltf_json(tmp_path / "level.gltf", doc, blob, uri=uri)
    assert imports(tmp_path, src, process=uri in SUBPROCESS).n == 5


def test_an_accessor_without_data_and_a_count_of_5e8_is_refused_with_the_estimate(tmp_path):
    doc = {"asset": {"version": "2.0"}, "nodes": [{"mesh": 0}],
           "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
           "accessors": [{"componentType": 5126, "count": 500_000_000, "type": "VEC3"}]}  # no bufferView: zeros
    src = tmp_path / "bomb.gltf"
    src.write_text(json.dumps(doc))
    assert src.stat().st_size < 600
    rejects(tmp_path, src, "accessors[0]: 500,000,000 VEC3 values would need about 36 GB of memory; this process may use")


def test_an_accessor_must_fit_its_buffer_view_checked_before_reading(tmp_path):
    src = gltf(tmp_path, "long.glb", lambda d: d["accessors"][0].update(count=500_000_000))
    rejects(tmp_path, src, "accessors[0]: 500,000,000 values of 12 bytes every 12 from byte 0 need 6,000,000,000 "
                           "bytes; bufferViews[0] holds 96")


def test_instances_past_max_n_are_refused_before_any_is_built(tmp_path):
    def change(d):
        d["accessors"].append({"componentType": 5126, "count": 300_000_000, "type": "VEC3"})  # no data: zeros
        inst = {"EXT_mesh_gpu_instancing": {"attributes": {"TRANSLATION": len(d["accessors"]) - 1}}}
        d["nodes"] += [{"mesh": 0, "extensions": inst}, {"mesh": 0, "extensions": inst}]
        d["scenes"][0]["nodes"] += [4, 5]

    rejects(tmp_path, gltf(tmp_path, "many.glb", change), "places 600,000,005 objects")


@pytest.mark.parametrize("command", [["scene", "generate", "huge.toml", "-o", "out/huge.npz"],
                                     ["view", "huge.toml", "--headless", "--frames", "2"],
                                     ["record", "huge.toml", "--frames", "2", "-o", "out/runs"],
                                     ["soak", "huge.toml", "--frames", "2"]])
def test_a_recipe_at_the_largest_n_is_refused_with_the_estimate_and_what_the_process_may_use(tmp_path, command):
    src = tmp_path / "huge.toml"
    src.write_text('generator = "uniform"\nn = 5e8\n')
    line = rejects(tmp_path, src, "field 'n': 500,000,000 objects need about 44 GB of memory to generate; this "
                                  "process may use", *command)
    assert "RLIMIT_AS" in line  # the 2 GB cap is what this process may use here


def test_available_bytes_sees_the_address_space_limit(tmp_path):
    code = ("from viewer.system.memory import available_bytes, available; b = available_bytes(); "
            "print(b, available()[1])")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          preexec_fn=_bounded, env=env)
    have, why = proc.stdout.split(" ", 1)
    assert 0 < int(have) < LIMIT and "RLIMIT_AS" in why, proc.stdout + proc.stderr


def test_ten_thousands_of_instances_of_a_ten_thousand_vertex_mesh_import_in_seconds(tmp_path):
    """30k vertices x 30k instances (a 720 KB GLB): over 300 s when every vertex was transformed per
    instance; the box of a transformed mesh needs only its own box's 8 corners."""
    rng = np.random.default_rng(0)
    v, m = 30_000, 30_000
    verts = rng.normal(size=(v, 3)).astype(np.float32)
    t = rng.uniform(-1000, 1000, (m, 3)).astype(np.float32)
    blob = verts.tobytes() + t.tobytes()
    doc = {"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}],
           "nodes": [{"mesh": 0, "scale": [2, 2, 2],
                      "extensions": {"EXT_mesh_gpu_instancing": {"attributes": {"TRANSLATION": 1}}}}],
           "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "mode": 0}]}],
           "accessors": [{"bufferView": 0, "componentType": 5126, "count": v, "type": "VEC3"},
                         {"bufferView": 1, "componentType": 5126, "count": m, "type": "VEC3"}],
           "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": v * 12},
                           {"buffer": 0, "byteOffset": v * 12, "byteLength": m * 12}],
           "buffers": [{"byteLength": len(blob)}]}
    src = write_glb(tmp_path / "forest.glb", doc, blob)
    assert src.stat().st_size > 700_000
    s = imports(tmp_path, src)
    lo, hi = verts.astype(np.float64).min(0), verts.astype(np.float64).max(0)
    np.testing.assert_allclose(s.centres, 2 * (t.astype(np.float64) + (lo + hi) / 2), rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(s.sizes, np.float32(2 * (hi - lo).max() / 2), rtol=1e-6)


def test_a_hundred_thousand_nodes_import_in_seconds(tmp_path):
    """67 s in pygltflib's dataclass decoding of the JSON before; now json and one batch of matrices."""
    doc, blob = build()
    n = 100_000
    doc["nodes"] += [{"mesh": 0, "translation": [float(i), 0.0, 0.0]} for i in range(n)]
    doc["scenes"][0]["nodes"] += list(range(4, 4 + n))
    s = imports(tmp_path, write_glb(tmp_path / "city.glb", doc, blob))
    assert s.n == 5 + n
    # mesh 0's objects in the order the walk meets them: node 0, node 3's three instances, the new nodes
    assert s.centres[4:4 + n, 0].tolist() == [float(i) for i in range(n)]


def _instanced(attrs):
    return lambda d: d["nodes"][3]["extensions"]["EXT_mesh_gpu_instancing"].update(attributes=attrs)


MALFORMED = {
    "negative count": (lambda d: d["accessors"][0].update(count=-5), "accessors[0].count: must be a whole number >= 1, got -5"),
    "negative offset": (lambda d: d["accessors"][0].update(byteOffset=-12),
                        "accessors[0].byteOffset: must be a whole number >= 0, got -12"),
    "negative view offset": (lambda d: d["bufferViews"][0].update(byteOffset=-12),
                             "bufferViews[0].byteOffset: must be a whole number >= 0, got -12"),
    "negative stride": (lambda d: d["bufferViews"][0].update(byteStride=-12),
                        "bufferViews[0].byteStride: must be a whole number >= 4, got -12"),
    "POSITION as VEC2": (lambda d: d["accessors"][0].update(type="VEC2"),
                         "meshes[0].primitives[0].attributes.POSITION: accessors[0] is VEC2 of FLOAT; POSITION must be VEC3"),
    "ROTATION as VEC3": (lambda d: d["accessors"][6].update(type="VEC3"),
                         "attributes.ROTATION: accessors[6] is VEC3 of FLOAT; ROTATION must be VEC4"),
    "attributes as a list": (_instanced([5, 6, 7]), "EXT_mesh_gpu_instancing.attributes: must be an object"),
    "attributes as a string": (_instanced("TRANSLATION"), "EXT_mesh_gpu_instancing.attributes: must be an object"),
    # 7. files that break the spec
    "negative mesh": (lambda d: d["nodes"][0].update(mesh=-1), "nodes[0].mesh: -1 is not an index into meshes"),
    "negative child": (lambda d: d["nodes"][1].update(children=[-1]),
                       "nodes[1].children[0]: -1 is not an index into nodes"),
    "negative accessor": (lambda d: d["meshes"][0]["primitives"][0].update(indices=-1),
                          "meshes[0].primitives[0].indices: -1 is not an index into accessors"),
    "mesh 0.5": (lambda d: d["nodes"][0].update(mesh=0.5), "nodes[0].mesh: 0.5 is not an index into meshes"),
    "view longer than its buffer": (lambda d: d["bufferViews"][0].update(byteLength=10_000_000),
                                    "bufferViews[0]: bytes 0..10000000 lie past the end of buffers[0]"),
    "POSITION as SCALAR": (lambda d: d["accessors"][0].update(type="SCALAR", count=24),
                           "accessors[0] is SCALAR of FLOAT; POSITION must be VEC3"),
    "a cycle": (lambda d: d["nodes"][2].update(children=[1]), "nodes[1]: reached twice"),
    "signed indices": (lambda d: d["accessors"][1].update(componentType=5122),
                       "accessors[1] is SCALAR of SHORT; indices must be SCALAR of UNSIGNED_BYTE"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_gltf_exits_2_naming_the_field(tmp_path, case):
    change, fragment = MALFORMED[case]
    rejects(tmp_path, gltf(tmp_path, "bad.glb", change), fragment, process=case in SUBPROCESS)


def test_a_deep_node_chain_is_a_tree_not_a_cycle(tmp_path):
    doc, blob = build()
    depth = 5000
    first = len(doc["nodes"])
    for i in range(depth):
        doc["nodes"].append({"translation": [1.0, 0.0, 0.0], "children": [first + i + 1]})
    doc["nodes"].append({"mesh": 0})
    doc["scenes"][0]["nodes"].append(first)
    s = imports(tmp_path, write_glb(tmp_path / "deep.glb", doc, blob))
    assert s.n == 6 and [float(depth), 0.0, 0.0] in s.centres.tolist()


def test_a_csv_naming_a_column_twice_is_refused(tmp_path):
    src = tmp_path / "dup.csv"
    src.write_text("x,x,y,z\n1,2,3,4\n")
    rejects(tmp_path, src, "field 'x': the header names column 'x' 2 times (columns 1, 2)")


def test_a_ply_value_its_type_cannot_hold_is_refused(tmp_path):
    src = tmp_path / "cloud.ply"
    src.write_text("ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nproperty float z\n"
                   "property uchar red\nproperty uchar green\nproperty uchar blue\nend_header\n1 2 3 300 0 0\n")
    rejects(tmp_path, src, "not a readable PLY file: a value does not fit its property's type")


@pytest.mark.parametrize("fmt", ["ascii", "binary_little_endian"])
def test_a_ply_header_declaring_more_rows_than_the_file_holds_is_refused(tmp_path, fmt):
    """A header of 1e11 vertices over a few bytes: refused by its counts before anything is allocated (it
    said 'not enough memory' before, on the ASCII file)."""
    src = tmp_path / "huge.ply"
    head = (f"ply\nformat {fmt} 1.0\nelement vertex 100000000000\nproperty float x\nproperty float y\n"
            "property float z\nelement face 3\nproperty list uchar int vertex_indices\nend_header\n")
    body = b"1 2 3\n4 5 6\n" if fmt == "ascii" else np.zeros(6, dtype="<f4").tobytes()
    src.write_bytes(head.encode() + body)
    err = rejects(tmp_path, src, "field 'vertex': the header declares 100,000,000,000 'vertex' rows and 3 'face' "
                                 "rows")
    assert "truncated, or a wrong count?" in err


@pytest.mark.parametrize("value", ["[" * 5000 + "]" * 5000, "{a = " * 400 + "1" + "}" * 400],
                         ids=["arrays 5000 deep", "tables 400 deep"])
def test_a_deeply_nested_recipe_is_refused(tmp_path, value):
    src = tmp_path / "deep.toml"
    src.write_text(f'generator = "uniform"\nn = 10\nparams = {value}\n')
    rejects(tmp_path, src, "not a recipe: arrays or tables nested too deeply to read as TOML", "scene", "info", src,
            process=value.startswith("["))


def test_a_value_nested_just_shallowly_enough_to_parse_is_shown_short(tmp_path):
    src = tmp_path / "deep.toml"
    src.write_text('generator = "uniform"\nn = ' + "[" * 300 + "]" * 300 + "\n")
    line = rejects(tmp_path, src, "field 'n': must be an integer, got list [[[[", "scene", "info", src, process=False)
    assert len(line) < 300


def test_a_radius_period_whose_use_overflows_is_refused(tmp_path):
    src = tmp_path / "pulse.toml"
    src.write_text('generator = "uniform"\nn = 10\n[motion]\nradius_pulse = 0.5\nradius_period = 5e-324\n')
    rejects(tmp_path, src, "field 'motion.radius_period': must be >= 1e-06, got 5e-324", "scene", "info", src)


@pytest.mark.parametrize("table, field", [('[radius]\nmodle = "constant"\nvalue = 5\n', "radius.modle"),
                                          ('[look]\nsize = {modle = "constant", value = 1}\n', "look.size.modle")],
                         ids=["radius", "look.size"])
def test_a_nested_typo_is_named_as_the_unknown_field(tmp_path, table, field):
    src = tmp_path / "typo.toml"
    src.write_text('generator = "uniform"\nn = 10\n' + table)
    rejects(tmp_path, src, f"field '{field}': unknown field in", "scene", "info", src,
            process=field == "radius.modle")


def test_available_bytes_reads_cgroup_v2_and_v1_limits(monkeypatch):
    from viewer.system import memory

    files = {
        "/proc/meminfo": "MemTotal: 64000000 kB\nMemAvailable: 32000000 kB\n",
        "/proc/self/cgroup": "0::/box/job\n",
        "/sys/fs/cgroup/box/job/memory.max": "max\n",
        "/sys/fs/cgroup/box/memory.max": "4000000000\n",
        "/sys/fs/cgroup/box/memory.current": "1000000000\n",
    }
    monkeypatch.setattr(memory, "_read", files.get)
    monkeypatch.setattr(memory, "_address_space_left", lambda: None)
    assert memory.available() == (3_000_000_000, "what the cgroup's memory limit leaves")
    files["/proc/self/cgroup"] = "4:memory:/job\n0::/\n"
    files["/sys/fs/cgroup/memory/job/memory.limit_in_bytes"] = "2000000000\n"
    files["/sys/fs/cgroup/memory/job/memory.usage_in_bytes"] = "500000000\n"
    files["/sys/fs/cgroup/memory/memory.limit_in_bytes"] = "9223372036854771712\n"  # v1's "no limit"
    assert memory.available_bytes() == 1_500_000_000
    files["/proc/self/cgroup"] = "0::/\n"
    assert memory.available() == (32_000_000 * 1024, "the machine's available memory, MemAvailable")
    monkeypatch.setattr(memory, "_read", lambda path: None)
    assert memory.available_bytes() == memory.UNKNOWN


@pytest.mark.parametrize("make, shown", [
    (lambda d: (d / "esc.csv", "x,y,z,r\n1,2,3,4\n\x1b]0;owned\x07\x1b[2J\n"), "\\x1b]0;owned\\x07\\x1b[2J"),
    (lambda d: (d / "nul.csv", "x,y,z,r\n1,2,3,4\n\x00\x00\x00\n"), "\\x00\\x00\\x00"),
    (lambda d: (d / "a\x1b[31mred.csv", None), "a\\x1b[31mred.csv"),
], ids=["esc-row", "nul-row", "esc-name"])
def test_control_characters_from_a_file_or_its_name_are_shown_escaped(tmp_path, make, shown):
    """The CSV parser quotes the bad row in its message, a missing file is named: before, the terminal got
    the raw ESC sequences (a title set, the screen cleared) and NUL bytes."""
    src, text = make(tmp_path)
    if text is not None:
        src.write_text(text)
    out = tmp_path / "out.npz"
    status, _, err = run_cli("scene", "import", src, "-o", out)
    line = refused(status, err, shown)
    assert not any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in line), repr(line)
    assert not out.exists()


def _odd_names(tmp_path: Path, suffix: str) -> list[Path]:
    """A file name holding a byte that is not UTF-8 (Latin-1 'e acute') and one holding an ESC sequence."""
    d = os.fsencode(tmp_path)
    return [Path(os.fsdecode(d + b"/caf\xe9" + suffix.encode())),
            Path(os.fsdecode(d + b"/esc\x1b[2J" + suffix.encode()))]


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".parquet"])
def test_a_table_named_with_a_byte_that_is_not_utf8_is_imported(tmp_path, suffix):
    """pyarrow takes a path as UTF-8 text. Before: 'not a readable CSV file (truncated, or another format?):
    'utf-8' codec can't encode character '\\udce9'', exit 2, for a sound file named caf\\xe9.csv."""
    src = _odd_names(tmp_path, suffix)[0]
    if suffix == ".parquet":
        pa = pytest.importorskip("pyarrow")
        import pyarrow.parquet as pq

        with open(src, "wb") as f:
            pq.write_table(pa.table({"x": [0.0, 10.0], "y": [0.0, 0.0], "z": [0.0, 5.0], "r": [50.0, 60.0]}), f)
    else:
        sep = "\t" if suffix == ".tsv" else ","
        src.write_text("".join(sep.join(row.split()) + "\n" for row in ("x y z r", "0 0 0 50", "10 0 5 60")))
    out = tmp_path / "out.npz"
    status, stdout, err = run_cli("scene", "import", src, "-o", out)
    assert status == 0 and "Traceback" not in err, err
    assert out.is_file() and "2 objects" in stdout + err, stdout + err


@pytest.mark.parametrize("columns, words", [
    ("x=y", ["--columns", "column 'y' would play x and y"]),
    ("x=z,y=z", ["--columns", "column 'z' would play x, y and z"]),
    ("r=x", ["--columns", "column 'x' would play x and r"]),
    ("x=a,x=y", ["--columns", "role x is given twice ('a' and 'y')"]),
])
def test_a_column_given_two_roles_is_refused(tmp_path, columns, words):
    """Before: 'scene import pts.csv --columns x=y' (columns x, y, z) read column y as both x and y and wrote
    a scene on the diagonal x = y, exit 0; 'x=a,x=y' silently kept the last. Now refused, naming the file
    and --columns, and nothing is written."""
    src = tmp_path / "pts.csv"
    src.write_text("x,y,z\n1,2,3\n4,5,6\n")
    out = tmp_path / "pts.npz"
    status, _, err = run_cli("scene", "import", src, "--columns", columns, "-o", out)
    refused(status, err, str(src), *words)
    assert sorted(os.listdir(tmp_path)) == ["pts.csv"]


def test_columns_swapped_are_read_as_mapped(tmp_path):
    """Two roles trading columns is no column playing two roles: x=y,y=x swaps the axes."""
    src = tmp_path / "pts.csv"
    src.write_text("x,y,z\n1,2,3\n4,5,6\n")
    status, out, err = run_cli("scene", "info", src, "--columns", "x=y,y=x")
    assert status == 0, err
    assert "box [2, 1, 3] .. [5, 4, 6]" in out, out


POINTS = "x,y,z\n0,0,0\n10,0,5\n"


@pytest.fixture
def points(tmp_path):
    p = tmp_path / "pts.csv"
    p.write_text(POINTS)
    return p


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
    status, _, err = run_cli("scene", "import", points, "-o", out, cwd=tmp_path)
    refused(status, err, *words)
    assert sorted(os.listdir(tmp_path)) == before
    if out == "fifo.npz":
        assert not (tmp_path / out).is_file()


@pytest.mark.parametrize("text, words", [
    ("x,y,z,r\n", ["holds no data rows, only its column names"]),
    ("x,y,z\n1,,3\n", ["field 'y'", "row 1: empty value"]),
    ("x,y,z,parent\n1,2,3,\n", ["field 'parent'", "row 1: empty value"]),
    ("x,y,z,parent\n1,2,3,-1\n4,5,6,0.5\n", ["field 'parent'", "row 2: parent 0.5 is not a whole number"]),
], ids=["header-only", "empty-y", "empty-parent", "half-parent"])
def test_a_table_with_no_rows_or_an_empty_cell_says_so(tmp_path, text, words):
    """Before: a CSV of column names only said "field 'x': must hold numbers, not null"; a column whose only
    cells are empty said "must hold numbers, found None in row 1" (a Python word for an empty cell); a parent
    of 0.5 was shown as 'np.float64(0.5)'."""
    src = tmp_path / "t.csv"
    src.write_text(text)
    status, _, err = run_cli("scene", "import", src, "-o", tmp_path / "t.npz")
    line = refused(status, err, str(src), *words)
    assert "None" not in line and "null" not in line and "np." not in line
    assert sorted(os.listdir(tmp_path)) == ["t.csv"]


def test_a_table_in_utf16_is_read_and_one_in_latin1_is_one_message(tmp_path):
    """Spreadsheets save 'Unicode text' as UTF-16 with a byte-order mark, and older ones CSV in a Windows
    code page. Before: a UTF-16 TSV was 'CSV parse error: Expected 3 columns, got 1: \\x00'; a header
    holding 'caf\\xe9' (Latin-1) died with a UnicodeDecodeError traceback from pyarrow."""
    rows = "x\ty\tz\n0\t0\t0\n10\t0\t5\n"
    for enc in ("utf-16", "utf-16-be"):
        src = tmp_path / f"{enc}.tsv"
        src.write_bytes(("\ufeff" if enc.endswith("be") else "").encode(enc) + rows.encode(enc))
        status, out, err = run_cli("scene", "info", src)
        assert status == 0 and "bounds     [0, 0, 0] .. [10, 0, 5]" in out, err + out
    src = tmp_path / "latin1.csv"
    src.write_bytes("x,y,z,café\n1,2,3,4\n".encode("latin-1"))
    status, _, err = run_cli("scene", "import", src, "-o", tmp_path / "l.npz")
    refused(status, err, str(src), "header is not UTF-8 text (byte 0xe9", "save it as UTF-8")
    assert not (tmp_path / "l.npz").exists()


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
    status, _, err = run_cli("scene", "import", src, "-o", out)
    line = refused(status, err, "big.csv", "importing about ", " rows of 4 columns (", " of text) would need about",
                   "this process may use 5 MB (a test's limit)")
    rows = int(line.split("importing about ")[1].split(" rows")[0].replace(",", ""))
    assert 0.97 * n <= rows <= 1.03 * n, line  # the estimate from the first MiB's lines
    assert not out.exists() and os.listdir(tmp_path) == ["big.csv"]
    tsv = tmp_path / "big.tsv"
    tsv.write_text(src.read_text().replace(",", "\t"))
    status, _, err = run_cli("scene", "import", tsv, "-o", out)
    refused(status, err, "big.tsv", " rows of 4 columns (")

    monkeypatch.setattr(_build, "available", lambda: (1 << 62, "no limit known"))
    status, _, err = run_cli("scene", "import", src, "-o", out)  # room enough: imported as before
    assert status == 0, err
    assert out.exists()


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
    status, _, err = run_cli("scene", "import", src, "-o", out)
    refused(status, err, "zeros.parquet", "importing 4,000,000 rows of 3 columns would need about",
            "this process may use 100 MB (a test's limit)")
    assert not out.exists() and os.listdir(tmp_path) == ["zeros.parquet"]

    # memory that runs out inside pyarrow is a memory message, not "not a readable Parquet file"
    monkeypatch.setattr(_build, "available", lambda: (1 << 62, "no limit known"))

    def no_memory(*a, **k):
        raise pa.ArrowMemoryError("malloc of size 8388608 failed")

    monkeypatch.setattr(pq, "read_table", no_memory)
    status, _, err = run_cli("scene", "import", src, "-o", out)
    line = refused(status, err, "zeros.parquet", "not enough memory to import this file")
    assert "not a readable" not in line
    assert not out.exists()


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
    status, _, err = run_cli("scene", "import", src, "-o", out)
    refused(status, err, "cloud.ply", "'vertex'", "goes on after the rows its header declares",
            "'element vertex 2'")
    assert not out.exists()

    _ply(src, 3, 3, binary, tail=b"\n" if binary else b"\n  \n")
    status, _, err = run_cli("scene", "import", src, "-o", out)
    assert status == 0, err
    assert load_scene(out).n == 3


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
    status, _, err = run_cli("scene", "import", src, "-o", out)
    refused(status, err, "fan.gltf", "10,000,000 vertices and 10,000,000 indices would need about 1.12 GB",
            "this process may use 500 MB (a test's limit)")
    assert os.listdir(tmp_path) == ["fan.gltf"]


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
        status, _, err = run_cli("scene", "import", write_glb(tmp_path / f"{name}.glb", doc, blob), "-o", out)
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
    status, _, err = run_cli("scene", "import", src, "-o", out)
    refused(status, err, "far.glb", "nodes[2]: its world transform is not finite")
    assert len(err.strip().splitlines()) == 1, err

    table = tmp_path / "big.csv"
    table.write_text("x,y,z,size\n0,0,0,1e30\n1e30,0,0,1e30\n")
    status, _, err = run_cli("scene", "import", table, "--view-distance", "size:factor=1e300", "-o", out)
    refused(status, err, "big.csv", "'view distance'", "inf is not a finite number")
    assert len(err.strip().splitlines()) == 1, err
    assert not out.exists()


def test_a_colour_channel_of_zeros_and_ones_beside_0_255_channels_is_read_on_their_scale(tmp_path):
    """Colour columns are 0..255, or 0..1 floats, and the scale was picked per column. Before: a table whose
    colours were 0..255 written as floats (red 1.0 and 0.0, green 200.0 and 250.5, blue 100.0 and 3.0) imported
    red as 0..1, so the first object's red 1 became 255 beside its green 200: a colour that is not the file's,
    exit 0. Now red, green and blue share one scale (0..1 only when a channel holds fractions and none
    exceeds 1); alpha keeps its own, so 0..1 colours with an alpha of 255 read as before."""
    from viewer.scenes import load_scene

    src, out = tmp_path / "paint.csv", tmp_path / "out.npz"
    src.write_text("x,y,z,red,green,blue\n0,0,0,1.0,200.0,100.0\n1,1,1,0.0,250.5,3.0\n")
    status, _, err = run_cli("scene", "import", src, "-o", out)
    assert status == 0, err
    assert load_scene(out).colours.tolist() == [[1, 200, 100, 255], [0, 250, 3, 255]]

    src.write_text("x,y,z,red,green,blue,alpha\n0,0,0,0.5,0.2,1.0,255\n1,1,1,0.0,1,0.25,128\n")
    status, _, err = run_cli("scene", "import", src, "-o", out)
    assert status == 0, err
    assert load_scene(out).colours.tolist() == [[128, 51, 255, 255], [0, 255, 64, 128]]
