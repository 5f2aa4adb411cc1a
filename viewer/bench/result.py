"""The figures of one index on one workload (:class:`IndexResult`), as the bench's measurements fill them and
its report reads them."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["IndexResult"]


@dataclass
class IndexResult:
    """Figures of one index on one workload (times in the units their names say)."""

    index: str
    workload: str
    n: int
    build_s: float = float("nan")  # in this (warm) process
    build_first_s: float = float("nan")  # the first build in a fresh process
    threads: int = 1  # threads a query runs on
    query_us: np.ndarray = field(default_factory=lambda: np.zeros(0))  # (rounds, Q) per query
    floor_us: np.ndarray = field(default_factory=lambda: np.zeros(0))  # (rounds, Q) output floor of each query
    visible: int = 0  # summed over the queries
    candidates: int = 0
    nodes: int = 0
    max_per_level: int = 0
    bytes_per_object: float = float("nan")
    # the update phases (viewer.bench.updates): calls the index actually received (objects, for move_many)
    # and the seconds they took; each rate below is the one over the other
    removes: int = 0
    remove_s: float = float("nan")
    inserts: int = 0
    insert_s: float = float("nan")
    moves: int = 0  # one move() call each
    move_s: float = float("nan")
    batch_moves: int = 0  # objects moved by move_many() calls (the batch API)
    move_many_s: float = float("nan")
    # the update phases' raw samples: phase (remove, insert, move, move_many) -> us a call, averaged over each group
    # of 64 calls (each move_many call alone)
    update_us: dict = field(default_factory=dict)
    dynamic_frames_ms: dict = field(default_factory=dict)  # share moving -> (F,) ms of each frame (update + query)
    dynamic_move_ms: dict = field(default_factory=dict)  # share moving -> (F,) ms of each frame's move_many alone
    # the workload's update floors measured in the same frames (viewer.kernels.floors): share -> (F,) ms
    scatter_floor_ms: dict = field(default_factory=dict)
    contiguous_floor_ms: dict = field(default_factory=dict)
    note: str = ""
    # a scene with visibility ranges (viewer.bench.ranges): per query (rounds, Q) us, the query followed by the
    # range filter, and the filter alone; summed over the queries: objects in range, per LOD band (band 0, 1,
    # 2, 3 and coarser) and HLOD proxies among them
    range_query_us: np.ndarray = field(default_factory=lambda: np.zeros(0))
    range_filter_us: np.ndarray = field(default_factory=lambda: np.zeros(0))
    in_range: int = 0
    band_sums: np.ndarray = field(default_factory=lambda: np.zeros(4, dtype=np.int64))
    proxies: int = 0

    def dynamic_ms(self, share: float, q: float = 50.0) -> float:
        """The ``q``-th percentile (numpy's default, linear interpolation) of the frames of ``share`` moving,
        ms: 50 the median, 100 the worst frame (NaN when that share was not measured)."""
        t = self.dynamic_frames_ms.get(share)
        return float(np.percentile(t, q)) if t is not None and len(t) else float("nan")

    def move_ms(self, share: float, q: float = 50.0) -> float:
        """The ``q``-th percentile of the frames' ``move_many`` alone at ``share`` moving, ms (NaN if none)."""
        t = self.dynamic_move_ms.get(share)
        return float(np.percentile(t, q)) if t is not None and len(t) else float("nan")

    def floor_ms(self, share: float, contiguous: bool = False) -> float:
        """The median of the workload's scatter (or ``contiguous``) floor at ``share`` moving, ms (NaN if none)."""
        t = (self.contiguous_floor_ms if contiguous else self.scatter_floor_ms).get(share)
        return float(np.median(t)) if t is not None and len(t) else float("nan")

    @property
    def remove_per_s(self) -> float:
        """Objects removed per second, one call each (NaN when none was)."""
        return _rate(self.removes, self.remove_s)

    @property
    def insert_per_s(self) -> float:
        """Objects inserted per second, one call each (NaN when none was)."""
        return _rate(self.inserts, self.insert_s)

    @property
    def move_per_s(self) -> float:
        """Objects moved per second, one move() call each (NaN when none was)."""
        return _rate(self.moves, self.move_s)

    @property
    def move_many_per_s(self) -> float:
        """Objects moved per second by move_many() calls (NaN when none was)."""
        return _rate(self.batch_moves, self.move_many_s)

    @property
    def median_us(self) -> float:
        """The median query time over every point and pass, microseconds (NaN without queries)."""
        return float(np.median(self.query_us)) if self.query_us.size else float("nan")

    def median_of_us(self, kind: slice) -> float:
        """The median over the camera points ``kind`` (a slice of :func:`point_kinds`), every pass."""
        t = self.query_us[..., kind]
        return float(np.median(t)) if t.size else float("nan")

    @property
    def x_floor(self) -> float:
        """The median over the queries of each one's time over its own output floor (the same point, the
        same pass). Not the ratio of the two medians: on a world whose points differ a hundredfold in
        output, those fall at different points, and the ratio of the medians pairs a query at one point with
        the copy at another."""
        if not self.query_us.size or self.floor_us.shape != self.query_us.shape:
            return float("nan")
        return float(np.median(self.query_us / np.maximum(self.floor_us, 1e-3)))

    @property
    def p95_us(self) -> float:
        """The 95th percentile of the query times over every point and pass, microseconds (NaN without
        queries)."""
        return float(np.percentile(self.query_us, 95)) if self.query_us.size else float("nan")

    @property
    def mean_visible(self) -> float:
        """Objects a query returned, on average over the timed queries (0 without queries)."""
        return self.visible / max(1, self.query_us.size)

    @property
    def cand_per_visible(self) -> float:
        """Candidates tested per object returned (1.0: no wasted test; NaN when nothing was visible)."""
        return self.candidates / self.visible if self.visible else float("nan")

    @property
    def mean_nodes(self) -> float:
        """Index nodes a query visited, on average over the timed queries (0 without queries)."""
        return self.nodes / max(1, self.query_us.size)


def _rate(count: int, seconds: float) -> float:
    """``count`` per second over ``seconds``; NaN for no work (never a rate of nothing)."""
    return count / max(seconds, 1e-9) if count > 0 else float("nan")
