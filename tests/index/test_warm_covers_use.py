"""A warm-up compiles every signature real use runs: after :func:`viewer.index.warm_up` of every index, indexes
of many blocks, nodes and cells answer queries and batches, move, insert and remove without numba typing a
new signature of any kernel of the package (a kernel compiled for the warm-up's tiny index only, e.g. for a
contiguous view that is strided in a real one, would compile again inside the first timed frame or build)."""

from __future__ import annotations

import sys

import numba
import numpy as np

from viewer.index import INDEXES, make_index, warm_up


def _signatures() -> dict[str, set[str]]:
    found = {}
    for name, module in list(sys.modules.items()):
        if name.startswith("viewer.") and module is not None:
            for attr, value in vars(module).items():
                if isinstance(value, numba.core.registry.CPUDispatcher):
                    found[f"{name}.{attr}"] = set(map(str, value.signatures))
    return found


def test_no_kernel_types_a_new_signature_after_the_warm_up():
    names = [n for n in INDEXES if not INDEXES[n].unavailable()]
    warm_up(names)
    before = _signatures()
    rng = np.random.default_rng(1)
    n = 20_000
    c = rng.uniform(-5000, 5000, (n, 3))
    r = 5 * 200 ** (rng.random(n) ** 4)  # heavy-tailed: large objects high in the trees, many cells each
    out = np.empty(n, dtype=np.int64)
    for name in names:
        ix = make_index(name, c, r)
        for p in c[:10]:
            ix.query_into(tuple(p), out)
        ix.query_many_into(c[:40], np.empty(41, dtype=np.int64), out)
        ids = np.arange(0, n, 10)
        ix.move_many(ids, c[ids] + 1.0)
        ix.move_many(ids, c[ids] + 2.0, r[ids] * 1.1)
        i = ix.insert((1.0, 2.0, 3.0), 4.0)
        ix.move(i, (5.0, 5.0, 5.0))
        ix.remove(i)
        ix.move(3, (9.0, 9.0, 9.0), 2.0)
        ix.remove(7)
        for p in c[:10]:
            ix.query_into(tuple(p), out)
    after = _signatures()
    new = {k: sorted(v - before.get(k, set())) for k, v in after.items() if v - before.get(k, set())}
    assert not new, "typed after the warm-up: " + "; ".join(f"{k}: {v[0][:300]}" for k, v in new.items())


def test_an_allocating_kernel_compiles_first_under_a_caller_without_reference_counting():
    """numba lets a kernel that does not set reference counting inherit it from its first caller. The leaf trees'
    batch move (``njit_noref``) reached their leaf split (``njit``, which allocates) before any insert did on the
    first run of ``viewer record dynamic-1m --index kdtree``, and the split failed to compile. Kernels made
    here uncached, so the compile happens in this test whatever the cache holds."""
    from viewer.kernels.jit import njit, njit_noref

    @njit(cache=False)
    def split(n):
        tmp = np.zeros(n)  # a new array returned: needs reference counting
        return tmp

    @njit(cache=False)
    def place(n):
        return split(n).size

    @njit_noref(cache=False)
    def move_batch(n):
        return place(n) + 1

    assert move_batch(4) == 5
