"""The benchmark sweep: indexes x scenes x N, interleaved, every ratio against the multi-core linear scan
(:data:`viewer.bench.report.BASELINE`); brute force, the tests' oracle, is measured as a row of its own."""

from __future__ import annotations

import sys
import tempfile
import time
import weakref
from pathlib import Path
from dataclasses import dataclass, field

import numpy as np

from viewer.errors import UserError
from viewer.index import INDEXES
# what an --index text means lives with the indexes; re-exported here, where the bench first had it
from viewer.index.specs import IndexSpec, check_index_spec, index_options, number_or_text, parse_index_spec
from viewer.timing.heap import collect_if_alive, collector_off

from . import measure
from .estimate import _BYTES_PER_OBJECT, _SCENE_BYTES_PER_OBJECT
from .ranges import measure_ranges, workload_ranges
from .report import BASELINE, rows, share_label
from .updates import plan
from .workloads import Workload, make_workload, scene_workload

__all__ = ["BenchConfig", "IndexSpec", "check_index_spec", "estimate_bytes", "index_options", "measured_shares",
           "parse_index_spec", "parse_radius_spec", "run_bench"]


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
        if key.strip() in spec:
            raise UserError(f"--radius {text!r}: parameter {key.strip()!r} is given twice")
        spec[key.strip()] = number_or_text(value.strip())
    try:
        return check_radius_spec(spec, "--radius")
    except UserError as exc:
        raise UserError(str(exc)) from None


@dataclass
class BenchConfig:
    """What to run. ``scenes``: generator names (generated at every size of ``sizes``) and scene files
    (``.npz``, ``.toml`` recipes or bundled recipe names, run once at their own N). ``first_build``:
    also time each index's first build in a fresh process (a subprocess per index and workload; ``viewer bench``
    does it unless ``--no-first-build``). ``estimate``: print the run's expected time and peak memory before it
    starts, from a trial of a few thousand objects (:mod:`viewer.bench.estimate`; ``viewer bench`` does it)."""

    scenes: list[str]
    sizes: list[int]
    indexes: list[IndexSpec]
    queries: int = 300
    updates: int = 10_000
    dynamic: list[float] = field(default_factory=lambda: [0.01, 0.1])
    frames: int = 100  # at least 100: the dynamic columns' p99 is then a frame's, not an interpolation
    seed: int = 0
    radii: list = field(default_factory=lambda: [None])  # radius-model specs; None: heavy-tailed default
    first_build: bool = False
    rounds: int = 3  # passes over the camera points (measure_static)
    estimate: bool = False  # say the run's time and memory first, from a small trial (viewer.bench.estimate)
    import_options: dict = field(default_factory=dict)  # how scene files imported on the fly become scenes
    drift: float = 1.0  # how far a mover drifts a frame in the dynamic workload: each axis's std, world units


def estimate_bytes(cfg: BenchConfig, n: int) -> int:
    """Peak bytes of one workload of ``n`` objects with every index built at once."""
    per = sum(_BYTES_PER_OBJECT.get(s.name, 200) for s in cfg.indexes)
    return int(n * (per + _SCENE_BYTES_PER_OBJECT))


def available_bytes() -> int:
    """The memory this process may still allocate, bytes (:func:`viewer.system.memory.available_bytes`: the
    machine's available memory, the cgroup's limit, RLIMIT_AS), what an estimate is compared with."""
    from ..system.memory import available_bytes as host_available

    return host_available()


def run_bench(cfg: BenchConfig, log=lambda s: print(s, file=sys.stderr, flush=True),
              keep: list | None = None) -> list[dict]:
    """Run the sweep; returns the result rows (see :data:`viewer.bench.report.COLUMNS`). The baseline
    ``scan`` and ``brute`` are always measured. :class:`UserError` when every workload was skipped.
    ``keep``: a list that receives every :class:`~viewer.bench.result.IndexResult` (their raw samples:
    :mod:`viewer.bench.samples`)."""
    from viewer.scenes import GENERATORS

    specs = list(cfg.indexes)
    for must in ("brute", BASELINE):
        if not any(s.label == must for s in specs):
            specs.insert(0, parse_index_spec(must))
    specs.sort(key=lambda s: (s.label != BASELINE, s.label != "brute"))  # the baseline first, then brute
    usable = []
    for s in specs:
        why = s.cls.unavailable()
        if why:
            log(f"{s.label}: unavailable ({why}); skipped")
        else:
            usable.append(s)
    log("warming kernels (JIT compilation is never timed) ...")
    measure.warm_up(sorted({s.name for s in usable if INDEXES.get(s.name) is s.cls}))
    for s in usable:  # a plugin's, a module's or a file's class
        if INDEXES.get(s.name) is not s.cls:
            s.cls.warm_up()
    generators = [s for s in cfg.scenes if s in GENERATORS]
    if generators and cfg.sizes and cfg.estimate:
        from .estimate import TRIAL_N, calibrate, estimate

        n0 = min(TRIAL_N, max(cfg.sizes))
        log(f"timing a {n0:,}-object trial of every index to estimate the run ...")
        cal = calibrate(cfg, usable, generators[0], cfg.radii[0], n0)
        guess = estimate(cfg, usable, cal, cfg.sizes, len(generators) * len(cfg.radii))
        log(guess.line() + ("" if len(generators) == len(cfg.scenes) else "; scene files not counted"))
    results: list[measure.IndexResult] = []
    reads: dict[str, float] = {}
    skipped: list[str] = []

    def fits(n: int, what: str) -> bool:
        need, have = estimate_bytes(cfg, n), available_bytes()
        log(f"{what}: estimated peak memory {need / 2**30:.1f} GiB of {have / 2**30:.1f} GiB available")
        if need > 0.85 * have:
            log(f"{what}: skipped, it would not fit in memory")
            skipped.append(what)
            return False
        return True

    files = [s for s in cfg.scenes if s not in GENERATORS]
    for n in cfg.sizes:
        if not generators or not fits(n, f"N = {n:,}"):
            continue
        for scene, radius in ((s, r) for s in generators for r in _radii_of(s, cfg.radii, log)):
            t0 = time.perf_counter()
            wl = make_workload(scene, n, seed=cfg.seed, queries=cfg.queries, radius=radius)
            log(f"[{wl.name}] generated in {time.perf_counter() - t0:.1f} s")
            _run_workload(cfg, wl, usable, results, reads, log)
    for path in files:
        t0 = time.perf_counter()
        wl = scene_workload(path, queries=cfg.queries, seed=cfg.seed, import_options=cfg.import_options)
        log(f"[{wl.name}] loaded from {path} in {time.perf_counter() - t0:.1f} s")
        if fits(wl.n, f"{path} (N = {wl.n:,})"):
            _run_workload(cfg, wl, usable, results, reads, log)
        del wl
    if not results:
        raise UserError(f"nothing measured: every workload was skipped ({'; '.join(skipped)}): it would not fit "
                        "in memory; try a smaller --n or fewer --index")
    if keep is not None:
        keep.extend(results)
    return rows(results, reads, measured_shares(cfg))


def _radii_of(scene: str, radii: list, log) -> list:
    """The radius models generator ``scene`` is run with: every one asked for, or only its own view
    distances (once) for a generator that derives them (the star field's luminosities), said in the log."""
    from viewer.scenes import GENERATORS

    if GENERATORS[scene].radii is None:
        return radii
    if any(r is not None for r in radii):
        log(f"[{scene}] derives its own view distances: run once with them, not with each --radius model")
    return [None]


def measured_shares(cfg: BenchConfig) -> list[float]:
    """The shares of the dynamic workload a run measures, each once, in the order asked: ``cfg.dynamic``
    (none when ``cfg.frames`` is 0). Each has its columns in the rows (:func:`viewer.bench.report.columns`)."""
    return list(dict.fromkeys(float(s) for s in cfg.dynamic)) if cfg.frames else []


def _run_workload(cfg: BenchConfig, wl: Workload, usable: list[IndexSpec], results: list, reads: dict,
                  log) -> None:
    """Measure every index of ``usable`` on ``wl``; append their results, the workload's read floor."""
    first: dict[str, float] = {}
    if cfg.first_build:
        log("  first builds, each in a fresh process ...")
        with tempfile.TemporaryDirectory(prefix="viewer-bench-") as tmp:
            c, r = str(Path(tmp) / "centres.npy"), str(Path(tmp) / "radii.npy")
            np.save(c, wl.centres)
            np.save(r, wl.radii)
            for s in usable:
                first[s.label] = measure.measure_first_build(s.text, c, r)
                log(f"  {s.label:<24} first build {first[s.label]:7.3f} s")
    log(f"  building {len(usable)} indexes")
    built = {}
    for s in usable:
        t0 = time.perf_counter()
        try:
            with collector_off():  # no collection inside the timed build
                ix = s.build(wl.centres, wl.radii)
        except (TypeError, ValueError) as exc:
            raise UserError(f"--index {s.label}: {exc}") from None
        ix._bench_build_s = time.perf_counter() - t0
        built[s.label] = ix
        log(f"  {s.label:<24} built in {ix._bench_build_s:7.3f} s")
    log(f"  querying {len(wl.points)} camera points, interleaved, {cfg.rounds} pass(es) ...")
    res, _, read = measure.measure_static(built, wl, baseline=BASELINE, rounds=cfg.rounds)
    reads[wl.name] = float(np.median(read))
    ranges = workload_ranges(wl)
    if ranges is not None:  # before anything moves: the filter reads the centres as loaded
        log(f"  visibility ranges: each query followed by the range filter, {cfg.rounds} pass(es) ...")
        measure_ranges(built, wl, ranges, res, rounds=cfg.rounds)
    shares = measured_shares(cfg)
    if shares:
        log(f"  dynamic: {', '.join(f'{share_label(d)}%' for d in shares)} of objects moving, {cfg.frames} frames ...")
        dyn, where = measure.measure_dynamic(built, wl, shares, cfg.frames, cfg.seed, drift=cfg.drift)
        for label in built:
            res[label].dynamic_frames_ms = dyn[label]
            res[label].dynamic_move_ms = dyn[label, "move"]
            res[label].scatter_floor_ms = dyn[measure.SCATTER]
            res[label].contiguous_floor_ms = dyn[measure.CONTIGUOUS]
    else:
        where = {label: wl.centres for label in built}
    if cfg.updates:
        n_remove, n_move, n_batch = plan(cfg.updates, wl.n)
        log(f"  updates: {n_remove:,} removes and as many inserts, {n_move:,} moves, {n_batch:,} batch moves ...")
        for label, ix in built.items():
            measure.measure_updates(ix, wl, res[label], cfg.updates, cfg.seed, centres=where[label])
    for label, ix in built.items():
        r = res[label]
        r.index = label
        r.build_first_s = first.get(label, float("nan"))
        r.note = getattr(ix, "update_note", "") or ("in place" if ix.updates_in_place else "remove + insert")
        results.append(r)
    refs = [weakref.ref(ix) for ix in built.values()]
    del built
    ix = None
    collect_if_alive(refs)  # an index in a reference cycle goes now, not after the next workload's builds
