"""glTF 2.0 (``.gltf`` with its buffers, or ``.glb``): every node with a mesh is an object, and so is every
instance of a node's ``EXT_mesh_gpu_instancing`` (its TRANSLATION / ROTATION / SCALE accessors, applied before
the node's world transform). An object's box is the world-space box of its mesh's own bounding box (the box of
that box's 8 corners transformed: O(1) an object, whatever the mesh's size); its centre is the box's centre,
its size the box's largest edge; its colour the material's base colour (else the mean vertex colour). Each
object keeps the mesh it instances and its transform, so the viewer draws the file's own meshes (triangle
primitives; points and lines are not drawn). ``MSFT_lod`` node LODs and mesh nodes under mesh nodes (HLOD
proxies) are read by :mod:`.gltf_lod`.

Reading: the GLB container (header and chunks) with pygltflib; the JSON with :mod:`json` into plain dicts
(pygltflib's dataclass decoding builds Python objects field by field: far too slow for a file of many nodes),
every value the importer uses checked against the spec before it is used (an index is a whole number in
range, a count, offset or stride a whole number >= 0, an accessor's type the one its use needs, every
accessor inside its bufferView and every bufferView inside its buffer); every number through one reader,
:mod:`.gltf_numbers` (``10**400`` in a transform is refused naming the node's field, never an overflow).
Buffers come from the GLB binary chunk, a ``data:`` URI (decoded by :mod:`urllib.request`) or a relative,
percent-encoded URI resolved against the glTF file's folder; a URI that leaves that folder (``../``, an
absolute path, a link pointing out) or names another scheme is refused. Images are never read. Memory is
estimated before anything large is allocated (:func:`viewer.system.memory.available_bytes`).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np

from viewer.terminal.text import clip

from ..errors import SceneError
from ..limits import MAX_N
from ..meshes import MeshSet
from ._build import need_memory as _need
from .gltf_numbers import numbers, real, show, whole, whole_number

__all__ = ["read_gltf"]

INSTANCING = "EXT_mesh_gpu_instancing"
_DTYPES = {5120: "<i1", 5121: "<u1", 5122: "<i2", 5123: "<u2", 5125: "<u4", 5126: "<f4"}
_CNAMES = {5120: "BYTE", 5121: "UNSIGNED_BYTE", 5122: "SHORT", 5123: "UNSIGNED_SHORT", 5125: "UNSIGNED_INT",
           5126: "FLOAT"}
_NORM = {5120: 127.0, 5121: 255.0, 5122: 32767.0, 5123: 65535.0}
_WIDTH = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
_SUPPORTED = {INSTANCING, "MSFT_lod", "KHR_materials_unlit", "KHR_materials_emissive_strength", "KHR_texture_transform",
              "KHR_materials_specular", "KHR_materials_ior"}
_FLOAT = (5126,)
_INDEX = (5121, 5123, 5125)
_COLOUR = (5126, 5121, 5123)
_ANY = tuple(_DTYPES)
#: bytes of memory an imported object (a mesh node or an instance) costs at the peak of an import: its
#: transforms (instance, world, 3x4 kept, float64), its box, colour, id, then the scene built from them and
#: written (measured: 395 for 2e6 rotated, scaled instances, the import and the write)
_PER_OBJECT = 512
#: bytes a mesh's vertex costs at the peak (its decoded float64 position, the mesh's float64 and float32 copies,
#: the float32 table of every mesh) and a vertex index (int64 read, its faces, their int32 copies)
_PER_VERTEX = 72
_PER_INDEX = 40
#: bytes an accessor's value costs while decoded (float64 out, the float64 copy of a converted read, slack)
_PER_VALUE = 24


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {clip(text, 200)}" if text else type(exc).__name__


class _Doc:
    """A loaded glTF: its JSON as dicts, its buffers read on demand, its accessors decoded to numpy (each once)."""

    def __init__(self, path: Path):
        self.path = path
        try:
            size = path.stat().st_size
        except OSError as exc:
            raise SceneError(f"cannot be read: {exc.strerror or exc}") from None
        _need(2.0 * size, f"reading this {size:,}-byte file")
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise SceneError(f"cannot be read: {exc.strerror or exc}") from None
        self.blob: bytes | None = None
        if raw[:4] == b"glTF":
            text = self._glb(raw)
        else:
            try:
                text = raw.decode("utf-8-sig")
            except UnicodeDecodeError:
                raise SceneError("not a readable glTF file (truncated, or another format?): not UTF-8 JSON text, "
                                 "nor a GLB container") from None
        del raw
        try:
            js = json.loads(text)
        except ValueError as exc:
            raise SceneError(f"not a readable glTF file (truncated, or another format?): {_short(exc)}") from None
        except RecursionError:
            raise SceneError("not a readable glTF file: its JSON is nested too deeply") from None
        if not isinstance(js, dict):
            raise SceneError("not a readable glTF file: its JSON is not an object")
        self.js = js
        asset = js.get("asset")
        version = asset.get("version") if isinstance(asset, dict) else None
        if not isinstance(version, str) or not version.startswith("2"):
            raise SceneError("not a glTF 2.0 file (no asset.version 2.x)")
        req = js.get("extensionsRequired", [])
        if not isinstance(req, list) or not all(isinstance(e, str) for e in req):
            raise SceneError(f"extensionsRequired: must be a list of names, got {show(req)}")
        required = [e for e in req if e not in _SUPPORTED]
        if required:
            raise SceneError(f"needs extension{'s' if len(required) > 1 else ''} this importer does not read: "
                             f"{', '.join(required)}")
        self.nodes = self._list("nodes")
        self.meshes = self._list("meshes")
        self.accessors = self._list("accessors")
        self.views = self._list("bufferViews")
        self.buffer_specs = self._list("buffers")
        self.materials = self._list("materials")
        self.scenes = self._list("scenes")
        self._buffers: dict[int, bytes] = {}
        self._decoded: dict[int, np.ndarray] = {}
        self._checked: dict[tuple, tuple] = {}  # Doc.checked, by (accessor, types, componentTypes)

    def _glb(self, raw: bytes) -> str:
        """The JSON chunk's text of a GLB container, read by pygltflib; the binary chunk kept as ``blob``."""
        import pygltflib

        class _Container(pygltflib.GLTF2):
            @classmethod
            def from_json(cls, s, **kw):  # keep the JSON text: parsed below with json, not into dataclasses
                obj = cls()
                obj._json_text = s
                return obj

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                obj = _Container.load_from_bytes(raw)
            text = obj._json_text
        except Exception as exc:  # the GLB header or chunks are broken
            raise SceneError(f"not a readable glTF file (truncated, or another format?): {_short(exc)}") from None
        self.blob = obj.binary_blob()
        return text

    def _list(self, key: str) -> list:
        v = self.js.get(key, [])
        if not isinstance(v, list):
            raise SceneError(f"{key}: must be a list, got {show(v)}")
        return v

    def ref(self, v, array: list, what: str, where: str) -> int:
        """``v`` as an index into the file's ``what`` (e.g. "meshes"): a whole number 0 .. len - 1."""
        n, k = len(array), whole(v)
        if k is None or not 0 <= k < n:
            have = f"0..{n - 1}" if n else "none"
            raise SceneError(f"{where}: {show(v)} is not an index into {what} (the file has {n}: {have})")
        return k

    def item(self, array: list, k: int, what: str) -> dict:
        obj = array[k]
        if not isinstance(obj, dict):
            raise SceneError(f"{what}[{k}]: must be an object, got {show(obj)}")
        return obj

    # ------------------------------------------------------------------ buffers

    def buffer(self, i: int) -> bytes:
        """Buffer ``i``'s bytes (exactly its byteLength), read once."""
        if i in self._buffers:
            return self._buffers[i]
        b = self.item(self.buffer_specs, i, "buffers")
        length = whole_number(b.get("byteLength"), f"buffers[{i}].byteLength", lo=1)
        uri = b.get("uri")
        if uri is not None and not isinstance(uri, str):
            raise SceneError(f"buffers[{i}].uri: must be a string, got {show(uri)}")
        where = f"buffers[{i}]" + (f" ({clip(uri, 60)})" if uri and not uri[:5].lower() == "data:" else "")
        _need(2.0 * length, f"{where}: its {length:,} bytes")
        if uri is None:
            if i != 0 or self.blob is None:
                raise SceneError(f"{where}: missing (no uri, and no GLB binary chunk holds it)")
            data = self.blob
        elif uri[:5].lower() == "data:":
            data = _data_uri(uri, where)
        else:
            data = _relative_file(self.path.parent, uri, where, length)
        if len(data) < length:
            raise SceneError(f"{where}: holds {len(data)} bytes, the file declares {length} (truncated?)")
        data = bytes(data[:length]) if len(data) > length else bytes(data)
        self._buffers[i] = data
        return data

    def view(self, j: int, where: str) -> tuple[bytes, int, int, int | None]:
        """bufferViews[j] checked: (its buffer's bytes, byteOffset, byteLength, byteStride or None)."""
        j = self.ref(j, self.views, "bufferViews", where)
        bv = self.item(self.views, j, "bufferViews")
        vw = f"bufferViews[{j}]"
        i = self.ref(bv.get("buffer"), self.buffer_specs, "buffers", f"{vw}.buffer")
        off = whole_number(bv.get("byteOffset", 0), f"{vw}.byteOffset")
        length = whole_number(bv.get("byteLength"), f"{vw}.byteLength", lo=1)
        stride = bv.get("byteStride")
        if stride is not None:
            stride = whole_number(stride, f"{vw}.byteStride", lo=4)
            if stride > 252 or stride % 4:
                raise SceneError(f"{vw}.byteStride: must be a multiple of 4 from 4 to 252, got {stride}")
        declared = self.item(self.buffer_specs, i, "buffers").get("byteLength")
        declared = whole_number(declared, f"buffers[{i}].byteLength", lo=1)
        if off + length > declared:
            raise SceneError(f"{vw}: bytes {off}..{off + length} lie past the end of buffers[{i}] "
                             f"({declared} bytes)")
        return self.buffer(i), off, length, stride

    # ------------------------------------------------------------------ accessors

    def describe(self, i: int, where: str) -> tuple[dict, str, int, int]:
        """accessors[i] checked, not read: (the accessor, its type, its componentType, its count)."""
        i = self.ref(i, self.accessors, "accessors", where)
        a = self.item(self.accessors, i, "accessors")
        aw = f"accessors[{i}]"
        raw_ctype, typ = a.get("componentType"), a.get("type")
        ctype = whole(raw_ctype)
        if ctype not in _DTYPES:
            raise SceneError(f"{aw}.componentType: unknown, {show(raw_ctype)} (known: "
                             f"{', '.join(str(c) for c in _DTYPES)})")
        if not isinstance(typ, str) or typ not in _WIDTH:
            raise SceneError(f"{aw}.type: unknown, {show(typ)} (known: {', '.join(_WIDTH)})")
        count = whole_number(a.get("count"), f"{aw}.count", lo=1)
        if a.get("sparse") is not None:
            raise SceneError(f"{aw}: sparse accessors are not supported")
        return a, typ, ctype, count

    def checked(self, i, where: str, types: tuple[str, ...], ctypes: tuple[int, ...], use: str) -> tuple:
        """The accessor ``i`` that ``where`` names checked, nothing read: its type is one of ``types`` and its
        componentType one of ``ctypes`` (what ``use`` needs), its data lies inside its bufferView, and its
        decoded values fit the memory this process may use. Returns ``(i, accessor, type, dtype, count, width,
        placement)``, ``placement`` None (no bufferView: zeros) or ``(buffer, offset, step)``."""
        a, typ, ctype, count = self.describe(i, where)
        i = self.ref(i, self.accessors, "accessors", where)
        aw = f"accessors[{i}]"
        if typ not in types or ctype not in ctypes:
            want = " or ".join(types) + " of " + " / ".join(_CNAMES[c] for c in ctypes)
            raise SceneError(f"{where}: {aw} is {typ} of {_CNAMES[ctype]}; {use} must be {want}")
        dt = np.dtype(_DTYPES[ctype])
        width = _WIDTH[typ]
        elem = dt.itemsize * width
        need_bytes, what = float(count) * width * _PER_VALUE, f"{aw}: {count:,} {typ} values"
        placement = None
        if a.get("bufferView") is not None:
            buf, view_off, view_len, stride = self.view(a.get("bufferView"), f"{aw}.bufferView")
            off = whole_number(a.get("byteOffset", 0), f"{aw}.byteOffset")
            if stride is not None and stride < elem:
                raise SceneError(f"{aw}: its bufferView's byteStride {stride} is smaller than one {typ} of "
                                 f"{_CNAMES[ctype]} ({elem} bytes)")
            step = stride or elem
            need = off + (count - 1) * step + elem
            if need > view_len:
                raise SceneError(f"{aw}: {count:,} values of {elem} bytes every {step} from byte {off} need "
                                 f"{need:,} bytes; bufferViews[{whole(a['bufferView'])}] holds {view_len:,}")
            placement = (buf, view_off + off, step)
        _need(need_bytes, what)
        self._checked[(i, types, ctypes)] = out = (i, a, typ, ctype, count, width, placement)
        return out

    def accessor(self, i, where: str, types: tuple[str, ...], ctypes: tuple[int, ...], use: str,
                 normalize: bool = False) -> np.ndarray:
        """The accessor ``i`` that ``where`` names, as (count, width) float64 (normalised integers scaled to
        0..1 / -1..1; ``normalize``: integers always are), once :meth:`checked`."""
        i, a, typ, ctype, count, width, placement = self.checked(i, where, types, ctypes, use)
        if i in self._decoded:
            return self._decoded[i]
        aw = f"accessors[{i}]"
        dt = np.dtype(_DTYPES[ctype])
        if placement is None:  # no data: zeros, as the spec says
            out = np.zeros((count, width))
        else:
            buf, at, step = placement
            raw = np.ndarray((count, width), dtype=dt, buffer=buf, offset=at, strides=(step, dt.itemsize))
            out = raw.astype(np.float64)
            if ctype in _NORM and (normalize or a.get("normalized") is True):
                out /= _NORM[ctype]
                if dt.kind == "i":
                    np.maximum(out, -1.0, out=out)
        if not np.isfinite(out).all():
            raise SceneError(f"{aw}: holds values that are not finite numbers")
        self._decoded[i] = out
        return out


def _data_uri(uri: str, where: str) -> bytes:
    """The bytes of a ``data:`` URI (base64 or percent-encoded, any media type), decoded by urllib."""
    import urllib.request

    try:
        with urllib.request.urlopen(uri) as fh:  # a data: URL: decoded in memory, nothing is fetched
            return fh.read()
    except (ValueError, OSError) as exc:
        raise SceneError(f"{where}: a data: URI that cannot be decoded ({_short(exc)})") from None


def _relative_file(folder: Path, uri: str, where: str, length: int) -> bytes:
    """The first ``length`` bytes of the file a relative URI names, resolved against ``folder`` (the glTF
    file's): refused if it is not a relative path, or leaves the folder."""
    from urllib.parse import unquote, urlsplit

    try:
        parts = urlsplit(uri)
    except ValueError as exc:
        raise SceneError(f"{where}: not a URI ({_short(exc)})") from None
    if parts.scheme or parts.netloc:
        raise SceneError(f"{where}: the uri names {parts.scheme + ':' if parts.scheme else 'a host'}; only a "
                         "relative path (a file in the glTF file's folder) or a data: URI is read")
    if parts.query or parts.fragment:
        raise SceneError(f"{where}: the uri has a '?' or '#' part; only a relative path or a data: URI is read")
    rel = unquote(parts.path)
    if not rel or rel.startswith("/") or "\0" in rel:
        raise SceneError(f"{where}: the uri is {'an absolute' if rel.startswith('/') else 'not a'} path; only "
                         "a relative path (a file in the glTF file's folder) or a data: URI is read")
    try:
        base = folder.resolve()
        target = (base / rel).resolve()
    except (OSError, RuntimeError) as exc:  # a loop of links, a name too long
        raise SceneError(f"{where}: cannot be resolved ({_short(exc)})") from None
    if not target.is_relative_to(base):
        raise SceneError(f"{where}: the uri leads out of the glTF file's folder ({base}); a buffer is read only "
                         "from that folder or below it")
    if not target.exists():
        raise SceneError(f"{where}: missing (the file it names is not there)")
    if not target.is_file():
        raise SceneError(f"{where}: names something that is not a regular file (a folder, a pipe, a device?)")
    try:
        with open(target, "rb") as fh:
            return fh.read(length)
    except OSError as exc:
        raise SceneError(f"{where}: cannot be read: {exc.strerror or exc}") from None


def _quat(q: np.ndarray) -> np.ndarray:
    """(M, 4) quaternions x, y, z, w (unit only to float32 precision, or not at all) -> (M, 3, 3) rotation
    matrices. A quaternion whose squares overflow or underflow (1e300 or 1e-320 a component) is scaled by its
    largest component first, so it is normalised as a smaller one is; all zeros stays the identity."""
    norm = np.linalg.norm(q, axis=1, keepdims=True)
    odd = (~np.isfinite(norm) | (norm < 1e-150))[:, 0]
    if odd.any():
        big = np.abs(q[odd]).max(axis=1, keepdims=True)
        q = q.copy()
        q[odd] = q[odd] / np.where(big > 0, big, 1.0)
        norm[odd] = np.linalg.norm(q[odd], axis=1, keepdims=True)
    q = q / norm.clip(1e-300)
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


_NO_ROTATION = [0.0, 0.0, 0.0, 1.0]


def _local_matrices(doc: _Doc, order: list[int]) -> np.ndarray:
    """(len(order), 4, 4): the local matrix of each node of ``order`` (the identity where it has no transform),
    checked, built in one batch."""
    out = np.zeros((len(order), 4, 4))
    out[:, [0, 1, 2, 3], [0, 1, 2, 3]] = 1.0
    mat_rows, mats = [], []
    trs_rows, ts, rs, ss = [], [], [], []
    zero, one = [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]
    for j, k in enumerate(order):
        node = doc.nodes[k]
        if node.get("matrix") is not None:
            mat_rows.append(j)
            mats.append(numbers(node["matrix"], f"nodes[{k}].matrix", (16,)))
            continue
        t, r, s = node.get("translation"), node.get("rotation"), node.get("scale")
        if t is None and r is None and s is None:
            continue  # the identity
        trs_rows.append(j)
        ts.append(zero if t is None else numbers(t, f"nodes[{k}].translation", (3,)))
        rs.append(_NO_ROTATION if r is None else numbers(r, f"nodes[{k}].rotation", (4,)))
        ss.append(one if s is None else numbers(s, f"nodes[{k}].scale", (3,)))
    for rows, m in ((mat_rows, np.array(mats, dtype=np.float64).reshape(-1, 4, 4).transpose(0, 2, 1)),  # column-major
                    (trs_rows, _trs(np.array(ts, dtype=np.float64).reshape(-1, 3),
                                    np.array(rs, dtype=np.float64).reshape(-1, 4),
                                    np.array(ss, dtype=np.float64).reshape(-1, 3)))):
        bad = ~np.isfinite(m).all(axis=(1, 2))
        if bad.any():
            raise SceneError(f"nodes[{order[rows[int(np.flatnonzero(bad)[0])]]}]: its transform is not finite")
        out[rows] = m
    return out


def _walk(doc: _Doc, parents: dict | None = None) -> list[tuple[int, dict, np.ndarray]]:
    """(node index, node, world matrix (4, 4)) of every node of the default scene (all roots if none), in
    depth-first order. Hierarchies of any depth; a node reached twice (a cycle, or two parents) is refused.
    ``parents``, when given, is filled with {node index: its parent node's index, -1 for a root}."""
    nodes = doc.nodes
    if doc.scenes:
        s = doc.js.get("scene", 0)
        s = doc.ref(s, doc.scenes, "scenes", "scene")
        scene = doc.item(doc.scenes, s, "scenes")
        roots = scene.get("nodes", [])
        if not isinstance(roots, list):
            raise SceneError(f"scenes[{s}].nodes: must be a list of node indices, got {show(roots)}")
        roots = [doc.ref(r, nodes, "nodes", f"scenes[{s}].nodes[{j}]") for j, r in enumerate(roots)]
    else:
        roots = None
    kids: list[list[int]] = []
    for k in range(len(nodes)):
        node = doc.item(nodes, k, "nodes")
        ch = node.get("children", [])
        if not isinstance(ch, list):
            raise SceneError(f"nodes[{k}].children: must be a list of node indices, got {show(ch)}")
        kids.append([doc.ref(c, nodes, "nodes", f"nodes[{k}].children[{j}]") for j, c in enumerate(ch)])
    if roots is None:
        is_child = bytearray(len(nodes))
        for ch in kids:
            for c in ch:
                is_child[c] = 1
        roots = [k for k in range(len(nodes)) if not is_child[k]]
    order, parent, depth = [], [], []  # per visited node: its index, its parent's row in order, its depth
    seen = bytearray(len(nodes))
    stack = [(r, -1, 0) for r in reversed(roots)]
    while stack:
        k, p, d = stack.pop()
        if seen[k]:
            raise SceneError(f"nodes[{k}]: reached twice from the scene's roots (the node hierarchy has a cycle, "
                             "or a node with two parents; glTF's is a set of trees)")
        seen[k] = 1
        row = len(order)
        order.append(k)
        parent.append(p)
        depth.append(d)
        stack.extend((c, row, d + 1) for c in reversed(kids[k]))
    if parents is not None:
        parents.update((k, order[p] if p >= 0 else -1) for k, p in zip(order, parent))
    world = _local_matrices(doc, order)
    if order:
        parent_rows, depths = np.array(parent), np.array(depth)
        by_depth = np.argsort(depths, kind="stable")
        cuts = np.flatnonzero(np.diff(depths[by_depth])) + 1
        for rows in np.split(by_depth, cuts)[1:]:  # level by level (roots keep their local matrix)
            world[rows] = world[parent_rows[rows]] @ world[rows]
        bad = ~np.isfinite(world).all(axis=(1, 2))  # products of finite matrices can overflow
        if bad.any():
            raise SceneError(f"nodes[{order[int(np.flatnonzero(bad)[0])]}]: its world transform is not finite")
    return [(k, nodes[k], world[j]) for j, k in enumerate(order)]


def _mesh_geometry(doc: _Doc, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Mesh ``k``'s triangles: (vertices (v, 3), faces (f, 3) int64, colour (4,) uint8 or None)."""
    mesh = doc.item(doc.meshes, k, "meshes")
    prims = mesh.get("primitives")
    if not isinstance(prims, list) or not prims:
        raise SceneError(f"meshes[{k}].primitives: must be a non-empty list, got {show(prims)}")
    verts, faces, colour, base = [], [], None, 0
    for j, p in enumerate(prims):
        where = f"meshes[{k}].primitives[{j}]"
        if not isinstance(p, dict):
            raise SceneError(f"{where}: must be an object, got {show(p)}")
        attrs = p.get("attributes")
        if not isinstance(attrs, dict):
            raise SceneError(f"{where}.attributes: must be an object mapping names to accessors, got {show(attrs)}")
        if "POSITION" not in attrs:
            raise SceneError(f"meshes[{k}]: a primitive without POSITION")
        v = doc.accessor(attrs["POSITION"], f"{where}.attributes.POSITION", ("VEC3",), _FLOAT, "POSITION")
        mode = whole(p.get("mode", 4))
        if mode is None or not 0 <= mode <= 6:
            raise SceneError(f"{where}.mode: must be 0..6, got {show(p.get('mode'))}")
        if p.get("indices") is not None:
            idx = doc.accessor(p["indices"], f"{where}.indices", ("SCALAR",), _INDEX, "indices")[:, 0]
            idx = idx.astype(np.int64)
        else:
            idx = np.arange(v.shape[0], dtype=np.int64)
        if idx.size and idx.max() >= v.shape[0]:
            raise SceneError(f"meshes[{k}]: indices outside its vertices (index {int(idx.max())} of "
                             f"{v.shape[0]} vertices)")
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
            colour = _primitive_colour(doc, p, attrs, where)
    return np.concatenate(verts), np.concatenate(faces), colour


def _geometry_values(doc: _Doc, k: int) -> tuple[int, int]:
    """(vertices, indices) that decoding mesh ``k``'s primitives makes, from their accessors' counts, nothing
    read (each accessor :meth:`_Doc.checked` first, so a bad one is named as its decoding would name it): each
    primitive's POSITION and indices are copied into the mesh's arrays, however many primitives name one
    accessor. A primitive that is not well formed counts nothing here: :func:`_mesh_geometry` says what is
    wrong with it."""
    mesh = doc.item(doc.meshes, k, "meshes")
    prims = mesh.get("primitives")
    v = i = 0
    for j, p in enumerate(prims if isinstance(prims, list) else ()):
        attrs = p.get("attributes") if isinstance(p, dict) else None
        if not isinstance(attrs, dict) or "POSITION" not in attrs:
            continue
        where = f"meshes[{k}].primitives[{j}]"
        n = doc.checked(attrs["POSITION"], f"{where}.attributes.POSITION", ("VEC3",), _FLOAT, "POSITION")[4]
        v += n
        i += n if p.get("indices") is None else \
            doc.checked(p["indices"], f"{where}.indices", ("SCALAR",), _INDEX, "indices")[4]
    return v, i


def _primitive_colour(doc: _Doc, p: dict, attrs: dict, where: str) -> np.ndarray | None:
    if p.get("material") is not None:
        m = doc.ref(p["material"], doc.materials, "materials", f"{where}.material")
        pbr = doc.item(doc.materials, m, "materials").get("pbrMetallicRoughness")
        c = pbr.get("baseColorFactor") if isinstance(pbr, dict) else None
        factor = [real(x) for x in c] if isinstance(c, list) and len(c) == 4 else None
        if factor is not None and None not in factor:  # else (not 4 finite numbers) as if not given
            return _linear_to_srgb8(np.array(factor))
    if attrs.get("COLOR_0") is not None:
        c = doc.accessor(attrs["COLOR_0"], f"{where}.attributes.COLOR_0", ("VEC3", "VEC4"), _COLOUR, "COLOR_0",
                         normalize=True)
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


#: the instancing attributes this importer reads: (types, componentTypes)
_INSTANCE_ATTRS = {"TRANSLATION": (("VEC3",), _ANY), "ROTATION": (("VEC4",), (5126, 5120, 5122)),
                   "SCALE": (("VEC3",), _ANY)}


def _instance_attrs(doc: _Doc, node: dict, k: int) -> dict | None:
    """The checked ``attributes`` of a node's EXT_mesh_gpu_instancing ({name: accessor index}), or None."""
    exts = node.get("extensions")
    if exts is None:
        return None
    if not isinstance(exts, dict):
        raise SceneError(f"nodes[{k}].extensions: must be an object, got {show(exts)}")
    if INSTANCING not in exts:
        return None
    where = f"nodes[{k}].extensions.{INSTANCING}"
    ext = exts[INSTANCING]
    if not isinstance(ext, dict):
        raise SceneError(f"{where}: must be an object, got {show(ext)}")
    attrs = ext.get("attributes")
    if not isinstance(attrs, dict):
        raise SceneError(f"{where}.attributes: must be an object mapping TRANSLATION / ROTATION / SCALE to "
                         f"accessors, got {show(attrs)}")
    if not attrs:
        raise SceneError(f"{where}: no attributes")
    return attrs


def _instance_count(doc: _Doc, attrs: dict, k: int) -> int:
    """How many instances a node's checked instancing attributes place (their common count), not reading them."""
    where = f"nodes[{k}].extensions.{INSTANCING}.attributes"
    counts = {}
    for name, acc in attrs.items():
        counts[name] = doc.describe(acc, f"{where}.{name}")[3]
    if len(set(counts.values())) != 1:
        raise SceneError(f"nodes[{k}].extensions.{INSTANCING}: attributes of different lengths "
                         f"({', '.join(f'{n} {c}' for n, c in counts.items())})")
    return next(iter(counts.values()))


def _instances(doc: _Doc, attrs: dict, k: int, m: int) -> np.ndarray:
    """(m, 4, 4) instance matrices of a node's checked instancing attributes."""
    where = f"nodes[{k}].extensions.{INSTANCING}.attributes"
    cols = {name: doc.accessor(attrs[name], f"{where}.{name}", *_INSTANCE_ATTRS[name], name)
            for name in _INSTANCE_ATTRS if name in attrs}
    t = cols["TRANSLATION"] if "TRANSLATION" in cols else np.zeros((m, 3))
    r = cols["ROTATION"] if "ROTATION" in cols else np.tile(_NO_ROTATION, (m, 1))
    s = cols["SCALE"] if "SCALE" in cols else np.ones((m, 3))
    return _trs(t, r, s)


def _bounds(verts: np.ndarray, mats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """World-space (lo, hi) (M, 3): the box of the 8 corners of ``verts``' (v, 3) own box under each of
    ``mats`` (M, 3, 4); O(M), whatever v."""
    lo_v, hi_v = verts.min(axis=0), verts.max(axis=0)
    corners = np.array([[(lo_v, hi_v)[(c >> a) & 1][a] for a in range(3)] for c in range(8)])
    m = mats.shape[0]
    lo = np.empty((m, 3))
    hi = np.empty((m, 3))
    step = 1 << 16  # (step, 8, 3) float64 temporaries: 12 MB
    for a in range(0, m, step):
        b = min(m, a + step)
        w = np.einsum("mij,vj->mvi", mats[a:b, :, :3], corners) + mats[a:b, None, :, 3]
        lo[a:b] = w.min(axis=1)
        hi[a:b] = w.max(axis=1)
    return lo, hi


def read_gltf(path: Path, mapping: dict[str, str]) -> dict:
    """The arrays of a glTF scene: ``centres``, ``extents``, ``colours`` (or None) and ``meshes``; with
    ``MSFT_lod`` nodes ``lod`` (N, L) switch distances and the mesh LOD table (``meshes.lods``); with mesh
    nodes under mesh nodes ``parent`` (N,) and ``begin`` (N,) (:mod:`.gltf_lod`). Transforms of finite
    numbers may overflow: every transform, box and centre is checked finite where it is made (one message
    naming the node or the object), so numpy's overflow warnings would only print lines beside it."""
    with np.errstate(over="ignore", invalid="ignore"):
        return _read_gltf(path, mapping)


def _read_gltf(path: Path, mapping: dict[str, str]) -> dict:
    from . import gltf_lod as L

    if mapping:
        raise SceneError("--columns applies to tables and point clouds, not glTF", "--columns")
    doc = _Doc(path)
    chains = L.lod_chains(doc)  # {node: (its LOD nodes, their meshes)}
    lod_nodes = {j for nodes, _ in chains.values() for j in nodes}
    placed = []  # (mesh index, LOD meshes, node index, world matrix, instancing attributes or None, objects)
    total = 0
    parents: dict[int, int] = {}
    for i, node, world in _walk(doc, parents):
        if node.get("mesh") is None or i in lod_nodes:  # an LOD node is drawn through its LOD 0 node
            continue
        mesh = doc.ref(node["mesh"], doc.meshes, "meshes", f"nodes[{i}].mesh")
        attrs = _instance_attrs(doc, node, i)
        m = 1 if attrs is None else _instance_count(doc, attrs, i)
        placed.append((mesh, chains.get(i, ((), ()))[1], i, world, attrs, m))
        total += m
    if not placed:
        raise SceneError("has no mesh nodes (no objects to import)")
    if total > MAX_N:
        raise SceneError(f"places {total:,} objects (mesh nodes and their instances); a scene holds at most "
                         f"{MAX_N:,}")
    _need(float(total) * _PER_OBJECT, f"importing {total:,} objects")
    decoded = [key[0] for key in {(mesh, chain) for mesh, chain, *_ in placed}]  # a mesh per (mesh, LOD chain)
    decoded += sorted({mi for _, chain, *_ in placed for mi in chain})  # and every LOD mesh, once
    sizes = [_geometry_values(doc, mi) for mi in decoded]
    nv, ni = sum(v for v, _ in sizes), sum(i for _, i in sizes)
    _need(float(total) * _PER_OBJECT + float(nv) * _PER_VERTEX + float(ni) * _PER_INDEX,
          f"importing {total:,} objects and their meshes' {nv:,} vertices and {ni:,} indices")
    per_key: dict[tuple, list[tuple[np.ndarray, int]]] = {}
    for mesh, chain, i, world, attrs, m in placed:  # in the walk's order: a mesh's objects in the order met
        if attrs is None:
            per_key.setdefault((mesh, chain), []).append((world[None, :3, :], i))
            continue
        mats = world[None] @ _instances(doc, attrs, i, m)
        if not np.isfinite(mats).all():
            raise SceneError(f"nodes[{i}]: its world transform is not finite")
        per_key.setdefault((mesh, chain), []).append((mats[:, :3, :], i))
    verts, faces, vstart, fstart, ids, xforms, colours, centres, extents = [], [], [0], [0], [], [], [], [], []
    nodes_of, lo_hi = [], []
    any_colour = False
    keys = sorted(per_key)  # by mesh (and LOD chain): without MSFT_lod, one entry per mesh as always
    for k, key in enumerate(keys):
        v, f, colour = _mesh_geometry(doc, key[0])
        mats = np.concatenate([a for a, _ in per_key[key]])
        nodes_of.append(np.concatenate([np.full(a.shape[0], i, dtype=np.int64) for a, i in per_key[key]]))
        lo, hi = _bounds(v, mats)
        lo_hi.append(hi - lo)
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
    lods = None
    if any(key[1] for key in keys):  # the LOD meshes: a slot each (a base mesh's own slot when it has one)
        slot = {key[0]: k for k, key in enumerate(keys) if not key[1]}
        for key in keys:
            for mi in key[1]:
                if mi not in slot:
                    v, f, _ = _mesh_geometry(doc, mi)
                    slot[mi] = len(verts)
                    verts.append(v.astype(np.float32))
                    faces.append(f.astype(np.int32))
                    vstart.append(vstart[-1] + v.shape[0])
                    fstart.append(fstart[-1] + f.shape[0])
        lods = L.mesh_lod_table(keys, slot, len(verts))
    meshes = MeshSet(vertices=np.concatenate(verts), faces=np.concatenate(faces),
                     vertex_start=np.array(vstart, dtype=np.int64), face_start=np.array(fstart, dtype=np.int64),
                     ids=np.concatenate(ids), transforms=np.concatenate(xforms), lods=lods)
    out = {"centres": np.concatenate(centres), "radii": None, "extents": np.concatenate(extents),
           "colours": np.concatenate(colours) if any_colour else None, "meshes": meshes,
           "rows": ("object", 0)}
    node_of = np.concatenate(nodes_of)
    box = np.concatenate(lo_hi)
    out.update(L.switch_distances(doc, chains, node_of, box))
    out.update(L.visibility_parents(doc, parents, node_of, meshes.ids.shape[0]))
    return out
