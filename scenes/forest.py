"""Write ``forest.glb``: a glTF 2.0 level of instanced meshes, the kind an engine exports, to try
``viewer scene import`` / ``viewer view`` on (README, "Your own world").

    python -m viewer.scenes.forest forest.glb --trees 20000

Three meshes (a pine, a rock, a hut), each placed many times through EXT_mesh_gpu_instancing (one node
per mesh, a translation / rotation / scale per instance), on a gently rolling ground; the pines stand in
clumps. Written with pygltflib (imported when it runs: the scenes package imports only numpy);
deterministic for a seed.
"""

from __future__ import annotations

import argparse
import math

import numpy as np


def pine() -> tuple[np.ndarray, np.ndarray]:
    """Two stacked cones on a short trunk, 8 sides: (vertices (V, 3), triangles (F, 3)); base at y = 0."""
    v, f = [], []

    def cone(y0, y1, r, sides=8):
        base = len(v)
        for k in range(sides):
            a = 2 * math.pi * k / sides
            v.append((r * math.cos(a), y0, r * math.sin(a)))
        v.append((0.0, y1, 0.0))
        v.append((0.0, y0, 0.0))
        tip, mid = base + sides, base + sides + 1
        for k in range(sides):
            a, b = base + k, base + (k + 1) % sides
            f.append((a, tip, b))
            f.append((a, b, mid))

    cone(0.0, 1.5, 0.25, 6)  # trunk
    cone(1.0, 5.0, 1.8)
    cone(3.0, 7.0, 1.2)
    return np.array(v, np.float32), np.array(f, np.uint16)


def rock() -> tuple[np.ndarray, np.ndarray]:
    """An octahedron squashed and skewed: a boulder."""
    v = np.array([[1.2, 0, 0], [-1, 0, 0.1], [0, 0.9, 0], [0, -0.3, 0], [0.1, 0, 1.1], [0, 0, -0.9]], np.float32)
    f = np.array([[0, 2, 4], [4, 2, 1], [1, 2, 5], [5, 2, 0], [4, 3, 0], [1, 3, 4], [5, 3, 1], [0, 3, 5]], np.uint16)
    return v, f


def hut() -> tuple[np.ndarray, np.ndarray]:
    """A box with a pitched roof, 4 x 3 x 5."""
    v = np.array([[x, y, z] for y in (0, 3) for x in (-2, 2) for z in (-2.5, 2.5)] +
                 [[0, 4.5, -2.5], [0, 4.5, 2.5]], np.float32)
    f = np.array([[0, 1, 5], [0, 5, 4], [2, 6, 7], [2, 7, 3], [0, 4, 6], [0, 6, 2], [1, 3, 7], [1, 7, 5],
                  [4, 5, 9], [4, 9, 8], [6, 8, 9], [6, 9, 7], [4, 8, 6], [5, 7, 9]], np.uint16)
    return v, f


def quat_y(angle: np.ndarray) -> np.ndarray:
    return np.stack([np.zeros_like(angle), np.sin(angle / 2), np.zeros_like(angle), np.cos(angle / 2)], 1)


def main(argv: list[str] | None = None) -> None:
    import pygltflib as G

    ap = argparse.ArgumentParser(prog="python -m viewer.scenes.forest", description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", default="forest.glb")
    ap.add_argument("--trees", type=int, default=20000)
    ap.add_argument("--size", type=float, default=2000.0, help="edge of the square forest, metres")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    rng = np.random.default_rng(a.seed)
    half = a.size / 2

    def ground(x, z):
        return 6 * np.sin(x / 97.0) * np.cos(z / 131.0) + 3 * np.sin((x + z) / 53.0)

    clumps = rng.uniform(-half, half, (40, 2))
    which = rng.integers(0, len(clumps), a.trees)
    xz = clumps[which] + rng.normal(0, rng.uniform(30, 120, len(clumps))[which, None], (a.trees, 2))
    xz = np.clip(xz, -half, half)
    n_rocks, n_huts = a.trees // 8, max(1, a.trees // 200)
    placements = {
        "pine": (xz, rng.uniform(0.6, 1.6, a.trees), [0.16, 0.42, 0.18, 1.0]),
        "rock": (rng.uniform(-half, half, (n_rocks, 2)), rng.uniform(0.5, 3.0, n_rocks), [0.45, 0.43, 0.40, 1.0]),
        "hut": (rng.uniform(-half, half, (n_huts, 2)), rng.uniform(0.9, 1.2, n_huts), [0.62, 0.32, 0.17, 1.0]),
    }
    meshes = {"pine": pine(), "rock": rock(), "hut": hut()}

    blob = bytearray()
    g = G.GLTF2(asset=G.Asset(version="2.0", generator="viewdist-testbed viewer.scenes.forest"), scene=0,
                extensionsUsed=["EXT_mesh_gpu_instancing"])
    g.scenes.append(G.Scene(nodes=[]))

    def add(arr: np.ndarray, ctype: int, typ: str, target=None) -> int:
        data = np.ascontiguousarray(arr).tobytes()
        g.bufferViews.append(G.BufferView(buffer=0, byteOffset=len(blob), byteLength=len(data), target=target))
        acc = G.Accessor(bufferView=len(g.bufferViews) - 1, componentType=ctype, count=len(arr), type=typ)
        if typ == "VEC3" and ctype == G.FLOAT:
            acc.min, acc.max = arr.min(0).tolist(), arr.max(0).tolist()
        g.accessors.append(acc)
        blob.extend(data + b"\0" * (-len(data) % 4))
        return len(g.accessors) - 1

    for name, (v, f) in meshes.items():
        xz_, scale, colour = placements[name]
        m = len(xz_)
        pos = add(v, G.FLOAT, "VEC3", G.ARRAY_BUFFER)
        idx = add(f.reshape(-1), G.UNSIGNED_SHORT, "SCALAR", G.ELEMENT_ARRAY_BUFFER)
        g.materials.append(G.Material(pbrMetallicRoughness=G.PbrMetallicRoughness(baseColorFactor=colour)))
        g.meshes.append(G.Mesh(name=name, primitives=[G.Primitive(attributes=G.Attributes(POSITION=pos), indices=idx,
                                                                   material=len(g.materials) - 1)]))
        t = np.c_[xz_[:, 0], ground(xz_[:, 0], xz_[:, 1]), xz_[:, 1]].astype(np.float32)
        r = quat_y(rng.uniform(0, 2 * math.pi, m)).astype(np.float32)
        s = np.repeat(scale[:, None], 3, 1).astype(np.float32)
        attrs = {"TRANSLATION": add(t, G.FLOAT, "VEC3"), "ROTATION": add(r, G.FLOAT, "VEC4"),
                 "SCALE": add(s, G.FLOAT, "VEC3")}
        g.nodes.append(G.Node(name=name + "s", mesh=len(g.meshes) - 1,
                              extensions={"EXT_mesh_gpu_instancing": {"attributes": attrs}}))
        g.scenes[0].nodes.append(len(g.nodes) - 1)
    g.buffers.append(G.Buffer(byteLength=len(blob)))
    g.set_binary_blob(bytes(blob))
    g.save_binary(a.out)
    total = sum(len(p[0]) for p in placements.values())
    print(f"wrote {a.out}: {total:,} objects, {len(meshes)} meshes")


if __name__ == "__main__":
    main()
