"""The bench's raw samples: every timed query and moving frame, one row each, in ``bench_samples.parquet``
beside ``bench.json``, so a percentile can be recomputed and two runs tested for a difference (the table keeps
only medians and percentiles).

One row per sample (:data:`SAMPLE_COLUMNS`):

- ``workload`` (str), ``n`` (int64 objects), ``index`` (str: the spec's label; empty for a workload's floors);
- ``kind`` (str): ``query`` (one query_into, us), ``output_floor`` (copying that query's answer's records),
  ``frame`` (a moving frame: move_many and one query), ``move`` (its move_many alone), ``scatter_floor`` and
  ``contiguous_floor`` (the update's floors, :mod:`viewer.kernels.floors`); ``remove``, ``insert``, ``move`` (us a
  call, averaged over each group of 64 calls: ``point`` is the group) and ``move_many`` (us a call of up to 10,000
  ids) of the update phases;
- ``share`` (float64: the share of objects moving; NaN for queries), ``round`` (int32: the pass over the camera
  points; 0 for frames), ``point`` (int32: the camera point's place, or the frame's number),
  ``point_kind`` (str: ``at objects`` or ``along the path`` for queries, :func:`point_kinds`; empty for frames);
- ``us`` (float64): the sample, microseconds.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .result import IndexResult
from .workloads import point_kinds

__all__ = ["SAMPLES_FILE", "SAMPLE_COLUMNS", "read_samples", "samples_table", "write_samples"]

#: the raw samples' file, beside bench.json
SAMPLES_FILE = "bench_samples.parquet"

#: the columns and their Arrow types
SAMPLE_COLUMNS = (("workload", "string"), ("n", "int64"), ("index", "string"), ("kind", "string"),
                  ("share", "float64"), ("round", "int32"), ("point", "int32"), ("point_kind", "string"),
                  ("us", "float64"))

_KINDS = ("at objects", "along the path")


def samples_table(results: list[IndexResult]):
    """The samples of ``results`` (every index on every workload) as a ``pyarrow.Table``."""
    import pyarrow as pa

    cols: dict[str, list] = {name: [] for name, _ in SAMPLE_COLUMNS}

    def add(r: IndexResult, index: str, kind: str, share: float, rounds: np.ndarray, points: np.ndarray,
            point_kind: list[str], us: np.ndarray) -> None:
        m = us.size
        cols["workload"].append(np.full(m, r.workload, dtype=object))
        cols["n"].append(np.full(m, r.n, dtype=np.int64))
        cols["index"].append(np.full(m, index, dtype=object))
        cols["kind"].append(np.full(m, kind, dtype=object))
        cols["share"].append(np.full(m, share))
        cols["round"].append(rounds.astype(np.int32))
        cols["point"].append(points.astype(np.int32))
        cols["point_kind"].append(np.asarray(point_kind, dtype=object))
        cols["us"].append(np.asarray(us, dtype=np.float64).ravel())

    floors_done = set()
    for r in results:
        for kind, t in (("query", r.query_us), ("output_floor", r.floor_us)):
            if t.size:
                rounds, q = t.shape
                where = ["" for _ in range(q)]
                for name, sl in zip(_KINDS, point_kinds(q)):
                    for k in range(sl.start or 0, min(sl.stop, q)):
                        where[k] = name
                add(r, r.index, kind, np.nan, np.repeat(np.arange(rounds), q), np.tile(np.arange(q), rounds),
                    where * rounds, t)
        for kind, by_share in (("frame", r.dynamic_frames_ms), ("move", r.dynamic_move_ms)):
            for share, ms in by_share.items():
                f = len(ms)
                add(r, r.index, kind, share, np.zeros(f), np.arange(f), [""] * f, np.asarray(ms) * 1e3)
        for phase, us in r.update_us.items():
            g = len(us)
            add(r, r.index, phase, np.nan, np.zeros(g), np.arange(g), [""] * g, np.asarray(us, dtype=np.float64))
        if r.workload not in floors_done:
            floors_done.add(r.workload)
            for kind, by_share in (("scatter_floor", r.scatter_floor_ms), ("contiguous_floor", r.contiguous_floor_ms)):
                for share, ms in by_share.items():
                    f = len(ms)
                    add(r, "", kind, share, np.zeros(f), np.arange(f), [""] * f, np.asarray(ms) * 1e3)
    arrays = {name: (np.concatenate(cols[name]) if cols[name] else np.zeros(0, dtype=object if t == "string" else t))
              for name, t in SAMPLE_COLUMNS}
    schema = pa.schema([(name, getattr(pa, t)()) for name, t in SAMPLE_COLUMNS])
    return pa.table({name: pa.array(arrays[name], type=schema.field(name).type) for name, _ in SAMPLE_COLUMNS},
                    schema=schema)


def write_samples(results: list[IndexResult], path: str | Path) -> Path:
    """Write :func:`samples_table` of ``results`` to ``path`` (Parquet, whole or not at all)."""
    import pyarrow.parquet as pq

    from ..files.output import atomic_file

    table = samples_table(results)
    with atomic_file(path) as fh:
        pq.write_table(table, fh, compression="zstd")
    return Path(path)


def read_samples(path: str | Path):
    """A bench's raw samples (``bench_samples.parquet``, or the bench directory holding it) as a
    ``pyarrow.Table``."""
    import pyarrow.parquet as pq

    p = Path(path)
    return pq.read_table(p / SAMPLES_FILE if p.is_dir() else p)
