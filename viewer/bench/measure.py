"""Measurements of indexes on a workload, interleaved so a noisy machine treats them alike.

Every timing uses ``time.perf_counter_ns`` around the work only; JIT compilation never lands in a
measurement (every index class is warmed on a tiny instance first, and each built index answers a few
queries before timing starts).
"""

from __future__ import annotations

import subprocess
import sys
import time

import numpy as np

from viewer.index import SphereIndex, grown_until_fits
from viewer.timing.heap import collector_off
from viewer.timing.interleave import balanced_orders

from .result import IndexResult
from .updates import measure_updates
from .workloads import Workload

__all__ = ["CONTIGUOUS", "IndexResult", "SCATTER", "measure_dynamic", "measure_first_build", "measure_static",
           "measure_updates", "turns", "warm_up"]


def warm_up(names: list[str]) -> None:
    """Compile (or load from numba's cache) every kernel of the named indexes (keys of ``INDEXES``)."""
    from viewer.index import warm_up as _warm

    _warm(names)


_FIRST_BUILD = """
import sys, time
import numpy as np
from viewer.index import parse_index_spec
c, r = np.load(sys.argv[1]), np.load(sys.argv[2])
spec = parse_index_spec(sys.argv[3])
t0 = time.perf_counter()
spec.build(c, r)
print(time.perf_counter() - t0)
"""


def measure_first_build(spec: str, centres_npy: str, radii_npy: str, timeout_s: float = 900.0) -> float:
    """Seconds the first build of the index ``spec`` names (its text, :attr:`viewer.index.IndexSpec.text`:
    resolved in the fresh process as in this one) takes in a fresh Python process (the user's first
    wait: numba's cached kernels load and the first calls dispatch; imports are not counted), from the
    workload's arrays saved as ``.npy`` files. NaN if the process fails or times out."""
    cmd = [sys.executable, "-c", _FIRST_BUILD, centres_npy, radii_npy, spec]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
        return float(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else float("nan")
    except (subprocess.TimeoutExpired, ValueError, IndexError):
        return float("nan")


def measure_static(
    built: dict[str, SphereIndex], wl: Workload, block: int = 10, baseline: str = "scan", rounds: int = 1
) -> tuple[dict[str, IndexResult], np.ndarray, np.ndarray]:
    """Query times, counts and memory, and two floors, (rounds * Q,) us each:

    - the output floor: the time to copy the visible objects' 32-byte records with ``np.take``
      (brute force's answer: ``brute`` must be in ``built``);
    - the read floor: the time the ``baseline`` scan takes to read its prefilter arrays once, with its
      own chunks and threads (:meth:`LinearScan.read_floor`), timed right after the scan's own turn so
      its caches are as the scan's were (NaN when ``baseline`` is not in ``built``).

    The indexes take turns in blocks of ``block`` consecutive camera points: a noisy machine treats
    them alike, and each runs with its own data in cache, as in a frame loop. (Point-by-point turns
    would charge every query for the caches brute force's million-element passes just flushed, whatever
    the index.) The order of the turns changes from block to block (:func:`turns`) so that each index
    follows every other equally often: in a fixed order the index after ``brute`` alone paid for the caches
    it flushed, enough to swap two indexes' places.

    ``rounds`` passes over the points, the turns' orders continuing from one to the next: a median over
    several passes is less at the mercy of what the machine did during one (a pass is short, and the
    medians of one index moved from one single-pass run to the next)."""
    pts = [tuple(map(float, p)) for p in wl.points]
    out = {name: np.empty(max(1024, wl.n // 8), dtype=np.int64) for name in built}
    res = {
        name: IndexResult(name, wl.name, wl.n, build_s=ix._bench_build_s, bytes_per_object=ix.nbytes() / max(1, wl.n),
                          threads=int(getattr(ix, "threads", 1)))
        for name, ix in built.items()
    }
    nq = len(pts)
    times = {name: np.empty(rounds * nq) for name in built}
    records = np.zeros((wl.n, 4))
    rec_buf = np.empty((max(1024, wl.n // 8), 4))
    floor = np.empty(rounds * nq)
    read = np.full(rounds * nq, np.nan)
    scan = built.get(baseline)
    answers: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * nq
    for name, ix in built.items():  # warm caches and any lazy work (e.g. a rebuild on first query)
        for p in pts[:3]:
            _query(ix, p, out, name)
    if scan is not None:
        scan.read_floor()
    with collector_off():  # no collection inside a timed query
        blocks = range(0, nq, block)
        for rnd, b0 in ((rnd, b0) for rnd in range(rounds) for b0 in blocks):
            span = range(b0, min(nq, b0 + block))
            at = rnd * nq  # this pass's first sample
            for name, ix in turns(built, rnd * len(blocks) + b0 // block):
                r = res[name]
                for q in span:
                    p = pts[q]
                    (k, t0, t1), buf = grown_until_fits(lambda b: timed_query(ix, p, b), out[name], twice_needed)
                    out[name] = buf
                    times[name][at + q] = (t1 - t0) / 1e3
                    st = ix.stats
                    r.visible += k
                    r.candidates += st.candidates
                    r.nodes += st.nodes_visited
                    r.max_per_level = max(r.max_per_level, st.max_nodes_per_level)
                    if name == "brute":
                        answers[q] = buf[:k].copy()
                if ix is scan:
                    for q in span:
                        t0 = time.perf_counter_ns()
                        scan.read_floor()
                        read[at + q] = (time.perf_counter_ns() - t0) / 1e3
            for q in span:
                ids = answers[q]
                if ids.size > rec_buf.shape[0]:
                    rec_buf = np.empty((2 * ids.size, 4))
                np.take(records, ids, axis=0, out=rec_buf[: ids.size])  # warm, as the queries were
                t0 = time.perf_counter_ns()
                np.take(records, ids, axis=0, out=rec_buf[: ids.size])
                floor[at + q] = (time.perf_counter_ns() - t0) / 1e3
    for name in built:
        res[name].query_us = times[name].reshape(rounds, nq)
        res[name].floor_us = floor.reshape(rounds, nq)
    return res, floor, read


def turns(built: dict[str, SphereIndex], k: int) -> list[tuple[str, SphereIndex]]:
    """The indexes in the order of turn ``k``: row ``k`` of a balanced Latin square over them."""
    items = list(built.items())
    rows = balanced_orders(len(items))
    return [items[j] for j in rows[k % len(rows)]]


def _query(ix, p, out, name):
    k, out[name] = grown_until_fits(lambda b: ix.query_into(p, b), out[name], twice_needed)
    return k


def timed_query(ix: SphereIndex, p, buf: np.ndarray) -> tuple[int, int, int]:
    """``ix.query_into(p, buf)`` timed: ``(k, t0, t1)``, ``time.perf_counter_ns`` right before and right after
    the call, nothing else between. Called through :func:`~viewer.index.grown_until_fits`, a query that
    overflowed its buffer is timed again, in full, after the buffer grows."""
    t0 = time.perf_counter_ns()
    k = ix.query_into(p, buf)
    return k, t0, time.perf_counter_ns()


def twice_needed(needed: int) -> np.ndarray:
    """A query buffer (int64) twice as large as an overflowed query needed: the bench's growth."""
    return np.empty(2 * needed, dtype=np.int64)


#: the floors' names among the turns of :func:`measure_dynamic` (never an index's label: those are specs)
SCATTER, CONTIGUOUS = "(scatter floor)", "(contiguous floor)"


def measure_dynamic(
    built: dict[str, SphereIndex], wl: Workload, shares: list[float], frames: int, seed: int,
    budget_s: float = 20.0, drift: float = 1.0,
) -> tuple[dict[str, dict[float, np.ndarray]], dict[str, np.ndarray]]:
    """Per-frame cost (ms, each of ``frames``: (F,) float64 per index and share) with a share of the objects
    drifting every frame (each mover at its own constant velocity, each axis normal with std ``drift`` world
    units a frame): ``move_many`` of the movers, then one query at the frame's camera point (the first
    frame is the first move since the build, as a game's first moving frame follows its load). Interleaved by
    frame, and with the two floors of the update (:class:`viewer.kernels.floors.UpdateFloors`: the movers' rows
    written at their ids, and one after another) taking their turns among the indexes. An index whose frames
    have taken ``budget_s`` seconds stops there (its figures are over the frames it ran). The order of the turns
    changes by frame as in :func:`measure_static`.

    Returns ``(frames, where)``: ``frames[name][share]`` the frames' cost; under ``(name, "move")`` the
    ``move_many`` alone, and under :data:`SCATTER` and :data:`CONTIGUOUS` the floors, (F,) ms each; ``where``
    per index, where its objects are afterwards ((N, 3) centres)."""
    from ..kernels.floors import UpdateFloors

    rng = np.random.default_rng(seed + 1)
    out = {name: np.empty(max(1024, wl.n // 8), dtype=np.int64) for name in built}
    result: dict = {name: {} for name in (*built, *((name, "move") for name in built), SCATTER, CONTIGUOUS)}
    where = {name: wl.centres.copy() for name in built}
    floors = UpdateFloors(wl.radii)
    runs = {**built, SCATTER: floors.scatter, CONTIGUOUS: floors.contiguous}
    for share in shares:
        m = max(1, int(share * wl.n))
        movers = rng.choice(wl.n, m, replace=False)
        floors.movers(movers)
        vel = rng.normal(0.0, drift, (m, 3))  # world units per frame
        pos = {name: (where[name] if name in built else wl.centres)[movers] for name in runs}  # fancy indexing copies
        times: dict = {name: [] for name in result}
        for f in range(frames):
            p = tuple(map(float, wl.points[f % len(wl.points)]))
            for name, ix in turns(runs, f):
                if sum(times[name]) > 1e3 * budget_s:
                    continue
                pos[name] += vel
                if name not in built:  # a floor: the write alone
                    t0 = time.perf_counter_ns()
                    ix(pos[name])
                    times[name].append((time.perf_counter_ns() - t0) / 1e6)
                    continue
                t0 = time.perf_counter_ns()
                ix.move_many(movers, pos[name])
                t1 = time.perf_counter_ns()
                _query(ix, p, out, name)
                times[name].append((time.perf_counter_ns() - t0) / 1e6)
                times[name, "move"].append((t1 - t0) / 1e6)
        for name in result:
            result[name][share] = np.asarray(times[name], dtype=np.float64)
        for name in built:
            if times[name]:
                where[name][movers] = pos[name]
    return result, where
