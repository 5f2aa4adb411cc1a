"""The server-tick workload: K moving clients over one world, each asking every tick which objects it
should receive (a per-object view distance, as Unreal's ``NetCullDistanceSquared``).

Per index and K the tick is timed twice, interleaved with the other indexes in a balanced order: as K
single queries (``query_into`` once per client) and as one batch (``query_many_into``, where an index may
share its work among the clients). The two answers are compared on the first tick of every run, so a
batch that is fast and wrong never makes the table.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..timing.interleave import balanced_orders
from ..index import QueryOverflow, SphereIndex

__all__ = ["LAYOUTS", "ClientsResult", "client_paths", "measure_clients", "shares_work"]

#: how the clients are placed: over the whole world, or crowded into a few hot spots
LAYOUTS = ("spread", "hotspots")


def client_paths(centres: np.ndarray, k: int, ticks: int, layout: str, seed: int, step: float = 5.0,
                 spots: int = 4) -> np.ndarray:
    """(ticks, k, 3) float64 client positions, world units: each client a camera on its own path.

    ``spread``: clients start uniformly in the box of ``centres`` and fly straight at ``step`` world units
    a tick, reflected by the box's walls. ``hotspots``: ``spots`` hot spots at objects' positions (so in
    the dense regions); each client starts within 50 units of one and wanders by a random walk of
    ``step`` a tick (a crowd at a point of interest)."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
    rng = np.random.default_rng(seed + 104729 * k)
    if len(centres):
        lo, hi = centres.min(0), centres.max(0)
    else:
        lo, hi = np.full(3, -1.0), np.full(3, 1.0)
    out = np.empty((ticks, k, 3))
    if layout == "spread":
        pos = rng.uniform(lo, hi, (k, 3))
        vel = rng.normal(0.0, 1.0, (k, 3))
        vel *= step / np.maximum(np.linalg.norm(vel, axis=1, keepdims=True), 1e-12)
        for t in range(ticks):
            out[t] = pos
            pos = pos + vel
            below, above = pos < lo, pos > hi
            pos = np.where(below, 2 * lo - pos, np.where(above, 2 * hi - pos, pos))
            vel = np.where(below | above, -vel, vel)
        return out
    hot = centres[rng.integers(0, len(centres), spots)] if len(centres) else rng.uniform(lo, hi, (spots, 3))
    pos = hot[rng.integers(0, spots, k)] + rng.uniform(-50.0, 50.0, (k, 3))
    for t in range(ticks):
        out[t] = pos
        pos = pos + rng.uniform(-step, step, (k, 3))
    return out


def shares_work(ix) -> bool:
    """Whether ``ix`` answers a batch with work shared among its points (an index overriding
    ``_query_many``, or a GPU dispatch: ``shares_work = True``), rather than the contract's point-by-point
    loop."""
    if not isinstance(ix, SphereIndex):
        return bool(getattr(ix, "shares_work", False))
    return type(ix)._query_many is not SphereIndex._query_many


@dataclass
class ClientsResult:
    """One index at one K: per-tick times (us) of K single queries and of one batch, and what they found."""

    index: str
    k: int
    shared: bool
    single_us: list[float] = field(default_factory=list)
    batch_us: list[float] = field(default_factory=list)
    visible: int = 0  # ids returned over all ticks and clients (by the batch)

    def _median(self, xs: list[float]) -> float:
        return float(np.median(xs)) if xs else float("nan")

    @property
    def single_tick_us(self) -> float:
        return self._median(self.single_us)

    @property
    def batch_tick_us(self) -> float:
        return self._median(self.batch_us)

    @property
    def batch_p99_us(self) -> float:
        return float(np.percentile(self.batch_us, 99)) if self.batch_us else float("nan")

    def row(self) -> dict:
        ticks = len(self.batch_us)
        return {
            "index": self.index,
            "k": self.k,
            "shared_walk": int(self.shared),
            "ticks": ticks,
            "single_tick_us": round(self.single_tick_us, 2),
            "batch_tick_us": round(self.batch_tick_us, 2),
            "batch_p99_us": round(self.batch_p99_us, 2),
            "single_per_client_us": round(self.single_tick_us / self.k, 3),
            "batch_per_client_us": round(self.batch_tick_us / self.k, 3),
            "batch_x_single": round(self.single_tick_us / self.batch_tick_us, 3) if self.batch_us else float("nan"),
            "visible_per_client": round(self.visible / max(1, ticks * self.k), 1),
        }


class _Buffers:
    """Output arrays per index, grown when a query overflows (never inside a timed call twice)."""

    def __init__(self, k: int) -> None:
        self.out = np.empty(4096, dtype=np.int64)
        self.offsets = np.empty(k + 1, dtype=np.int64)

    def singles(self, ix: SphereIndex, pts: np.ndarray) -> tuple[float, int]:
        t0 = time.perf_counter()
        total = 0
        out = self.out
        for p in pts:
            try:
                total += ix.query_into(p, out)
            except QueryOverflow as exc:  # grown, and this tick's time thrown away by the caller
                self.out = np.empty(2 * exc.needed, dtype=np.int64)
                return -1.0, 0
        return time.perf_counter() - t0, total

    def batch(self, ix: SphereIndex, pts: np.ndarray) -> tuple[float, int]:
        t0 = time.perf_counter()
        try:
            total = ix.query_many_into(pts, self.offsets, self.out)
        except QueryOverflow as exc:
            self.out = np.empty(2 * exc.needed, dtype=np.int64)
            return -1.0, 0
        return time.perf_counter() - t0, total


def _check_batch(name: str, ix: SphereIndex, pts: np.ndarray) -> None:
    offsets, ids = ix.query_many(pts)
    for j, p in enumerate(pts):
        if not np.array_equal(ids[offsets[j]:offsets[j + 1]], ix.query(p)):
            raise AssertionError(f"{name}: query_many differs from query for client {j} at {p.tolist()}")


def measure_clients(built: dict, paths: np.ndarray, budget_s: float = 20.0,
                    progress=None) -> list[ClientsResult]:
    """Time every index of ``built`` over ``paths`` ((ticks, K, 3) client positions): per tick, in a
    balanced order over the indexes, K single queries then one batch (the order of the two alternating
    by tick). An index stops after ``budget_s`` seconds of its own (at least 3 ticks), so a slow one
    does not hold the run. ``progress(done)`` is called after each tick."""
    ticks, k, _ = paths.shape
    res = {name: ClientsResult(name, k, shares_work(ix)) for name, ix in built.items()}
    bufs = {name: _Buffers(k) for name in built}
    spent = dict.fromkeys(built, 0.0)
    for name, ix in built.items():
        _check_batch(name, ix, paths[0])
    orders = balanced_orders(len(built))
    items = list(built.items())
    for t in range(ticks):
        pts = np.ascontiguousarray(paths[t])
        for j in orders[t % len(orders)]:
            name, ix = items[j]
            if spent[name] > budget_s and len(res[name].batch_us) >= 3:
                continue
            r, b = res[name], bufs[name]
            both = ((b.singles, r.single_us), (b.batch, r.batch_us))
            for run, times in both if t % 2 == 0 else both[::-1]:
                dt, found = run(ix, pts)
                while dt < 0:  # an output buffer grew: time it again
                    dt, found = run(ix, pts)
                spent[name] += dt
                times.append(dt * 1e6)
                if times is r.batch_us:
                    r.visible += found
        if progress is not None:
            progress(t + 1)
    return list(res.values())
