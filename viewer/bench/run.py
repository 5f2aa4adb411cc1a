"""The benchmark sweep: indexes x scenes x N, interleaved, every figure against brute force."""

from __future__ import annotations

import gc
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from viewer.errors import UserError
from viewer.index import INDEXES

from . import measure
from .report import rows
from .workloads import make_workload

__all__ = ["BenchConfig", "IndexSpec", "parse_index_spec", "parse_radius_spec", "run_bench", "estimate_bytes"]

# rough bytes per object of each index at 1e6 (measured), for the memory estimate before a sweep
_BYTES_PER_OBJECT = {"brute": 56, "octree": 190, "ckdtree": 60, "rtree": 120}
_SCENE_BYTES_PER_OBJECT = 3 * 8 + 8 + 4 + 4 + 4 + 32  # centres, radii, sizes, colours, category, slack


@dataclass(frozen=True)
class IndexSpec:
    """An index and its options, written ``name`` or ``name:key=value,key=value``."""

    label: str
    name: str
    options: dict = field(default_factory=dict)


def parse_index_spec(text: str) -> IndexSpec:
    name, _, opts = text.partition(":")
    name = name.strip()
    if name not in INDEXES:
        raise UserError(f"unknown index {name!r} in --index; choose from {', '.join(sorted(INDEXES))}")
    options = {}
    for part in filter(None, (p.strip() for p in opts.split(","))):
        key, eq, value = part.partition("=")
        if not eq or not key:
            raise UserError(f"--index {text!r}: options are written name:key=value,key=value")
        options[key.strip()] = _number(value.strip())
    return IndexSpec(text.strip(), name, options)


def parse_radius_spec(text: str) -> dict | None:
    """``heavy-tailed`` (the default model, None), ``constant:value=20``, ``log-uniform:min=1,max=5``."""
    from viewer.scenes import RADIUS_MODELS
    from viewer.scenes.radii import check_radius_spec

    name, _, opts = text.strip().partition(":")
    if name == "default":
        return None
    if name not in RADIUS_MODELS:
        raise UserError(f"unknown radius model {name!r} in --radius; choose from {', '.join(RADIUS_MODELS)}")
    spec: dict = {"model": name}
    for part in filter(None, (p.strip() for p in opts.split(","))):
        key, eq, value = part.partition("=")
        if not eq:
            raise UserError(f"--radius {text!r}: parameters are written model:key=value,key=value")
        spec[key.strip()] = _number(value.strip())
    try:
        return check_radius_spec(spec, "--radius")
    except UserError as exc:
        raise UserError(str(exc)) from None


def _number(v: str):
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(v.lower(), v)


@dataclass
class BenchConfig:
    scenes: list[str]
    sizes: list[int]
    indexes: list[IndexSpec]
    queries: int = 300
    updates: int = 10_000
    dynamic: list[float] = field(default_factory=lambda: [0.01, 0.1])
    frames: int = 10
    seed: int = 0
    radii: list = field(default_factory=lambda: [None])  # radius-model specs; None: heavy-tailed default


def estimate_bytes(cfg: BenchConfig, n: int) -> int:
    """Peak bytes of one workload of ``n`` objects with every index built at once."""
    per = sum(_BYTES_PER_OBJECT.get(s.name, 200) for s in cfg.indexes)
    return int(n * (per + _SCENE_BYTES_PER_OBJECT))


def available_bytes() -> int:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 1 << 62


def run_bench(cfg: BenchConfig, log=lambda s: print(s, file=sys.stderr, flush=True)) -> list[dict]:
    """Run the sweep; returns the result rows (see :data:`viewer.bench.report.COLUMNS`)."""
    specs = list(cfg.indexes)
    if not any(s.label == "brute" for s in specs):
        specs.insert(0, IndexSpec("brute", "brute"))
    usable = []
    for s in specs:
        why = INDEXES[s.name].unavailable()
        if why:
            log(f"{s.label}: unavailable ({why}); skipped")
        else:
            usable.append(s)
    log("warming kernels (JIT compilation is never timed) ...")
    measure.warm_up(sorted({s.name for s in usable}))
    results: list[measure.IndexResult] = []
    floors: dict[str, float] = {}
    for n in cfg.sizes:
        need = estimate_bytes(cfg, n)
        have = available_bytes()
        log(f"N = {n:,}: estimated peak memory {need / 2**30:.1f} GiB of {have / 2**30:.1f} GiB available")
        if need > 0.85 * have:
            log(f"N = {n:,}: skipped, it would not fit in memory")
            continue
        for scene, radius in ((s, r) for s in cfg.scenes for r in cfg.radii):
            t0 = time.perf_counter()
            wl = make_workload(scene, n, seed=cfg.seed, queries=cfg.queries, radius=radius)
            log(f"[{wl.name}] generated in {time.perf_counter() - t0:.1f} s; building {len(usable)} indexes")
            built = {}
            for s in usable:
                gc.collect()
                t0 = time.perf_counter()
                try:
                    ix = INDEXES[s.name](wl.centres, wl.radii, **s.options)
                except (TypeError, ValueError) as exc:
                    raise UserError(f"--index {s.label}: {exc}") from None
                ix._bench_build_s = time.perf_counter() - t0
                built[s.label] = ix
                log(f"  {s.label:<24} built in {ix._bench_build_s:7.3f} s")
            log(f"  querying {len(wl.points)} camera points, interleaved ...")
            res, floor = measure.measure_static(built, wl)
            floors[wl.name] = float(np.median(floor))
            if cfg.dynamic and cfg.frames:
                log(f"  dynamic: {', '.join(f'{d:.0%}' for d in cfg.dynamic)} of objects moving, {cfg.frames} frames ...")
                dyn, where = measure.measure_dynamic(built, wl, cfg.dynamic, cfg.frames, cfg.seed)
                for label in built:
                    res[label].dynamic_ms = dyn[label]
            else:
                where = {label: wl.centres for label in built}
            if cfg.updates:
                log(f"  updates: {cfg.updates:,} removes, inserts, moves; {10 * cfg.updates:,} batch moves ...")
                for label, ix in built.items():
                    measure.measure_updates(ix, wl, res[label], cfg.updates, cfg.seed, centres=where[label])
            for label, ix in built.items():
                r = res[label]
                r.index = label
                note = getattr(ix, "update_note", "") or ("in place" if ix.updates_in_place else "remove + insert")
                r.note = note
                results.append(r)
            del built
            gc.collect()
    return rows(results, floors)
