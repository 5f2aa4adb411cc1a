"""Benchmark sweeps: a grid of ``viewer bench`` tasks fanned out on Dask, merged into one CSV.

:func:`load_sweep` reads a sweep file (:mod:`viewer.sweep.spec`), :func:`run_sweep` runs its tasks on a Dask
cluster (:mod:`viewer.sweep.run`; dask is imported only there), :func:`run_task` is what a worker executes.
"""

from .results import columns
from .run import SweepOutcome, estimate, plan, run_sweep
from .spec import AXES, Sweep, Task, bundled_sweeps, load_sweep
from .task import machine, run_task

__all__ = ["AXES", "Sweep", "SweepOutcome", "Task", "bundled_sweeps", "columns", "estimate", "load_sweep",
           "machine", "plan", "run_sweep", "run_task"]
