"""Issue 23 ("Hostile input, round two"), the scenes' part, and issue 28 point 8: every case runs the real
command (``viewer scene import`` / ``scene generate`` / ``scene info`` / ``view --headless`` / ``record`` /
``soak``) in a subprocess whose address space is capped at 2 GB (a memory bomb ends in a refusal or a
MemoryError, never in the machine swapping), and bad input must exit 2 with one line naming the file and
the problem, no traceback, nothing written."""

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

from tests.support.gltf_writer import build, write_glb, write_gltf_json

LIMIT = 2 << 30  # bytes of address space each command may map


def _bounded():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def viewer(cwd: Path, *argv, timeout: float = 60) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    return subprocess.run([sys.executable, "-m", "viewer.cli", *map(str, argv)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout, preexec_fn=_bounded)


def refused(tmp_path: Path, src: Path, fragment: str, *argv, capsys=None) -> str:
    """``viewer scene import SRC`` (or ``argv``) exits 2 with one line naming ``src`` and holding
    ``fragment``; nothing is written. In a subprocess; with ``capsys``, through :func:`viewer.cli.main` in
    this process (the same command, for the many cases of a point one subprocess already covers)."""
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    argv = argv or ("scene", "import", src, "-o", out / "scene.npz")
    if capsys is None:
        proc = viewer(tmp_path, *argv)
        code, stderr = proc.returncode, proc.stderr
    else:
        from viewer.cli import main

        code = main([str(a) for a in argv])
        stderr = capsys.readouterr().err
    lines = [ln for ln in stderr.splitlines() if ln.strip() and not ln.startswith("loading ")]  # view's progress
    assert code == 2, (code, stderr[-3000:])
    assert len(lines) == 1 and "Traceback" not in stderr, stderr[-3000:]
    assert src.name in lines[0] and fragment in lines[0], lines[0]
    assert os.listdir(out) == []
    return lines[0]


def imports(tmp_path: Path, src: Path, *flags, timeout: float = 60, capsys=None):
    from viewer.scenes import load_scene

    out = tmp_path / "imported.npz"
    argv = ("scene", "import", src, "-o", out, *flags)
    if capsys is None:
        proc = viewer(tmp_path, *argv, timeout=timeout)
        assert proc.returncode == 0, proc.stderr[-3000:]
    else:
        from viewer.cli import main

        assert main([str(a) for a in argv]) == 0, capsys.readouterr().err
    return load_scene(out)


#: cases run in a subprocess; the others of the same point through viewer.cli.main in this process (the
#: test suite's time: each subprocess pays the command's start-up)
SUBPROCESS = {"../../../../etc/passwd", "/etc/passwd", "data:application/gltf-buffer;base64,", "negative count",
              "POSITION as VEC2", "ROTATION as VEC3", "attributes as a string", "negative mesh", "mesh 0.5",
              "POSITION as SCALAR", "view longer than its buffer"}


def how(case, request):
    """capsys for a case run in this process, None for one run in a subprocess."""
    return None if case in SUBPROCESS else request.getfixturevalue("capsys")


def gltf(tmp_path: Path, name: str, change=None, glb: bool = True) -> Path:
    doc, blob = build()
    if change is not None:
        change(doc)
    if glb:
        return write_glb(tmp_path / name, doc, blob)
    return write_gltf_json(tmp_path / name, doc, blob)


# --------------------------------------------------------------------------- 1. buffers outside the folder


@pytest.mark.parametrize("uri, fragment", [
    ("../../../../etc/passwd", "leads out of the glTF file's folder"),
    ("%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd", "leads out of the glTF file's folder"),
    ("/etc/passwd", "is an absolute path"),
    ("file:///etc/passwd", "the uri names file:"),
    ("http://example.com/level.bin", "the uri names http:"),
    ("outside.bin", "leads out of the glTF file's folder"),  # a link in the folder pointing out of it
])
def test_a_buffer_uri_must_stay_in_the_gltf_files_folder(tmp_path, request, uri, fragment):
    level = tmp_path / "level"
    level.mkdir()
    doc, blob = build()
    (tmp_path / "secret.bin").write_bytes(blob)  # a file the glTF has no business reading
    (level / "outside.bin").symlink_to(tmp_path / "secret.bin")
    doc["buffers"][0]["uri"] = uri
    src = level / "level.gltf"
    src.write_text(json.dumps(doc))
    refused(tmp_path, src, fragment, capsys=how(uri, request))


@pytest.mark.parametrize("uri", ["data:application/gltf-buffer;base64,", "data:application/octet-stream;base64,",
                                 "my%20level.bin", "bin/level%231.bin"])
def test_data_uris_of_either_media_type_and_percent_encoded_paths_are_read(tmp_path, request, uri):
    doc, blob = build()
    if uri.startswith("data:"):
        uri += base64.b64encode(blob).decode()
    src = write_gltf_json(tmp_path / "level.gltf", doc, blob, uri=uri)
    assert imports(tmp_path, src, capsys=how(uri, request)).n == 5


# --------------------------------------------------------------------------- 4. memory


def test_an_accessor_without_data_and_a_count_of_5e8_is_refused_with_the_estimate(tmp_path):
    doc = {"asset": {"version": "2.0"}, "nodes": [{"mesh": 0}],
           "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
           "accessors": [{"componentType": 5126, "count": 500_000_000, "type": "VEC3"}]}  # no bufferView: zeros
    src = tmp_path / "bomb.gltf"
    src.write_text(json.dumps(doc))
    assert src.stat().st_size < 600
    refused(tmp_path, src, "accessors[0]: 500,000,000 VEC3 values would need about 36 GB of memory; this process may use")


def test_an_accessor_must_fit_its_buffer_view_checked_before_reading(tmp_path):
    src = gltf(tmp_path, "long.glb", lambda d: d["accessors"][0].update(count=500_000_000))
    refused(tmp_path, src, "accessors[0]: 500,000,000 values of 12 bytes every 12 from byte 0 need 6,000,000,000 "
                           "bytes; bufferViews[0] holds 96")


def test_instances_past_max_n_are_refused_before_any_is_built(tmp_path):
    def change(d):
        d["accessors"].append({"componentType": 5126, "count": 300_000_000, "type": "VEC3"})  # no data: zeros
        inst = {"EXT_mesh_gpu_instancing": {"attributes": {"TRANSLATION": len(d["accessors"]) - 1}}}
        d["nodes"] += [{"mesh": 0, "extensions": inst}, {"mesh": 0, "extensions": inst}]
        d["scenes"][0]["nodes"] += [4, 5]

    refused(tmp_path, gltf(tmp_path, "many.glb", change), "places 600,000,005 objects")


@pytest.mark.parametrize("command", [["scene", "generate", "huge.toml", "-o", "out/huge.npz"],
                                     ["view", "huge.toml", "--headless", "--frames", "2"],
                                     ["record", "huge.toml", "--frames", "2", "-o", "out/runs"],
                                     ["soak", "huge.toml", "--frames", "2"]])
def test_a_recipe_at_the_largest_n_is_refused_with_the_estimate_and_what_the_process_may_use(tmp_path, command):
    src = tmp_path / "huge.toml"
    src.write_text('generator = "uniform"\nn = 5e8\n')
    line = refused(tmp_path, src, "field 'n': 500,000,000 objects need about 44 GB of memory to generate; this "
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


# --------------------------------------------------------------------------- 5. speed


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


# --------------------------------------------------------------------------- 6. malformed files


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
def test_a_malformed_gltf_exits_2_naming_the_field(tmp_path, request, case):
    change, fragment = MALFORMED[case]
    refused(tmp_path, gltf(tmp_path, "bad.glb", change), fragment, capsys=how(case, request))


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
    refused(tmp_path, src, "field 'x': the header names column 'x' 2 times (columns 1, 2)")


def test_a_ply_value_its_type_cannot_hold_is_refused(tmp_path):
    src = tmp_path / "cloud.ply"
    src.write_text("ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nproperty float z\n"
                   "property uchar red\nproperty uchar green\nproperty uchar blue\nend_header\n1 2 3 300 0 0\n")
    refused(tmp_path, src, "not a readable PLY file: a value does not fit its property's type")


@pytest.mark.parametrize("fmt", ["ascii", "binary_little_endian"])
def test_a_ply_header_declaring_more_rows_than_the_file_holds_is_refused(tmp_path, fmt):
    """A header of 1e11 vertices over a few bytes: refused by its counts before anything is allocated (it
    said 'not enough memory' before, on the ASCII file)."""
    src = tmp_path / "huge.ply"
    head = (f"ply\nformat {fmt} 1.0\nelement vertex 100000000000\nproperty float x\nproperty float y\n"
            "property float z\nelement face 3\nproperty list uchar int vertex_indices\nend_header\n")
    body = b"1 2 3\n4 5 6\n" if fmt == "ascii" else np.zeros(6, dtype="<f4").tobytes()
    src.write_bytes(head.encode() + body)
    err = refused(tmp_path, src, "field 'vertex': the header declares 100,000,000,000 'vertex' rows and 3 'face' "
                                 "rows")
    assert "truncated, or a wrong count?" in err


@pytest.mark.parametrize("value", ["[" * 5000 + "]" * 5000, "{a = " * 400 + "1" + "}" * 400],
                         ids=["arrays 5000 deep", "tables 400 deep"])
def test_a_deeply_nested_recipe_is_refused(tmp_path, request, value):
    src = tmp_path / "deep.toml"
    src.write_text(f'generator = "uniform"\nn = 10\nparams = {value}\n')
    refused(tmp_path, src, "not a recipe: arrays or tables nested too deeply to read as TOML", "scene", "info", src,
            capsys=None if value.startswith("[") else request.getfixturevalue("capsys"))


def test_a_value_nested_just_shallowly_enough_to_parse_is_shown_short(tmp_path, capsys):
    src = tmp_path / "deep.toml"
    src.write_text('generator = "uniform"\nn = ' + "[" * 300 + "]" * 300 + "\n")
    line = refused(tmp_path, src, "field 'n': must be an integer, got list [[[[", "scene", "info", src, capsys=capsys)
    assert len(line) < 300


def test_a_radius_period_whose_use_overflows_is_refused(tmp_path):
    src = tmp_path / "pulse.toml"
    src.write_text('generator = "uniform"\nn = 10\n[motion]\nradius_pulse = 0.5\nradius_period = 5e-324\n')
    refused(tmp_path, src, "field 'motion.radius_period': must be >= 1e-06, got 5e-324", "scene", "info", src)


@pytest.mark.parametrize("table, field", [('[radius]\nmodle = "constant"\nvalue = 5\n', "radius.modle"),
                                          ('[look]\nsize = {modle = "constant", value = 1}\n', "look.size.modle")],
                         ids=["radius", "look.size"])
def test_a_nested_typo_is_named_as_the_unknown_field(tmp_path, request, table, field):
    src = tmp_path / "typo.toml"
    src.write_text('generator = "uniform"\nn = 10\n' + table)
    refused(tmp_path, src, f"field '{field}': unknown field in", "scene", "info", src,
            capsys=None if field == "radius.modle" else request.getfixturevalue("capsys"))



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
