"""``viewer bench``: workloads, interleaved measurements, tables, CSV and plots; every ratio against the
multi-core linear scan (:data:`BASELINE`).

Names are exported lazily, as :mod:`viewer.frame`'s are: the command's parser takes its argparse types from
:mod:`.checks` without loading numba, so ``viewer --help`` and a refused argument answer at once.
"""

from __future__ import annotations

from importlib import import_module

_EXPORTS = {
    "BASELINE": "report", "COLUMNS": "report", "format_table": "report", "write_csv": "report",
    "BenchConfig": "run", "IndexSpec": "run", "parse_index_spec": "run", "run_bench": "run",
    "IndexResult": "result",
    "Workload": "workloads", "camera_points": "workloads", "make_workload": "workloads", "scene_workload": "workloads",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'viewer.bench' has no attribute {name!r}")
