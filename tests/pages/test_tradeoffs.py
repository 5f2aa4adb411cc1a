"""The report's trade-off points from bench rows: query time against bytes an object, and update cost against query
time (move_many at the smallest share moving, else a single move), rows without a measure left out."""

from __future__ import annotations

import math

from viewer.pages.report import tradeoff_points, update_cost


def test_update_cost_is_move_many_at_the_smallest_share_else_a_single_move():
    row = {"dynamic_50pct_move_ms": 9.0, "dynamic_10pct_move_ms": 2.0, "move_per_s": 1e6}
    assert update_cost(row) == (2.0, "move_many at 10% moving (ms a frame)")
    assert update_cost({"move_per_s": 4e5}) == (2.5, "a single move (us)")
    assert update_cost({"move_per_s": None, "dynamic_10pct_move_ms": math.nan}) is None


def test_rows_without_a_query_time_or_a_cost_are_left_out():
    rows = [
        {"workload": "w", "index": "octree", "query_median_us": 3.0, "bytes_per_object": 50.0,
         "dynamic_10pct_move_ms": 1.5},
        {"workload": "w", "index": "scan", "query_median_us": 20.0, "bytes_per_object": 68.0,
         "dynamic_10pct_move_ms": None},
        {"workload": "w", "index": "broken", "query_median_us": None, "bytes_per_object": 10.0},
    ]
    memory, updates, unit = tradeoff_points(rows)
    assert [(p.index, p.x, p.y) for p in memory] == [("octree", 50.0, 3.0), ("scan", 68.0, 20.0)]
    assert [(p.index, p.x, p.y) for p in updates] == [("octree", 3.0, 1.5)]
    assert unit == "move_many at 10% moving (ms a frame)"
