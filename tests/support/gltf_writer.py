"""Writes small glTF 2.0 files for the import tests (plain JSON + one binary buffer, by the spec), so the
tests need no exporter and know every vertex and transform they put in."""

from __future__ import annotations

import base64
import json
import struct
from pathlib import Path

import numpy as np

CUBE = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=np.float32)
CUBE_FACES = np.array([
    [0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
    [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3],
], dtype=np.uint16)
TETRA = np.array([[0, 0, 0], [2, 0, 0], [0, 3, 0], [0, 0, 4]], dtype=np.float32)
TETRA_FACES = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]], dtype=np.uint16)


def quat(axis, degrees) -> list[float]:
    a = np.asarray(axis, dtype=np.float64)
    a = a / np.linalg.norm(a)
    h = np.radians(degrees) / 2
    return [*(a * np.sin(h)).tolist(), float(np.cos(h))]


def rot_matrix(q) -> np.ndarray:
    q = np.asarray(q, dtype=np.float64)
    x, y, z, w = q / np.linalg.norm(q)  # as a reader must: glTF quaternions are unit only to float32 precision
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def trs(t=(0, 0, 0), q=(0, 0, 0, 1), s=(1, 1, 1)) -> np.ndarray:
    m = np.eye(4)
    m[:3, :3] = rot_matrix(q) * np.asarray(s, dtype=np.float64)
    m[:3, 3] = t
    return m


#: instances of the cube on node 3 (EXT_mesh_gpu_instancing)
INST_T = np.array([[100, 0, 0], [0, 50, -20], [-30, -40, 7.5]], dtype=np.float32)
INST_S = np.array([[1, 1, 1], [2, 2, 2], [0.5, 3, 1]], dtype=np.float32)
INST_R = np.array([quat((0, 0, 1), 0), quat((0, 1, 0), 90), quat((1, 1, 0), 30)], dtype=np.float32)


def build(buffer_uri: str | None = "embedded") -> tuple[dict, bytes]:
    """The glTF JSON and its binary buffer. Objects, in the order the importer groups them (by mesh):
    mesh 0 (cube, red material): node 0, then node 3's three instances; mesh 1 (tetrahedron, vertex
    colours): node 2 (child of the rotated node 1)."""
    blob = b""
    views, accessors = [], []

    def add(arr: np.ndarray, ctype: int, typ: str) -> int:
        nonlocal blob
        data = np.ascontiguousarray(arr).tobytes()
        views.append({"buffer": 0, "byteOffset": len(blob), "byteLength": len(data)})
        acc = {"bufferView": len(views) - 1, "componentType": ctype, "count": int(arr.shape[0]), "type": typ}
        if typ == "VEC3" and ctype == 5126:
            acc["min"] = arr.min(axis=0).tolist()
            acc["max"] = arr.max(axis=0).tolist()
        accessors.append(acc)
        blob += data + b"\0" * (-len(data) % 4)
        return len(accessors) - 1

    cube_pos = add(CUBE, 5126, "VEC3")
    cube_idx = add(CUBE_FACES.reshape(-1), 5123, "SCALAR")
    tet_pos = add(TETRA, 5126, "VEC3")
    tet_idx = add(TETRA_FACES.reshape(-1), 5123, "SCALAR")
    tet_col = add(np.array([[0, 0, 255, 255]] * 4, dtype=np.uint8), 5121, "VEC4")
    accessors[-1]["normalized"] = True
    it = add(INST_T, 5126, "VEC3")
    ir = add(INST_R, 5126, "VEC4")
    isc = add(INST_S, 5126, "VEC3")
    doc = {
        "asset": {"version": "2.0", "generator": "viewdist-testbed tests"},
        "extensionsUsed": ["EXT_mesh_gpu_instancing"],
        "scene": 0,
        "scenes": [{"nodes": [0, 1, 3]}],
        "nodes": [
            {"mesh": 0, "translation": [10, 0, 0], "scale": [2, 2, 2]},
            {"rotation": quat((0, 1, 0), 90), "translation": [0, 5, 0], "children": [2]},
            {"mesh": 1, "translation": [1, 0, 0]},
            {"mesh": 0, "translation": [0, 0, 1000],
             "extensions": {"EXT_mesh_gpu_instancing": {"attributes": {"TRANSLATION": it, "ROTATION": ir,
                                                                       "SCALE": isc}}}},
        ],
        "meshes": [
            {"primitives": [{"attributes": {"POSITION": cube_pos}, "indices": cube_idx, "material": 0}]},
            {"primitives": [{"attributes": {"POSITION": tet_pos, "COLOR_0": tet_col}, "indices": tet_idx}]},
        ],
        "materials": [{"pbrMetallicRoughness": {"baseColorFactor": [1.0, 0.0, 0.0, 1.0]}}],
        "accessors": accessors,
        "bufferViews": views,
        "buffers": [{"byteLength": len(blob)}],
    }
    return doc, blob


def expected() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(centres (5, 3), extents (5,), mesh ids (5,)) of the objects :func:`build` describes, computed
    here from the vertices and transforms directly: each object's box is the world box of its mesh's own
    box's 8 corners transformed (for the cube, its vertices)."""
    objs = [(CUBE, trs((10, 0, 0), s=(2, 2, 2)), 0)]
    base = trs((0, 0, 1000))
    for t, q, s in zip(INST_T, INST_R, INST_S):
        objs.append((CUBE, base @ trs(t, q, s), 0))
    objs.append((TETRA, trs((0, 5, 0), quat((0, 1, 0), 90)) @ trs((1, 0, 0)), 1))
    centres, extents, ids = [], [], []
    for v, m, k in objs:
        lo, hi = v.astype(np.float64).min(axis=0), v.astype(np.float64).max(axis=0)
        corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
        w = (m[:3, :3] @ corners.T).T + m[:3, 3]
        lo, hi = w.min(axis=0), w.max(axis=0)
        centres.append((lo + hi) / 2)
        extents.append((hi - lo).max())
        ids.append(k)
    return np.array(centres), np.array(extents), np.array(ids)


def write_glb(path: Path, doc: dict | None = None, blob: bytes | None = None) -> Path:
    if doc is None:
        doc, blob = build()
    js = json.dumps(doc).encode()
    js += b" " * (-len(js) % 4)
    blob = blob + b"\0" * (-len(blob) % 4)
    total = 12 + 8 + len(js) + 8 + len(blob)
    data = struct.pack("<4sII", b"glTF", 2, total) + struct.pack("<I4s", len(js), b"JSON") + js
    data += struct.pack("<I4s", len(blob), b"BIN\0") + blob
    Path(path).write_bytes(data)
    return Path(path)


def write_gltf(path: Path, external: bool = True) -> Path:
    """A .gltf with its buffer in a .bin file beside it (``external``) or as a data URI."""
    doc, blob = build()
    path = Path(path)
    if external:
        name = path.stem + ".bin"
        (path.parent / name).write_bytes(blob)
        doc["buffers"][0]["uri"] = name
    else:
        doc["buffers"][0]["uri"] = "data:application/octet-stream;base64," + base64.b64encode(blob).decode()
    path.write_text(json.dumps(doc))
    return path


def write_gltf_json(path: Path, doc: dict, blob: bytes | None = None, uri: str | None = None) -> Path:
    """``doc`` as a .gltf (JSON) file; ``blob``, if given, written beside it as ``uri`` (percent-decoded:
    the file a relative URI names) unless ``uri`` is a data: URI, which then holds it."""
    from urllib.parse import unquote

    path = Path(path)
    if blob is not None:
        if uri is None:
            uri = path.stem + ".bin"
        if not uri.startswith("data:"):
            target = path.parent / unquote(uri)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(blob)
        doc["buffers"][0]["uri"] = uri
    elif uri is not None:
        doc["buffers"][0]["uri"] = uri
    path.write_text(json.dumps(doc))
    return path
