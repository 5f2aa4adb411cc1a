"""Benchmark workloads: a generated scene plus the camera points the queries are made from."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Workload", "make_workload", "scene_workload", "workload_makers", "camera_points", "point_kinds",
           "radius_label"]


@dataclass
class Workload:
    """One scene to measure on.

    name : "<scene>-<N>" label
    centres : (N, 3) float64, world units
    radii : (N,) float64, world units
    points : (Q, 3) float64 camera positions, half in dense regions, half along a fly path
    world : edge of the world box, world units
    begin, lod, parent : the scene's visibility ranges (issue 24; :class:`viewer.scenes.Scene`'s fields: (N,)
        float64, (N, L) float64, (N,) int64), each None when the scene has none
    """

    name: str
    scene: str
    n: int
    centres: np.ndarray
    radii: np.ndarray
    points: np.ndarray
    world: float
    begin: np.ndarray | None = None
    lod: np.ndarray | None = None
    parent: np.ndarray | None = None

    @property
    def has_ranges(self) -> bool:
        """True when the scene carries begin distances, LOD switches or visibility parents."""
        return self.begin is not None or self.lod is not None or self.parent is not None


def camera_points(centres: np.ndarray, world: float, q: int, seed: int, origin=(0.0, 0.0, 0.0)) -> np.ndarray:
    """(q, 3) float64 camera positions: half at objects' positions (so density-weighted, i.e. through
    the dense regions) jittered by a few units, half along a smooth random fly path across the world
    (a cube ``world`` wide centred at ``origin``)."""
    rng = np.random.default_rng(seed + 7919)
    half = point_kinds(q)[0].stop
    if len(centres):
        dense = centres[rng.integers(0, len(centres), half)] + rng.normal(0.0, 5.0, (half, 3))
    else:
        dense = rng.uniform(-world / 2, world / 2, (half, 3)) + np.asarray(origin, dtype=np.float64)
    m = q - half
    keys = rng.uniform(-0.45 * world, 0.45 * world, (6, 3))
    t = np.linspace(0.0, len(keys) - 1.0, m)
    i = np.minimum(t.astype(int), len(keys) - 2)
    f = (t - i)[:, None]
    s = f * f * (3 - 2 * f)  # smoothstep between keyframes
    path = keys[i] * (1 - s) + keys[i + 1] * s + np.asarray(origin, dtype=np.float64)
    return np.ascontiguousarray(np.concatenate([dense, path]))


def point_kinds(q: int) -> tuple[slice, slice]:
    """Where the two kinds of :func:`camera_points` sit among ``q`` of them: (at objects, along the fly
    path). The first are independent jumps through the dense regions, the second a flight whose
    consecutive points are near each other (so a structure's upper levels stay in cache from one to the
    next); the median of all of them falls between the two."""
    return slice(0, q // 2), slice(q // 2, q)


def make_workload(
    scene: str, n: int, seed: int = 0, queries: int = 300, world: float = 10_000.0, radius: dict | None = None
) -> Workload:
    """Generate ``scene`` (a generator name from :data:`viewer.scenes.GENERATORS`) with ``n`` objects in a
    world ``world`` wide, with radii from ``radius`` (a radius-model spec such as
    ``{"model": "constant", "value": 20}``; None: the default heavy-tailed radii, most 5..30 and a few
    up to 1000). Non-default radius models are named in the workload's label."""
    from viewer.scenes import generate_scene

    sc = generate_scene(scene, n, seed=seed, world=world, radius=radius)
    pts = camera_points(sc.centres, world, queries, seed)
    label = f"{scene}-{_short(n)}"
    if radius is not None:
        label += "-" + radius_label(radius)
    return Workload(label, scene, n, sc.centres, sc.radii, pts, world, *_ranges_of(sc))


def scene_workload(path: str, queries: int = 300, seed: int = 0,
                   import_options: dict[str, str | None] | None = None) -> Workload:
    """A workload from a scene file: a ``.npz``, a ``.toml`` recipe, a bundled recipe's name
    (``clustered-100k``) or a file imported on the fly (glTF, PLY, CSV, Parquet, with ``import_options``:
    ``view_distance``, ``columns``), with its own N; labelled ``<scene name>-<N>`` (the name alone when it
    already ends so). :class:`SceneError` naming the file for a bad one."""
    from viewer.scenes import load_scene

    sc = load_scene(path, import_options=import_options)
    pts = camera_points(sc.centres, sc.world, queries, seed, origin=sc.origin)
    n = len(sc.radii)
    label = sc.name if sc.name.endswith(f"-{_short(n)}") else f"{sc.name}-{_short(n)}"  # clustered-100k as is
    return Workload(label, sc.name, n, sc.centres, sc.radii, pts, sc.world, *_ranges_of(sc))


def workload_makers(scenes: list[str], sizes: list[int], *, seed: int, queries: int) -> list:
    """Callables making the workloads of ``scenes`` (checked: :func:`viewer.bench.checks.check_workloads`): a
    generator's at each of ``sizes``, a scene file's once at its own N; ``queries`` camera points each."""
    from functools import partial

    from viewer.scenes import GENERATORS

    out = []
    for s in scenes:
        if s in GENERATORS:
            out += [partial(make_workload, s, n, seed=seed, queries=queries) for n in sizes]
        else:
            out.append(partial(scene_workload, s, queries=queries, seed=seed))
    return out


def _ranges_of(sc) -> tuple:
    """A scene's ``(begin, lod, parent)``, each None when absent."""
    return tuple(getattr(sc, name, None) for name in ("begin", "lod", "parent"))


def radius_label(spec: dict) -> str:
    """A short name of a radius-model spec: ``constant20``, ``log-uniform5-30``."""
    params = [v for k, v in spec.items() if k != "model"]
    return spec["model"] + "-".join(f"{v:g}" if isinstance(v, (int, float)) else str(v) for v in params)


def _short(n: int) -> str:
    for div, suffix in ((1_000_000, "m"), (1_000, "k")):
        if n >= div and n % div == 0:
            return f"{n // div}{suffix}"
    return str(n)
