"""``viewer bench``: workloads, interleaved measurements, tables, CSV and plots."""

from .measure import IndexResult
from .report import COLUMNS, format_table, write_csv
from .run import BenchConfig, IndexSpec, parse_index_spec, run_bench
from .workloads import Workload, camera_points, make_workload

__all__ = [
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
    "write_csv",
]
