"""The server-tick workload: K moving clients over one world, each asking every tick which objects it
should receive (a per-object view distance, as Unreal's ``NetCullDistanceSquared``).

Per index and K the tick is timed twice, interleaved with the other indexes in a balanced order: as K
single queries (``query_into`` once per client) and as one batch (``query_many_into``, where an index may
share its work among the clients). The two answers are compared on the first tick of every run, so a
batch that is fast and wrong never makes the table.

:func:`run_clients` is the whole of ``viewer clients`` after its arguments: the workloads built, every index
(and ``gpu``: :class:`viewer.render.gpu_cull.GpuQueries` on a headless GL context of :mod:`viewer.render`)
timed, the table, the verdict per K and ``clients.csv`` / ``clients.json`` written.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..errors import UserError
from ..index import SphereIndex, grown_until_fits
from ..timing.interleave import balanced_orders

__all__ = ["LAYOUTS", "ClientsResult", "check_answer_memory", "check_names", "check_step", "client_paths", "measure_clients", "run_clients",
           "shares_work", "verdict"]

#: clients.json's format: its name and version (1: files before it said so; 2: format, version and provenance)
FORMAT, FORMAT_VERSION = "viewdist-clients", 2

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
    """Output arrays per index, grown when a query overflows: the tick is then run again whole with the
    larger buffer (:func:`viewer.index.grown_until_fits`), so a timed tick never holds a failed call."""

    def __init__(self, k: int) -> None:
        self.out = np.empty(4096, dtype=np.int64)
        self.offsets = np.empty(k + 1, dtype=np.int64)

    @staticmethod
    def _grow(needed: int) -> np.ndarray:
        # an eighth to spare: the next tick's answer is about this one's (doubling would hold twice the answer)
        return np.empty(needed + (needed >> 3) + 1, dtype=np.int64)

    def singles(self, ix: SphereIndex, pts: np.ndarray) -> tuple[float, int]:
        def tick(out: np.ndarray) -> tuple[float, int]:
            t0 = time.perf_counter()
            total = 0
            for p in pts:
                total += ix.query_into(p, out)
            return time.perf_counter() - t0, total

        res, self.out = grown_until_fits(tick, self.out, self._grow)
        return res

    def batch(self, ix: SphereIndex, pts: np.ndarray) -> tuple[float, int]:
        def tick(out: np.ndarray) -> tuple[float, int]:
            t0 = time.perf_counter()
            total = ix.query_many_into(pts, self.offsets, out)
            return time.perf_counter() - t0, total

        res, self.out = grown_until_fits(tick, self.out, self._grow)
        return res


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
                spent[name] += dt
                times.append(dt * 1e6)
                if times is r.batch_us:
                    r.visible += found
        if progress is not None:
            progress(t + 1)
    return list(res.values())


# --------------------------------------------------------------------------- viewer clients, after its arguments


#: bytes a client's visible id costs while a tick is measured: the batch's answer (int64) with an eighth to spare,
#: the first tick's check (a batch answer and its copy, int64) and a shared walk's packed segments (int32)
BYTES_PER_ID = 8 + 1 + 16 + 4
#: clients sampled for :func:`check_answer_memory`
_SAMPLED = 256


def check_answer_memory(ix: SphereIndex, paths: np.ndarray, flag: str) -> None:
    """Refuse with a :class:`UserError` naming ``flag`` when the answers of one tick of ``paths`` ((ticks, K, 3)
    client positions) would not fit in the memory this process may use: the ids a client sees are counted for
    up to 256 clients of the first tick, evenly spread, with ``ix`` (any exact index of the world), and scaled
    to K. A tick's answer is legitimately large where many clients each see much of the world."""
    from ..system.memory import available, format_bytes

    k = paths.shape[1]
    picks = np.unique(np.linspace(0, k - 1, min(k, _SAMPLED)).astype(np.int64))
    seen = sum(ix.query(paths[0, j]).size for j in picks)
    ids = seen * k / picks.size
    need = int(ids * BYTES_PER_ID)
    have, why = available()
    if need > have:
        raise UserError(f"{flag}: a tick's answers hold about {ids:,.0f} ids ({seen / picks.size:,.0f} a client, "
                        f"counted for {picks.size} clients), about {format_bytes(need)} to measure; this process "
                        f"may use {format_bytes(have)} ({why}); give fewer clients")


def check_names(names: list[str]) -> list[str]:
    """The ``--index`` specs of ``names`` (words, each a list by :mod:`viewer.index.specs`' grammar) as their
    labels, distinct, in order, without those whose libraries are missing here (``gpu`` kept: whether a GL
    context can cull is known once it exists); a :class:`UserError` for a bad spec or none."""
    from ..index.specs import known_names, parse_index_list, split_index_list
    from ..render.gpu_cull import GPU

    texts = split_index_list(names)
    if not texts:
        raise UserError(f"--index: unknown index list (empty); choose from {', '.join(known_names())}, {GPU}")
    specs = {s.label: s for s in parse_index_list([t for t in texts if t != GPU])} if set(texts) - {GPU} else {}
    return [t for t in dict.fromkeys(texts) if t == GPU or not specs[t].cls.unavailable()]


def check_step(step: float, ticks: int) -> None:
    """A :class:`UserError` naming --step when ``ticks`` steps of it could carry a client out of the numeric
    domain (a hot-spot client's random walk moves up to ``ticks * step`` world units from its start; half the
    domain is left to the scene's own coordinates)."""
    from ..domain import COORD_LIMIT

    most = COORD_LIMIT / 2 / ticks
    if step > most:
        raise UserError(f"--step {step:g}: {ticks} ticks of it can carry a client {step * ticks:.3g} world units "
                        f"away, outside the numeric domain (|coordinate| <= 2**100); at most {most:.3g} "
                        f"with --ticks {ticks}")


def _gpu_context():
    """A headless GL context (:func:`viewer.render.create_headless_context`) and its shader library for
    ``--index gpu``; a :class:`UserError` when there is none or it cannot cull."""
    from ..render import ShaderLibrary, create_headless_context
    from ..render.gpu_cull import gpu_cull_unavailable

    try:
        ctx = create_headless_context()
    except RuntimeError as exc:
        raise UserError(f"--index gpu needs a GL context: {exc}") from None
    why = gpu_cull_unavailable(ctx)
    if why:
        raise UserError(f"--index gpu: {why}")
    return ctx, ShaderLibrary(ctx)


def _build(name: str, wl, gl):
    """Index ``name`` (a spec's label) over the workload ``wl``, or the GPU's queries on ``gl`` (context, shader library)."""
    from ..index import make_index
    from ..render.gpu_cull import GPU

    if name == GPU:
        from ..render.gpu_cull import GpuQueries

        return GpuQueries(gl[0], gl[1], wl.centres, wl.radii)
    return make_index(name, wl.centres, wl.radii)


def _exact(wl) -> SphereIndex:
    """An exact index of ``wl`` to count answers with when only the GPU is measured."""
    from ..index import INDEXES

    return INDEXES["octree"](wl.centres, wl.radii)


def run_clients(workloads: list, names: list[str], *, ks: list[int], layouts: list[str], ticks: int, step: float,
                budget: float, seed: int, out, config: dict, force: bool = False) -> int:
    """Time every index of ``names`` (checked: :func:`check_names`) on each workload (``workloads``:
    callables making them) at each client count of ``ks`` and layout of ``layouts`` (``ticks`` ticks, clients
    moving ``step`` world units a tick, ``budget`` seconds an index may spend per workload and K); print the
    machine line, the table and the verdict; write ``clients.csv`` and ``clients.json`` into ``out``
    (refused when they exist there unless ``force``, before anything runs; :func:`viewer.files.output.writable_dir`
    checks the directory first; it is removed again when refused or stopped before writing). ``config`` is what
    ``clients.json`` records of the arguments. Returns the exit status (0)."""
    import datetime as _dt
    import sys

    from pathlib import Path

    from ..files.output import filled_dir, refuse_replacing, writable_dir
    from ..index import warm_scope, warm_up
    from ..kernels.compile import reporting
    from ..recording.meta import package_versions
    from ..render.gpu_cull import GPU
    from ..system.machine import machine, machine_line, system
    from ..terminal.progress import Progress

    refuse_replacing([Path(out) / "clients.csv", Path(out) / "clients.json"], f"--out {out}", "viewer clients",
                     force)
    gl = _gpu_context() if GPU in names else None
    # the clients' queries, one by one and as batches, are all it runs of an index: nothing else is compiled
    # (a first run would otherwise compile every entry point of every index, silent after the machine line)
    with warm_scope(("build", "query", "query_many")), filled_dir(out, writable_dir):
        where = machine()
        print(machine_line(where))
        if gl is not None:
            from ..render.context import gl_info

            print(f"gpu: {gl_info(gl[0])} (llvmpipe is the CPU: its figures say nothing about a real GPU)")
        with reporting(sys.stderr):
            warm_up([n for n in names if n != GPU])
        rows: list[dict] = []
        for make in workloads:
            wl = make()
            built = {name: _build(name, wl, gl) for name in names}
            for layout in layouts:
                for k in ks:
                    paths = client_paths(wl.centres, k, ticks, layout, seed, step=step)
                    cpu = [ix for name, ix in built.items() if name != GPU]
                    check_answer_memory(cpu[0] if cpu else _exact(wl), paths, f"--k {k}")
                    bar = Progress(ticks, f"{wl.name} {layout} K={k}", unit="ticks")
                    results = measure_clients(built, paths, budget_s=budget, progress=bar.update)
                    bar.close()
                    for r in results:
                        rows.append({"workload": wl.name, "n": wl.n, "layout": layout, **r.row()})
            for ix in built.values():
                getattr(ix, "release", lambda: None)()  # the GPU's buffers
            del built
        _print(rows)
        for line in verdict(rows):
            print(line)
        _write(rows, out, where, config, system(), package_versions(),
               _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))
    return 0


def verdict(rows: list[dict]) -> list[str]:
    """Per workload, layout and K: the fastest way to serve a tick (index and single / batch), and how much
    the best batch that shares its work saves against the same index's singles."""
    import math

    lines = []
    keys = dict.fromkeys((r["workload"], r["layout"], r["k"]) for r in rows)
    for wl, layout, k in keys:
        group = [r for r in rows if (r["workload"], r["layout"], r["k"]) == (wl, layout, k)]
        best = min(group, key=lambda r: min(r["single_tick_us"], r["batch_tick_us"]))
        how = "batch" if best["batch_tick_us"] <= best["single_tick_us"] else "single queries"
        tick = min(best["single_tick_us"], best["batch_tick_us"])
        best_single = min(group, key=lambda r: r["single_tick_us"])
        line = (f"{wl} {layout} K={k}: fastest {best['index']} ({how}) {tick:,.0f} us a tick, "
                f"{tick / k:,.2f} us a client; best single queries {best_single['index']} "
                f"{best_single['single_tick_us']:,.0f} us ({best_single['single_tick_us'] / tick:.2f}x)")
        shared = [r for r in group
                  if r["shared_walk"] and math.isfinite(r["batch_x_single"]) and r["batch_x_single"] > 0]
        if shared:  # batch_x_single: singles over batch (above 1: the batch is faster); said as batch / singles
            s = max(shared, key=lambda r: r["batch_x_single"])
            ratio = 1.0 / s["batch_x_single"]
            if ratio < 1.0:
                line += f"; sharing saves most on {s['index']}: its batch takes {ratio:.2f}x its singles' time"
            else:
                line += (f"; sharing saves nothing here: the best batch that shares its work, {s['index']}'s, takes "
                         f"{ratio:.2f}x its singles' time")
        lines.append(line)
    return lines


_SHOWN = (("index", "index", "{}"), ("k", "K", "{}"), ("shared_walk", "shared", "{}"),
          ("single_tick_us", "singles us", "{:,.0f}"), ("batch_tick_us", "batch us", "{:,.0f}"),
          ("batch_p99_us", "batch p99", "{:,.0f}"), ("single_per_client_us", "us/client", "{:,.2f}"),
          ("batch_per_client_us", "batch us/client", "{:,.2f}"), ("batch_x_single", "batch gain", "{:.2f}x"),
          ("visible_per_client", "visible", "{:,.0f}"))


def _print(rows: list[dict]) -> None:
    groups = dict.fromkeys((r["workload"], r["layout"]) for r in rows)
    for wl, layout in groups:
        print(f"\n{wl}, clients {layout}")
        cells = [[h for _, h, _ in _SHOWN]]
        cells += [[f.format(r[c]) for c, _, f in _SHOWN] for r in rows if (r["workload"], r["layout"]) == (wl, layout)]
        widths = [max(len(row[i]) for row in cells) for i in range(len(_SHOWN))]
        for row in cells:
            print("  ".join(v.rjust(w) for v, w in zip(row, widths)))


def _write(rows, out, where: dict, config: dict, platform: str, packages: dict, date: str) -> None:
    import csv
    import sys

    from ..files.output import atomic_file
    from ..recording.meta import write_json_atomic

    with atomic_file(out / "clients.csv", text=True, newline="") as fh:
        if rows:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    from ..system.provenance import provenance

    write_json_atomic(out / "clients.json", {
        "format": FORMAT, "format_version": FORMAT_VERSION, "provenance": provenance(),
        "machine": {"platform": platform, **where}, "packages": packages, "command": list(sys.argv),
        "date": date, "config": config, "rows": rows,
    })
    print(f"wrote {out / 'clients.csv'}, {out / 'clients.json'}", file=sys.stderr)
