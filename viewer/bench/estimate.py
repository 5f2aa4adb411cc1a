"""How long a bench will take and how much memory it will need, said before it starts.

A simple model of the work the run will do (objects x indexes x queries x rounds, builds, first builds,
dynamic frames, updates), whose unit costs are measured on this machine by a small trial run (a few
thousand objects of the first workload, every index, a few queries, one dynamic frame, a few updates) right
before the real one. It is an estimate: queries of the tree-like indexes are assumed to grow as N**0.6, those
of the scan and brute force, builds and the floors as N, update calls not at all; each phase is capped by the
time budgets the bench itself enforces.
"""

from __future__ import annotations

import os
import resource
import time
import weakref
from dataclasses import dataclass, field

import numpy as np

from viewer.timing.heap import collect_if_alive

from . import measure
from .updates import measure_updates, plan
from .workloads import make_workload

__all__ = ["Calibration", "Estimate", "calibrate", "estimate", "format_duration", "short_size"]

#: objects of the trial run (at most: a run whose largest N is smaller uses that)
TRIAL_N = 20_000
#: a fresh process's start-up before a first build (python, numpy, numba's cached kernels), seconds
_FIRST_BUILD_START_S = 1.0
#: how each index's query time grows with N: the linear ones read every object
_LINEAR = ("scan", "brute", "loop32")
_TREE_EXPONENT = 0.6
#: the budgets of viewer.bench.measure.measure_dynamic (per share) and viewer.bench.updates (per phase), s
_DYNAMIC_BUDGET_S = 20.0
_UPDATE_BUDGET_S = 10.0
#: rough bytes per object of each index at 1e6 (measured), the scene's arrays, and the dynamic workload's own
#: copy of the centres per index plus its answer buffer
_BYTES_PER_OBJECT = {"brute": 56, "scan": 80, "loop32": 76, "octree": 190, "ckdtree": 60, "rtree": 120}
_SCENE_BYTES_PER_OBJECT = 3 * 8 + 8 + 4 + 4 + 4 + 32
_DYNAMIC_BYTES_PER_OBJECT = 3 * 8 + 8


@dataclass
class Calibration:
    """Unit costs measured by :func:`calibrate` on ``n`` objects, per index label: ``build_s`` (one build),
    ``query_s`` (one query), ``dynamic_s`` (one frame, per share), ``update_s`` (per call: remove, insert,
    move, and per object of move_many); ``generate_s`` (the workload), ``floors_s`` (the two floors of one
    camera point)."""

    n: int
    generate_s: float = 0.0
    floors_s: float = 0.0
    build_s: dict[str, float] = field(default_factory=dict)
    query_s: dict[str, float] = field(default_factory=dict)
    dynamic_s: dict[str, dict[float, float]] = field(default_factory=dict)
    update_s: dict[str, tuple[float, float, float, float]] = field(default_factory=dict)
    trial_s: float = 0.0


@dataclass
class Estimate:
    """What :func:`estimate` expects: ``seconds`` in all, ``per_size`` (seconds of the generated workloads of
    each N), ``peak_bytes`` (the largest workload, every index built), ``cores`` (logical CPUs)."""

    seconds: float
    per_size: dict[int, float]
    peak_bytes: int
    cores: int
    trial_n: int

    def line(self) -> str:
        """``this run: ~9 min and ~2.3 GB on this machine (2 cores); --n 1e5 alone: ~1 min (an estimate ...)``."""
        text = (f"this run: ~{format_duration(self.seconds)} and ~{self.peak_bytes / 1e9:.1f} GB on this machine "
                f"({self.cores} cores)")
        if len(self.per_size) > 1:
            n = min(self.per_size)
            text += f"; --n {short_size(n)} alone: ~{format_duration(self.per_size[n])}"
        return (text + f": an estimate from a {self.trial_n:,}-object trial of every index here (other programs "
                "running slow it down)")


def format_duration(seconds: float) -> str:
    """``40 s``, ``3 min``, ``1 h 25 min`` (rounded: this is an estimate)."""
    if seconds < 60:
        return f"{max(1, round(seconds / 5) * 5 if seconds >= 10 else round(seconds))} s"
    if seconds < 3600:
        return f"{round(seconds / 60)} min"
    h, m = divmod(round(seconds / 60), 60)
    return f"{h} h {m} min" if m else f"{h} h"


def short_size(n: int) -> str:
    """``100000`` -> ``1e5``, ``250000`` -> ``2.5e5``, ``1234`` -> ``1234``: an N as ``--n`` takes it."""
    if n >= 10_000:
        m, e = f"{n:e}".split("e")
        m = m.rstrip("0").rstrip(".")
        if float(m) * 10 ** int(e) == n:
            return f"{m}e{int(e)}"
    return str(n)


def _rss_bytes() -> int:
    """This process's resident memory now, bytes (its peak so far where /proc is not there)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def calibrate(cfg, usable: list, scene: str, radius, n: int) -> Calibration:
    """Time one small trial of the run's work on ``n`` objects of generator ``scene`` (radius model
    ``radius``): every index of ``usable`` (:class:`viewer.bench.run.IndexSpec`) built, a few queries
    interleaved, one frame of each dynamic share, a few updates. The kernels must be warm
    (:func:`viewer.bench.measure.warm_up`). Nothing of it is reported but the unit costs."""
    t_start = time.perf_counter()
    queries = max(2, min(20, cfg.queries))
    t0 = time.perf_counter()
    wl = make_workload(scene, n, seed=cfg.seed, queries=queries, radius=radius)
    cal = Calibration(n=n, generate_s=time.perf_counter() - t0)
    built = {}
    for s in usable:
        t0 = time.perf_counter()
        try:
            ix = s.build(wl.centres, wl.radii)
        except (TypeError, ValueError):
            continue  # the real run says why
        ix._bench_build_s = cal.build_s[s.label] = time.perf_counter() - t0
        built[s.label] = ix
    if not built:
        return cal
    t0 = time.perf_counter()
    res, _, _ = measure.measure_static(built, wl, baseline="scan", rounds=1)
    wall = time.perf_counter() - t0
    for label, r in res.items():
        cal.query_s[label] = float(np.sum(r.query_us)) * 1e-6 / queries
    cal.floors_s = max(0.0, wall - sum(cal.query_s.values()) * queries) / queries
    shares = list(dict.fromkeys(float(s) for s in cfg.dynamic)) if cfg.frames else []
    where = {label: wl.centres for label in built}
    if shares:
        dyn, where = measure.measure_dynamic(built, wl, shares, 1, cfg.seed, budget_s=2.0)
        cal.dynamic_s = {label: {sh: float(np.median(ms)) * 1e-3 for sh, ms in dyn[label].items()} for label in built}
    updates = min(200, cfg.updates)
    if updates:
        for label, ix in built.items():
            r = res[label]
            measure_updates(ix, wl, r, updates, cfg.seed, budget_s=1.0, centres=where[label])
            per = lambda s, k: s / k if k else 0.0  # noqa: E731
            cal.update_s[label] = (per(r.remove_s, r.removes), per(r.insert_s, r.inserts), per(r.move_s, r.moves),
                                   per(r.move_many_s, r.batch_moves))
    refs = [weakref.ref(ix) for ix in built.values()]
    del built, wl
    ix = None
    collect_if_alive(refs)
    cal.trial_s = time.perf_counter() - t_start
    return cal


def _workload_seconds(cfg, cal: Calibration, usable: list, n: int) -> float:
    """The modelled seconds of one workload of ``n`` objects."""
    scale = n / cal.n
    qr = cfg.queries * cfg.rounds
    t = cal.generate_s * scale + cal.floors_s * scale * qr
    for s in usable:
        if s.label not in cal.build_s:
            continue
        build = cal.build_s[s.label] * scale
        t += build + (_FIRST_BUILD_START_S + build if cfg.first_build else 0.0)
        grow = scale if s.name in _LINEAR else scale ** _TREE_EXPONENT
        t += cal.query_s.get(s.label, 0.0) * grow * qr
        for share, frame_s in cal.dynamic_s.get(s.label, {}).items():
            t += min(frame_s * scale * cfg.frames, _DYNAMIC_BUDGET_S + frame_s * scale)
        if cfg.updates and s.label in cal.update_s:
            removes, moves, batch = plan(cfg.updates, n)
            rm, ins, mv, mm = cal.update_s[s.label]
            t += sum(min(unit * calls, _UPDATE_BUDGET_S)
                     for unit, calls in ((rm, removes), (ins, removes), (mv, moves), (mm, batch)))
    return t


def peak_bytes(cfg, usable: list, n: int) -> int:
    """The modelled peak memory of a workload of ``n`` objects, every index of ``usable`` built at once,
    over what this process holds now."""
    per = sum(_BYTES_PER_OBJECT.get(s.name, 200) for s in usable) + _SCENE_BYTES_PER_OBJECT
    if cfg.frames and cfg.dynamic:
        per += _DYNAMIC_BYTES_PER_OBJECT * len(usable)
    return int(n * per)


def estimate(cfg, usable: list, cal: Calibration, sizes: list[int], workloads: int) -> Estimate:
    """The run's time and peak memory from :func:`calibrate`'s unit costs: ``workloads`` generated workloads
    (scenes x radius models) at each of ``sizes``, each of :func:`_workload_seconds`; the memory of the largest."""
    per_size = {n: _workload_seconds(cfg, cal, usable, n) * workloads for n in sizes}
    peak = _rss_bytes() + max((peak_bytes(cfg, usable, n) for n in sizes), default=0)
    return Estimate(sum(per_size.values()), per_size, peak, os.cpu_count() or 1, cal.n)
