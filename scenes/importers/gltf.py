"""glTF 2.0 (``.gltf`` with its buffers, or ``.glb``), read with pygltflib (the JSON and GLB containers,
external, embedded and data-URI buffers): every node with a mesh is an object, and so is every instance of a
node's ``EXT_mesh_gpu_instancing`` (its TRANSLATION / ROTATION / SCALE accessors, applied before the node's
world transform). An object's centre is the centre of its world-space bounding box (its mesh's vertices
transformed), its size the box's largest edge; its colour the material's base colour (else the mean
vertex colour). Each object keeps the mesh it instances and its transform, so the viewer draws the file's
own meshes (triangle primitives; points and lines are not drawn).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from ..errors import SceneError
from ..meshes import MeshSet

__all__ = ["read_gltf"]

INSTANCING = "EXT_mesh_gpu_instancing"
_DTYPES = {5120: "<i1", 5121: "<u1", 5122: "<i2", 5123: "<u2", 5125: "<u4", 5126: "<f4"}
_NORM = {5120: 127.0, 5121: 255.0, 5122: 32767.0, 5123: 65535.0}
_WIDTH = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
_SUPPORTED = {INSTANCING, "KHR_materials_unlit", "KHR_materials_emissive_strength", "KHR_texture_transform",
              "KHR_materials_specular", "KHR_materials_ior"}


class _Doc:
    """A loaded glTF: the pygltflib model and its buffers' bytes, with accessors decoded to numpy."""

    def __init__(self, path: Path):
        import pygltflib

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                g = pygltflib.GLTF2().load(str(path))
        except Exception as exc:  # the JSON, GLB header or chunks are broken
            raise SceneError(f"not a readable glTF file (truncated, or another format?): {_short(exc)}") from None
        if g is None or not isinstance(g.asset, pygltflib.Asset) or not str(g.asset.version or "").startswith("2"):
            raise SceneError("not a glTF 2.0 file (no asset.version 2.x)")
        required = [e for e in (g.extensionsRequired or []) if e not in _SUPPORTED]
        if required:
            raise SceneError(f"needs extension{'s' if len(required) > 1 else ''} this importer does not read: "
                             f"{', '.join(required)}")
        self.g = g
        self.buffers: list[bytes] = []
        for i, b in enumerate(g.buffers):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    data = g.get_data_from_buffer_uri(b.uri)
                except Exception:
                    data = None
            where = f"buffers[{i}]" + (f" ({b.uri[:60]})" if b.uri and not b.uri.startswith("data:") else "")
            if data is None:
                raise SceneError(f"{where}: missing (the file it names is not there)")
            if b.byteLength is not None and len(data) < b.byteLength:
                raise SceneError(f"{where}: holds {len(data)} bytes, the file declares {b.byteLength} (truncated?)")
            self.buffers.append(bytes(data))

    def accessor(self, i: int) -> np.ndarray:
        """Accessor ``i`` as (count, width) float64 (normalised integers scaled to 0..1 / -1..1)."""
        g = self.g
        try:
            a = g.accessors[i]
        except (IndexError, TypeError):
            raise SceneError(f"accessors[{i}]: no such accessor") from None
        where = f"accessors[{i}]"
        if a.sparse is not None:
            raise SceneError(f"{where}: sparse accessors are not supported")
        if a.componentType not in _DTYPES or a.type not in _WIDTH:
            raise SceneError(f"{where}: unknown componentType {a.componentType} or type {a.type!r}")
        dt = np.dtype(_DTYPES[a.componentType])
        width = _WIDTH[a.type]
        count = int(a.count or 0)
        if a.bufferView is None:
            out = np.zeros((count, width))
        else:
            try:
                bv = g.bufferViews[a.bufferView]
                buf = self.buffers[bv.buffer]
            except (IndexError, TypeError):
                raise SceneError(f"{where}: bufferView {a.bufferView} or its buffer does not exist") from None
            start = (bv.byteOffset or 0) + (a.byteOffset or 0)
            stride = bv.byteStride or dt.itemsize * width
            need = start + (count - 1) * stride + dt.itemsize * width if count else start
            end = (bv.byteOffset or 0) + (bv.byteLength or 0)
            if need > len(buf) or need > end:
                raise SceneError(f"{where}: reads past the end of its buffer (truncated file?)")
            raw = np.ndarray((count, width), dtype=dt, buffer=buf, offset=start, strides=(stride, dt.itemsize))
            out = raw.astype(np.float64)
            if a.normalized and a.componentType in _NORM:
                out /= _NORM[a.componentType]
                if dt.kind == "i":
                    np.maximum(out, -1.0, out=out)
        if not np.isfinite(out).all():
            raise SceneError(f"{where}: holds values that are not finite numbers")
        return out


def _short(exc: Exception) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text[:200]}" if text else type(exc).__name__


def _quat(q: np.ndarray) -> np.ndarray:
    """(M, 4) unit quaternions x, y, z, w -> (M, 3, 3) rotation matrices."""
    q = q / np.linalg.norm(q, axis=1, keepdims=True).clip(1e-300)
    x, y, z, w = q.T
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
        np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
        np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1),
    ], 1)


def _trs(t: np.ndarray, r: np.ndarray, s: np.ndarray) -> np.ndarray:
    """(M, 4, 4) matrices T R S from (M, 3) translations, (M, 4) quaternions, (M, 3) scales."""
    m = np.zeros((t.shape[0], 4, 4))
    m[:, :3, :3] = _quat(r) * s[:, None, :]
    m[:, :3, 3] = t
    m[:, 3, 3] = 1.0
    return m


def _local(node, k: int) -> np.ndarray:
    where = f"nodes[{k}]"
    try:
        if node.matrix:
            parts = [np.asarray(node.matrix, dtype=np.float64).reshape(4, 4).T]  # column-major
        else:
            parts = [np.asarray(node.translation or [0, 0, 0], dtype=np.float64).reshape(1, 3),
                     np.asarray(node.rotation or [0, 0, 0, 1], dtype=np.float64).reshape(1, 4),
                     np.asarray(node.scale or [1, 1, 1], dtype=np.float64).reshape(1, 3)]
    except (ValueError, TypeError):
        raise SceneError(f"{where}: a malformed transform") from None
    if not all(np.isfinite(p).all() for p in parts):
        raise SceneError(f"{where}: its transform is not finite")
    m = parts[0] if node.matrix else _trs(*parts)[0]
    if not np.isfinite(m).all():
        raise SceneError(f"{where}: its transform is not finite")
    return m


def _mesh_geometry(doc: _Doc, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Mesh ``k``'s triangles: (vertices (v, 3), faces (f, 3) int64, colour (4,) uint8 or None)."""
    g = doc.g
    try:
        mesh = g.meshes[k]
    except (IndexError, TypeError):
        raise SceneError(f"meshes[{k}]: no such mesh") from None
    verts, faces, colour, base = [], [], None, 0
    for p in mesh.primitives:
        pos = getattr(p.attributes, "POSITION", None)
        if pos is None:
            raise SceneError(f"meshes[{k}]: a primitive without POSITION")
        v = doc.accessor(pos)[:, :3]
        mode = 4 if p.mode is None else p.mode
        if p.indices is not None:
            idx = doc.accessor(p.indices)[:, 0].astype(np.int64)
        else:
            idx = np.arange(v.shape[0], dtype=np.int64)
        if idx.size and (idx.min() < 0 or idx.max() >= v.shape[0]):
            raise SceneError(f"meshes[{k}]: indices outside its vertices")
        if mode == 4:
            f = idx[: idx.size // 3 * 3].reshape(-1, 3)
        elif mode == 5:  # triangle strip
            f = np.stack([idx[:-2], idx[1:-1], idx[2:]], 1) if idx.size >= 3 else np.zeros((0, 3), np.int64)
            f[1::2] = f[1::2][:, [1, 0, 2]]
        elif mode == 6:  # triangle fan
            f = np.stack([np.full(idx.size - 2, idx[0]), idx[1:-1], idx[2:]], 1) if idx.size >= 3 \
                else np.zeros((0, 3), np.int64)
        else:  # points, lines: bounds only
            f = np.zeros((0, 3), np.int64)
        verts.append(v)
        faces.append(f + base)
        base += v.shape[0]
        if colour is None:
            colour = _primitive_colour(doc, p)
    if not verts or base == 0:
        raise SceneError(f"meshes[{k}]: no vertices")
    return np.concatenate(verts), np.concatenate(faces), colour


def _primitive_colour(doc: _Doc, p) -> np.ndarray | None:
    g = doc.g
    if p.material is not None:
        try:
            pbr = g.materials[p.material].pbrMetallicRoughness
        except (IndexError, TypeError):
            raise SceneError(f"materials[{p.material}]: no such material") from None
        if pbr is not None and pbr.baseColorFactor:
            c = np.asarray(pbr.baseColorFactor, dtype=np.float64)
            if c.shape == (4,) and np.isfinite(c).all():
                return _linear_to_srgb8(c)
    col = getattr(p.attributes, "COLOR_0", None)
    if col is not None:
        c = doc.accessor(col)
        mean = c.mean(axis=0)
        rgba = np.ones(4)
        rgba[: mean.size] = mean[:4]
        return _linear_to_srgb8(rgba)
    return None


def _linear_to_srgb8(c: np.ndarray) -> np.ndarray:
    """glTF colours are linear: (4,) RGBA in 0..1 -> sRGB-encoded 0..255 (alpha linear)."""
    c = np.clip(c, 0.0, 1.0)
    rgb = np.where(c[:3] <= 0.0031308, 12.92 * c[:3], 1.055 * c[:3] ** (1 / 2.4) - 0.055)
    return np.rint(np.append(rgb, c[3]) * 255.0).astype(np.uint8)


def _instances(doc: _Doc, node, k: int) -> np.ndarray | None:
    ext = (node.extensions or {}).get(INSTANCING)
    if ext is None:
        return None
    attrs = (ext or {}).get("attributes") or {}
    if not attrs:
        raise SceneError(f"nodes[{k}].extensions.{INSTANCING}: no attributes")
    cols = {name: doc.accessor(acc) for name, acc in attrs.items() if name in ("TRANSLATION", "ROTATION", "SCALE")}
    counts = {a.shape[0] for a in cols.values()}
    if len(counts) != 1:
        raise SceneError(f"nodes[{k}].extensions.{INSTANCING}: attributes of different lengths")
    m = counts.pop()
    t = cols.get("TRANSLATION", np.zeros((m, 3)))[:, :3]
    r = cols.get("ROTATION", np.tile([0.0, 0.0, 0.0, 1.0], (m, 1)))[:, :4]
    s = cols.get("SCALE", np.ones((m, 3)))[:, :3]
    return _trs(t, r, s)


def _walk(doc: _Doc):
    """(node index, world matrix (4, 4)) of every node of the default scene (all roots if none)."""
    g = doc.g
    if g.scenes:
        s = g.scene if g.scene is not None else 0
        try:
            roots = list(g.scenes[s].nodes or [])
        except (IndexError, TypeError):
            raise SceneError(f"scene {s}: no such scene") from None
    else:
        children = {c for n in g.nodes for c in (n.children or [])}
        roots = [i for i in range(len(g.nodes)) if i not in children]
    stack = [(i, np.eye(4), 0) for i in reversed(roots)]
    seen = 0
    while stack:
        i, parent, depth = stack.pop()
        if depth > 1000 or seen > 10 * max(1, len(g.nodes)) + 1000:
            raise SceneError("the node hierarchy has a cycle")
        try:
            node = g.nodes[i]
        except (IndexError, TypeError):
            raise SceneError(f"nodes[{i}]: no such node") from None
        seen += 1
        world = parent @ _local(node, i)
        yield i, node, world
        for c in reversed(node.children or []):
            stack.append((c, world, depth + 1))


def _bounds(verts: np.ndarray, mats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """World-space (lo, hi) (M, 3) of ``verts`` (v, 3) under each of ``mats`` (M, 3, 4), in chunks."""
    m = mats.shape[0]
    lo = np.empty((m, 3))
    hi = np.empty((m, 3))
    step = max(1, 1_000_000 // max(1, verts.shape[0]))  # (step, v, 3) float64 temporaries: ~24 MB
    for a in range(0, m, step):
        b = min(m, a + step)
        w = np.einsum("mij,vj->mvi", mats[a:b, :, :3], verts) + mats[a:b, None, :, 3]
        lo[a:b] = w.min(axis=1)
        hi[a:b] = w.max(axis=1)
    return lo, hi


def read_gltf(path: Path, mapping: dict[str, str]) -> dict:
    """The arrays of a glTF scene: ``centres``, ``extents``, ``colours`` (or None) and ``meshes``."""
    if mapping:
        raise SceneError("--columns applies to tables and point clouds, not glTF", "--columns")
    doc = _Doc(path)
    per_mesh: dict[int, list[np.ndarray]] = {}
    for i, node, world in _walk(doc):
        if node.mesh is None:
            continue
        inst = _instances(doc, node, i)
        mats = world[None] if inst is None else world[None] @ inst
        if not np.isfinite(mats).all():
            raise SceneError(f"nodes[{i}]: its world transform is not finite")
        per_mesh.setdefault(int(node.mesh), []).append(mats[:, :3, :])
    if not per_mesh:
        raise SceneError("has no mesh nodes (no objects to import)")
    verts, faces, vstart, fstart, ids, xforms, colours, centres, extents = [], [], [0], [0], [], [], [], [], []
    any_colour = False
    for k, (mesh_index, mats) in enumerate(sorted(per_mesh.items())):
        v, f, colour = _mesh_geometry(doc, mesh_index)
        mats = np.concatenate(mats)
        lo, hi = _bounds(v, mats)
        centres.append((lo + hi) / 2)
        extents.append((hi - lo).max(axis=1))
        verts.append(v.astype(np.float32))
        faces.append(f.astype(np.int32))
        vstart.append(vstart[-1] + v.shape[0])
        fstart.append(fstart[-1] + f.shape[0])
        ids.append(np.full(mats.shape[0], k, dtype=np.int32))
        xforms.append(mats)
        any_colour |= colour is not None
        colours.append(np.tile(colour if colour is not None else np.array([200, 200, 200, 255], np.uint8),
                               (mats.shape[0], 1)))
    meshes = MeshSet(vertices=np.concatenate(verts), faces=np.concatenate(faces),
                     vertex_start=np.array(vstart, dtype=np.int64), face_start=np.array(fstart, dtype=np.int64),
                     ids=np.concatenate(ids), transforms=np.concatenate(xforms))
    return {"centres": np.concatenate(centres), "radii": None, "extents": np.concatenate(extents),
            "colours": np.concatenate(colours) if any_colour else None, "meshes": meshes}
