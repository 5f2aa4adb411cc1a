"""``viewer bench``: workloads, interleaved measurements, tables, CSV and plots; every ratio against the
multi-core linear scan (:data:`BASELINE`)."""

from .result import IndexResult
from .report import BASELINE, COLUMNS, format_table, write_csv
from .run import BenchConfig, IndexSpec, parse_index_spec, run_bench
from .workloads import Workload, camera_points, make_workload, scene_workload

__all__ = [
    "BASELINE",
    "COLUMNS",
    "BenchConfig",
    "IndexResult",
    "IndexSpec",
    "Workload",
    "camera_points",
    "format_table",
    "make_workload",
    "parse_index_spec",
    "run_bench",
    "scene_workload",
    "write_csv",
]
