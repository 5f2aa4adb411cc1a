"""``viewer scene import`` (and the commands that import a file on the fly) against hostile files. Every
refusal of ``scene import`` that one line and an unchanged directory show is one table, at the end (glTF buffers,
URIs, accessors and numbers, bad tables, PLY headers, text encodings, columns given two roles, control characters in
names, overflowing transforms, bad outputs), run in this process. Apart: the refusals whose point is the memory
limit run in a process with a bounded address space (:func:`tests.support.cli.run_process`); the table and Parquet
files too large for a limit set in this process, whose estimate is checked and which import once memory allows;
the recipe refusals of other commands that import on the fly."""

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

from tests.scenes.test_import import BAD as BAD_FILES
from tests.scenes.test_import import _bad_files
from tests.support.cli import refused, run_cli, run_process, with_flags
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
SUBPROCESS = {"data:application/gltf-buffer;base64,"}


def gltf(tmp_path: Path, name: str, change=None, glb: bool = True) -> Path:
    doc, blob = build()
    if change is not None:
        change(doc)
    if glb:
        return write_glb(tmp_path / name, doc, blob)
    return write_gltf_json(tmp_path / name, doc, blob)


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


def test_columns_swapped_are_read_as_mapped(tmp_path):
    """Two roles trading columns is no column playing two roles: x=y,y=x swaps the axes."""
    src = tmp_path / "pts.csv"
    src.write_text("x,y,z\n1,2,3\n4,5,6\n")
    status, out, err = run_cli("scene", "info", src, "--columns", "x=y,y=x")
    assert status == 0, err
    assert "box [2, 1, 3] .. [5, 4, 6]" in out, out


def test_a_table_in_utf16_is_read(tmp_path):
    """Spreadsheets save 'Unicode text' as UTF-16 with a byte-order mark. Before: a UTF-16 TSV was 'CSV parse
    error: Expected 3 columns, got 1: \\x00'. (A header in Latin-1 is refused: the table below.)"""
    rows = "x\ty\tz\n0\t0\t0\n10\t0\t5\n"
    for enc in ("utf-16", "utf-16-be"):
        src = tmp_path / f"{enc}.tsv"
        src.write_bytes(("\ufeff" if enc.endswith("be") else "").encode(enc) + rows.encode(enc))
        status, out, err = run_cli("scene", "info", src)
        assert status == 0 and "bounds     [0, 0, 0] .. [10, 0, 5]" in out, err + out


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
def test_whitespace_after_a_ply_files_declared_rows_is_no_data(tmp_path, binary):
    """Data after the rows a PLY header declares is refused (the table below); whitespace after an ASCII
    file's last row, or a line end after a binary file's, is still no data."""
    from viewer.scenes import load_scene

    src, out = tmp_path / "cloud.ply", tmp_path / "out.npz"
    _ply(src, 3, 3, binary, tail=b"\n" if binary else b"\n  \n")
    status, _, err = run_cli("scene", "import", src, "-o", out)
    assert status == 0, err
    assert load_scene(out).n == 3


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


# --------------------------------------------------------------------------- the refusals of ``viewer scene import``


def _file(name: str, text: str | bytes, *flags):
    """A setup writing ``text`` as ``name`` in the directory the import runs in."""
    def setup(work, monkeypatch):
        src = work / name
        src.write_bytes(text) if isinstance(text, bytes) else src.write_text(text)
        return src, list(flags)
    return setup


def _bad_gltf(change, name: str = "bad.glb"):
    """A setup writing the test glTF scene as ``name`` after ``change(doc)``."""
    return lambda work, monkeypatch: (gltf(work, name, change), [])


def _buffer_uri(uri: str):
    """level/level.gltf whose buffer's uri is ``uri``; beside level/, secret.bin (the buffer's bytes) and, in
    level/, outside.bin (a link to it): files the glTF has no business reading."""
    def setup(work, monkeypatch):
        level = work / "level"
        level.mkdir()
        doc, blob = build()
        (work / "secret.bin").write_bytes(blob)
        (level / "outside.bin").symlink_to(work / "secret.bin")
        doc["buffers"][0]["uri"] = uri
        src = level / "level.gltf"
        src.write_text(json.dumps(doc))
        return src, []
    return setup


def _points_to(out: str):
    """pts.csv (two points) imported to ``out`` (a FIFO there when it names fifo.npz)."""
    def setup(work, monkeypatch):
        (work / "pts.csv").write_text("x,y,z\n0,0,0\n10,0,5\n")
        if out == "fifo.npz":
            os.mkfifo(work / out)
        return work / "pts.csv", ["--output", out]
    return setup


def _declared_fewer(binary: bool):
    def setup(work, monkeypatch):
        _ply(work / "cloud.ply", 2, 3, binary)
        return work / "cloud.ply", []
    return setup


def _one_accessor_from_many(how: str):
    """fan.gltf: 100 primitives of one mesh (or 100 meshes of one primitive), each naming the same accessor of
    100,000 vertices (no bufferView: zeros), against a 500 MB limit."""
    def setup(work, monkeypatch):
        from viewer.scenes.importers import _build

        prims = [{"attributes": {"POSITION": 0}}] * 100
        if how == "primitives":
            nodes, meshes = [{"mesh": 0}], [{"primitives": prims}]
        else:
            nodes, meshes = [{"mesh": k} for k in range(100)], [{"primitives": prims[:1]}] * 100
        doc = {"asset": {"version": "2.0"}, "nodes": nodes, "meshes": meshes,
               "accessors": [{"componentType": 5126, "count": 100_000, "type": "VEC3"}]}
        (work / "fan.gltf").write_text(json.dumps(doc))
        monkeypatch.setattr(_build, "available", lambda: (500_000_000, "a test's limit"))
        return work / "fan.gltf", []
    return setup


def _far_nodes(doc):
    doc["nodes"][1]["scale"] = doc["nodes"][2]["scale"] = [1e200, 1e200, 1e200]  # a parent and a child


def _lod_hint(field: str, value):
    """A change of the test scene: node 0 (the cube) drawn as two LODs, nodes 4 and 5 (the tetrahedron), with
    ``extras.FIELD = value`` (its switch hints)."""
    def change(doc):
        doc["extensionsUsed"].append("MSFT_lod")
        doc["nodes"] += [{"mesh": 1}, {"mesh": 1}]
        doc["nodes"][0].update(extensions={"MSFT_lod": {"ids": [4, 5]}}, extras={field: value})
    return change


def _begin_hint(value):
    """A change of the test scene: node 1 given the cube, so it is the HLOD proxy of its child node 2, with
    ``extras.visibility_range_begin = value``."""
    return lambda doc: doc["nodes"][1].update(mesh=0, extras={"visibility_range_begin": value})


#: words of the refusal of a distance outside the numeric domain (viewer.domain)
_PAST_THE_DOMAIN = "is outside 0..2**100 = 1.268e+30 (a distance in world units: the numeric domain"


def _bad_file(case: str):
    """One of tests/scenes/test_import.py's bad files (all of them written; ``case`` imported)."""
    def setup(work, monkeypatch):
        src, flags, fragment = _bad_files(work)[case]
        return src, flags, [fragment]
    return setup


def _row(case_id: str, setup, *words: str):
    return pytest.param(setup, list(words), 2, id=case_id)


#: every hostile input of ``viewer scene import``: (setup, words its one error line holds ({src} the file
#: imported, {name} its name), exit status). ``setup(work, monkeypatch)`` writes the file in the directory the
#: import runs in and returns it with the flags to give (an --output replaces the default out.npz), and for a bad
#: file of tests/scenes/test_import.py, the words its message holds. Before, among
#: others: a buffer uri read /etc/passwd; a table column played two roles and made a scene on the diagonal; ESC
#: sequences and NUL bytes of a file reached the terminal raw; an empty -o wrote pts.npz and '-o fifo.npz' replaced
#: the FIFO; an empty cell was "found None"; a PLY file of 3 vertices declaring 2 imported 2, exit 0; a 99 KB glTF
#: naming one accessor from many primitives went on to allocate about 170 GB; an overflowing transform printed
#: numpy's RuntimeWarning above the error line; a JSON integer no float holds (10**400) in a LOD hint, a transform or
#: a count ended in an OverflowError traceback; a hint past the numeric domain was blamed on the scene's lod or
#: begin array instead of the node's own field.
REFUSED = [
    _row("uri-up-the-tree", _buffer_uri("../../../../etc/passwd"), "{name}", "leads out of the glTF file's folder"),
    _row("uri-percent-encoded-up-the-tree", _buffer_uri("%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd"), "{name}",
         "leads out of the glTF file's folder"),
    _row("uri-absolute", _buffer_uri("/etc/passwd"), "{name}", "is an absolute path"),
    _row("uri-file-scheme", _buffer_uri("file:///etc/passwd"), "{name}", "the uri names file:"),
    _row("uri-http", _buffer_uri("http://example.com/level.bin"), "{name}", "the uri names http:"),
    _row("uri-a-link-out-of-the-folder", _buffer_uri("outside.bin"), "{name}", "leads out of the glTF file's folder"),
    *(_row(f"gltf-{case.replace(' ', '-')}", _bad_gltf(change), "{name}", fragment)
      for case, (change, fragment) in MALFORMED.items()),
    *(_row(f"file-{case.replace(' ', '-')}", _bad_file(case), "{src}") for case in BAD_FILES),
    _row("gltf-transforms-overflow", _bad_gltf(_far_nodes, "far.glb"), "far.glb",
         "nodes[2]: its world transform is not finite"),
    *(_row(case_id, _bad_gltf(_lod_hint(field, value)), "{name}", words) for case_id, field, value, words in [
        ("gltf-lod_distances-10**400", "lod_distances", [1, 10**400],
         f"nodes[0].extras.lod_distances[1]: 1e+400 {_PAST_THE_DOMAIN}"),
        ("gltf-lod_distances--10**400", "lod_distances", [-10**400, 1],
         f"nodes[0].extras.lod_distances[0]: -1e+400 {_PAST_THE_DOMAIN}"),
        ("gltf-screencoverage-10**400", "MSFT_screencoverage", [10**400, 0.1],
         "nodes[0].extras.MSFT_screencoverage[0]: 1e+400 is outside 0..1 (a share of the view's height)"),
        ("gltf-screencoverage--10**400", "MSFT_screencoverage", [0.5, -10**400],
         "nodes[0].extras.MSFT_screencoverage[1]: -1e+400 is outside 0..1 (a share of the view's height)")]),
    _row("gltf-visibility_range_begin-10**400", _bad_gltf(_begin_hint(10**400)), "{name}",
         f"nodes[1].extras.visibility_range_begin: 1e+400 {_PAST_THE_DOMAIN}"),
    _row("gltf-visibility_range_begin--10**400", _bad_gltf(_begin_hint(-10**400)), "{name}",
         f"nodes[1].extras.visibility_range_begin: -1e+400 {_PAST_THE_DOMAIN}"),
    _row("gltf-translation-10**400", _bad_gltf(lambda d: d["nodes"][0].update(translation=[10**400, 0, 0])),
         "{name}", "nodes[0].translation[0]: 1e+400 is outside what a float64 holds (|x| <= 1.798e+308)"),
    _row("gltf-count-10**400", _bad_gltf(lambda d: d["accessors"][0].update(count=10**400)), "{name}",
         "accessors[0].count: must be a whole number >= 1 and at most 2**53 - 1", "got 1e+400"),
    _row("gltf-lod_distances-past-the-domain", _bad_gltf(_lod_hint("lod_distances", [1, 1e31])), "{name}",
         f"nodes[0].extras.lod_distances[1]: 1e+31 {_PAST_THE_DOMAIN}"),
    _row("gltf-screencoverage-switching-past-the-domain", _bad_gltf(_lod_hint("MSFT_screencoverage", [0.5, 1e-35])),
         "{name}", "nodes[0].extras.MSFT_screencoverage[1]: a coverage of 1e-35 puts the switch at 6e+35 "
                   "world units for an object of radius 3.464", "outside 0..2**100 = 1.268e+30"),
    _row("gltf-visibility_range_begin-past-the-domain", _bad_gltf(_begin_hint(1e300)), "{name}",
         f"nodes[1].extras.visibility_range_begin: 1e+300 {_PAST_THE_DOMAIN}"),
    _row("gltf-one-accessor-from-many-primitives", _one_accessor_from_many("primitives"), "fan.gltf",
         "10,000,000 vertices and 10,000,000 indices would need about 1.12 GB",
         "this process may use 500 MB (a test's limit)"),
    _row("gltf-one-accessor-from-many-meshes", _one_accessor_from_many("meshes"), "fan.gltf",
         "10,000,000 vertices and 10,000,000 indices would need about 1.12 GB",
         "this process may use 500 MB (a test's limit)"),
    _row("csv-a-column-named-twice", _file("dup.csv", "x,x,y,z\n1,2,3,4\n"), "{name}",
         "field 'x': the header names column 'x' 2 times (columns 1, 2)"),
    _row("csv-header-only", _file("t.csv", "x,y,z,r\n"), "{src}", "holds no data rows, only its column names"),
    _row("csv-empty-y", _file("t.csv", "x,y,z\n1,,3\n"), "{src}", "field 'y'", "row 1: empty value"),
    _row("csv-empty-parent", _file("t.csv", "x,y,z,parent\n1,2,3,\n"), "{src}", "field 'parent'", "row 1: empty value"),
    _row("csv-half-parent", _file("t.csv", "x,y,z,parent\n1,2,3,-1\n4,5,6,0.5\n"), "{src}", "field 'parent'",
         "row 2: parent 0.5 is not a whole number"),
    _row("csv-lod-columns-with-a-gap", _file("bad.csv", "x,y,z,r,lod1,lod3\n1,1,1,50,1,2\n"), "bad.csv", "'lod3'",
         "no lod2"),
    _row("csv-header-in-latin1", _file("latin1.csv", "x,y,z,café\n1,2,3,4\n".encode("latin-1")), "{src}",
         "header is not UTF-8 text (byte 0xe9", "save it as UTF-8"),
    _row("csv-view-distance-overflows", _file("big.csv", "x,y,z,size\n0,0,0,1e30\n1e30,0,0,1e30\n", "--view-distance",
                                              "size:factor=1e300"), "big.csv", "'view distance'",
         "inf is not a finite number"),
    _row("csv-esc-in-a-row", _file("esc.csv", "x,y,z,r\n1,2,3,4\n\x1b]0;owned\x07\x1b[2J\n"),
         "\\x1b]0;owned\\x07\\x1b[2J"),
    _row("csv-nul-in-a-row", _file("nul.csv", "x,y,z,r\n1,2,3,4\n\x00\x00\x00\n"), "\\x00\\x00\\x00"),
    _row("csv-esc-in-a-missing-file's-name", lambda work, monkeypatch: (work / "a\x1b[31mred.csv", []),
         "a\\x1b[31mred.csv"),
    *(_row(f"columns-{columns}", _file("pts.csv", "x,y,z\n1,2,3\n4,5,6\n", "--columns", columns), "{src}",
           "--columns", problem)
      for columns, problem in [("x=y", "column 'y' would play x and y"),
                               ("x=z,y=z", "column 'z' would play x, y and z"),
                               ("r=x", "column 'x' would play x and r"),
                               ("x=a,x=y", "role x is given twice ('a' and 'y')")]),
    _row("ply-a-value-its-type-cannot-hold",
         _file("cloud.ply", "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\n"
                            "property float z\nproperty uchar red\nproperty uchar green\nproperty uchar blue\n"
                            "end_header\n1 2 3 300 0 0\n"),
         "{name}", "not a readable PLY file: a value does not fit its property's type"),
    *(_row(f"ply-{kind}-rows-past-the-declared", _declared_fewer(kind == "binary"), "cloud.ply", "'vertex'",
           "goes on after the rows its header declares", "'element vertex 2'") for kind in ("ascii", "binary")),
    _row("output-empty", _points_to(""), "-o/--output", "the file name is empty"),
    _row("output-a-fifo", _points_to("fifo.npz"), "-o/--output fifo.npz", "not a regular file"),
    _row("output-name-too-long", _points_to("n" * 300 + ".npz"), "-o/--output", "304 bytes long"),
    _row("output-under-a-file", _points_to("pts.csv/x.npz"), "-o/--output pts.csv/x.npz",
         "pts.csv is not a directory"),
]


def _snapshot(d: Path) -> dict:
    """Every path under ``d`` with its bytes when it is a regular file (a FIFO is not read)."""
    return {str(p.relative_to(d)): p.read_bytes() if p.is_file() else p.is_fifo() for p in sorted(d.rglob("*"))}


@pytest.mark.parametrize("setup, words, status", REFUSED)
def test_a_hostile_file_or_flag_is_refused_with_one_line_and_nothing_written(tmp_path, monkeypatch, setup, words,
                                                                             status):
    """Exit status 2, one line on stderr naming the file (or the flag) and the field, in words (no Python or JSON
    spelling of an empty cell, no control character), nothing on stdout, nothing written: the directory the import
    runs in is as the setup left it (a FIFO where the output goes is still a FIFO)."""
    work = tmp_path / "work"
    work.mkdir()
    src, flags, *more = setup(work, monkeypatch)  # more: the words only the setup knows
    before = _snapshot(work)
    code, stdout, err = run_cli("scene", "import", *with_flags([src, "--output", work / "out.npz"], flags), cwd=work)
    assert code == status, err
    words = [w.replace("{src}", str(src)).replace("{name}", src.name) for w in words] + (more[0] if more else [])
    line = refused(code, err, *words)
    assert len(err.strip().splitlines()) == 1, err  # no numpy warning above it
    assert not any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in line), repr(line)
    assert "None" not in line and "null" not in line and "np." not in line, line
    assert stdout == ""
    assert _snapshot(work) == before
