"""Kernels compiled on demand, without GL: a warm-up compiles only the entry points asked for (the rest later, never
skipped), compilation is reported only when numba really compiles, and editing a module that imports
numba only inside a function recompiles no kernel."""

from __future__ import annotations

import io

import numba
import numpy as np
import pytest

from viewer.kernels.compile import HEADER, compile_group, reporting
from viewer.kernels.jit import kernel_digest
from viewer.index import ENTRY_POINTS, BruteForce, warm_scope, warm_up


def _spy(calls: list) -> type:
    """A brute-force index class of its own (its own warm-up flags) that logs its public operations."""

    class Spy(BruteForce):
        name = "spy"

        def query_into(self, point, out):
            calls.append("query")
            return super().query_into(point, out)

        def query_many_into(self, points, offsets, out):
            calls.append("query_many")
            return super().query_many_into(points, offsets, out)

        def insert(self, centre, radius):
            calls.append("insert")
            return super().insert(centre, radius)

        def move(self, id, centre, radius=None):
            calls.append("move")
            return super().move(id, centre, radius)

        def move_many(self, ids, centres, radii=None):
            calls.append("move_many")
            return super().move_many(ids, centres, radii)

        def remove(self, id):
            calls.append("remove")
            return super().remove(id)

    return Spy


def test_a_warm_up_runs_only_the_entry_points_asked_for_and_the_rest_later():
    calls: list = []
    Spy = _spy(calls)
    Spy.warm_up(entry_points=["query"])
    assert set(calls) == {"query"}
    calls.clear()
    Spy.warm_up(entry_points=["query"])  # done: nothing runs again
    assert calls == []
    Spy.warm_up(entry_points=["move_many"])  # more asked for: it runs
    assert set(calls) == {"move_many"}
    calls.clear()
    Spy.warm_up()  # all of them, as before the option existed
    assert set(calls) == {"query", "query_many", "insert", "move", "move_many", "remove"}
    assert Spy.__dict__.get("_warmed_up") is True
    with pytest.raises(ValueError, match="nosuch"):
        Spy.warm_up(entry_points=["nosuch"])
    assert set(ENTRY_POINTS) == {"build", "query", "query_many", "insert", "move", "move_many", "remove"}


def test_a_scope_limits_the_warm_up_of_every_build_and_a_build_after_it_completes_it():
    calls: list = []
    Spy = _spy(calls)
    c = np.zeros((4, 3))
    r = np.ones(4)
    with warm_scope(["query", "move_many"]):
        Spy(c, r)  # a build warms up: only what the scope names
        assert set(calls) == {"query", "move_many"}
        calls.clear()
        Spy(c, r)
        assert calls == []
    Spy(c, r)  # outside the scope: every entry point, so nothing compiles later in a timed loop
    assert {"query_many", "insert", "move", "remove"} <= set(calls)


def test_the_index_warm_up_takes_entry_points_through_a_scope():
    calls: list = []
    Spy = _spy(calls)
    import viewer.index.brute as brute
    from viewer.index import _CLASSES

    brute.Spy, _CLASSES["spy"] = Spy, ("brute", "Spy")  # registered for this test only
    try:
        with warm_scope(["query"]):
            warm_up(["spy"])  # no entry points named: the scope's
            assert set(calls) == {"query"}
            warm_up(["spy"], entry_points=["move_many"])  # more: with the enclosing scope's
            assert set(calls) == {"query", "move_many"}
    finally:
        del _CLASSES["spy"], brute.Spy


def test_compilation_is_reported_by_group_and_a_warm_call_says_nothing():
    @numba.njit(cache=False)
    def twice(x):
        return 2 * x

    out = io.StringIO()
    with reporting(out):
        with compile_group("demo"):
            assert twice(2) == 4
    text = out.getvalue()
    assert text.startswith(HEADER + "\n"), text
    assert "  demo ... 1 kernel, " in text and "compiled 1 kernel in " in text, text

    out = io.StringIO()
    with reporting(out):
        with compile_group("demo"):
            assert twice(3) == 6  # compiled already: silent
    assert out.getvalue() == ""

    @numba.njit(cache=False)
    def thrice(x):
        return 3 * x

    out = io.StringIO()
    with reporting(out, enabled=False):
        assert thrice(1) == 3
    assert out.getvalue() == ""


def test_a_module_importing_numba_only_inside_a_function_is_not_part_of_the_kernel_key(tmp_path):
    (tmp_path / "kernels.py").write_text("from .jit import njit\n\n@njit\ndef f():\n    return 1\n")
    (tmp_path / "report.py").write_text("def threads():\n    import numba\n    return numba.get_num_threads()\n")
    (tmp_path / "scan.py").write_text("import numba\n")
    before = kernel_digest(tmp_path)
    (tmp_path / "report.py").write_text("def threads():\n    import numba\n    return 2 * numba.get_num_threads()\n")
    assert kernel_digest(tmp_path) == before
    (tmp_path / "scan.py").write_text("import numba\nX = 1\n")
    after_scan = kernel_digest(tmp_path)
    assert after_scan != before
    (tmp_path / "kernels.py").write_text("from .jit import njit\n\n@njit\ndef f():\n    return 2\n")
    assert kernel_digest(tmp_path) != after_scan
