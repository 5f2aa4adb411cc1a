"""The bench on a scene with visibility ranges (issue 24): each index's query followed by the range filter
the frame runs (:meth:`viewer.frame.ranges.Ranges.filter`: drop the objects nearer than their begin, and HLOD
children whose parent is far enough to stand in for them), timed together and the filter alone, and the
objects per LOD band at each camera point.

The filter is :mod:`viewer.frame.ranges`' own (no cross-fade window: ``fade`` 0, so each HLOD group shows
either its children or its proxy); the bands are each in-range object's ``#{l : lod[i, l]**2 <= d2}``, over
the objects in range at the point (the bench has no frustum: a frame's ``band0..band3`` count only the drawn).
A scene without ranges is not measured here: its bench is unchanged.
"""

from __future__ import annotations

import time

import numpy as np

from viewer.frame.ranges import BAND_COLUMNS, Ranges
from viewer.index import SphereIndex, grown_until_fits
from viewer.timing.heap import collector_off

from .measure import turns, twice_needed
from .result import IndexResult
from .workloads import Workload

__all__ = ["measure_ranges", "workload_ranges"]


def workload_ranges(wl: Workload) -> Ranges | None:
    """The range filter of ``wl``'s scene (over its centres as loaded, no cross-fade), None when the scene has
    no begin, no LOD switches and no parents."""
    if not wl.has_ranges:
        return None
    r = Ranges(wl, wl.centres, fade=0.0)
    return r if (r.active or r.has_lod) else None


def measure_ranges(built: dict[str, SphereIndex], wl: Workload, ranges: Ranges, res: dict[str, IndexResult],
                   block: int = 10, rounds: int = 1) -> None:
    """Time, at every camera point of ``wl`` and for every index of ``built``, ``query_into`` followed by
    ``ranges.filter`` (``perf_counter_ns`` around both, and around the filter alone), interleaved as
    :func:`viewer.bench.measure.measure_static` does (blocks of ``block`` points, the turns' order changing
    by block); fill ``res[name]``'s ``range_query_us`` / ``range_filter_us`` ((rounds, Q) us), and, summed
    over the queries, ``in_range``, ``band_sums`` ((4,) int64: bands 0, 1, 2, 3 and coarser) and ``proxies``
    (in-range objects that are some object's parent). Must run before any object moves (the filter reads
    ``wl.centres``)."""
    pts = [tuple(map(float, p)) for p in wl.points]  # as measure_static queries
    nq = len(pts)
    out = {name: np.empty(max(1024, wl.n // 8), dtype=np.int64) for name in built}
    both = {name: np.empty(rounds * nq) for name in built}
    alone = {name: np.empty(rounds * nq) for name in built}
    for name in built:
        r = res[name]
        r.in_range, r.proxies = 0, 0
        r.band_sums = np.zeros(len(BAND_COLUMNS), dtype=np.int64)
    for name, ix in built.items():  # warm: the filter's kernel and each index's buffers
        for p in pts[:3]:
            _query_filter(ix, ranges, p, out, name)
    with collector_off():  # no collection inside a timed query
        blocks = range(0, nq, block)
        for rnd, b0 in ((rnd, b0) for rnd in range(rounds) for b0 in blocks):
            at = rnd * nq
            for name, ix in turns(built, rnd * len(blocks) + b0 // block):
                r = res[name]
                for q in range(b0, min(nq, b0 + block)):
                    p = pts[q]
                    t0, t1, t2, m = _query_filter(ix, ranges, p, out, name)
                    both[name][at + q] = (t2 - t0) / 1e3
                    alone[name][at + q] = (t2 - t1) / 1e3
                    if rnd == 0:  # the counts once per point
                        buf = out[name]
                        ranges.select_bands(buf, m, p)
                        c = ranges.counts(buf[:m])
                        r.in_range += m
                        r.band_sums += [c[b] for b in BAND_COLUMNS]
                        r.proxies += c["proxies"]
    for name in built:
        res[name].range_query_us = both[name].reshape(rounds, nq)
        res[name].range_filter_us = alone[name].reshape(rounds, nq)


def _query_filter(ix: SphereIndex, ranges: Ranges, p: tuple, out: dict, name: str) -> tuple[int, int, int, int]:
    """Query ``ix`` at ``p`` into ``out[name]`` (grown on overflow, the failed call not timed), then filter the
    answer in place: ``(t0, t1, t2, m)``, perf_counter_ns before the query, between, after the filter, and the
    count kept."""

    def timed(buf: np.ndarray) -> tuple[int, int, int, int]:
        t0 = time.perf_counter_ns()
        k = ix.query_into(p, buf)  # an overflow raises here: grown_until_fits grows the buffer and times it all again
        t1 = time.perf_counter_ns()
        m = ranges.filter(buf, k, p)
        return t0, t1, time.perf_counter_ns(), m

    result, out[name] = grown_until_fits(timed, out[name], twice_needed)
    return result
