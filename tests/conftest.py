"""Shared fixtures: seeded data, strict numerics, and a report header naming the library versions."""

from __future__ import annotations

import numpy as np
import pytest


def pytest_report_header(config):
    import numba

    lines = [f"numpy {np.__version__}, numba {numba.__version__}"]
    try:
        import moderngl

        lines.append(f"moderngl {moderngl.__version__}")
    except Exception as exc:  # pragma: no cover - reported, not fatal
        lines.append(f"moderngl unavailable: {exc}")
    return lines


def pytest_configure(config):
    """A run writes bytecode even where ``PYTHONDONTWRITEBYTECODE`` is set (some CI images set it). Without it, every
    xdist worker and each of the hundreds of processes the tests start would compile the package's sources again
    (a third of a CPU-second each), and every worker would rewrite every test module's assertions again. The files
    go where numba's kernel cache already goes: ``__pycache__``, which git ignores. Set here, in the process that
    starts the workers, before it starts them."""
    import os
    import sys

    if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
        sys.dont_write_bytecode = False


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: a worker per core and one more. A fair share of the suite waits on a process, a window or
    Xvfb rather than computing, and the extra worker fills that wait (``--maxprocesses`` still caps it)."""
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return cores + 1


#: the kernel groups, each family of groups that share callee kernels together (compiled in two workers, a
#: family's shared kernels would be compiled twice), with the relative cost of compiling it from an empty cache
#: (CPU seconds in one process, as once measured): only their order matters, for splitting them evenly among
#: xdist workers
_COMPILE_S = {("bsp", "bvh", "kdtree", "spheretree"): 57, ("octree",): 30, ("hashgrid", "buckettree", "hgrid"): 22,
              ("coherent",): 15, ("scan",): 9, ("frame",): 8, ("quadtree",): 6, ("looseoctree",): 6, ("rebuild",): 4,
              ("loop32",): 3, ("ckdtree", "rtree"): 1}


def _share_of_kernels(worker: int, workers: int) -> list[str]:
    """The kernel groups worker ``worker`` of ``workers`` compiles first: the costliest family first, each to
    the least loaded worker. A registered index the table does not name (brute force, or one added later) is a
    family of its own, of the least cost: every index is compiled once, in one worker, before the tests, not by
    each worker that meets it."""
    from viewer.index import INDEXES

    named = {n for family in _COMPILE_S for n in family}
    costs = {**_COMPILE_S, **{(n,): 1 for n in sorted(INDEXES) if n not in named}}
    load = [0] * workers
    mine = []
    for family, s in sorted(costs.items(), key=lambda kv: -kv[1]):
        w = load.index(min(load))
        load[w] += s
        if w == worker:
            mine.extend(family)
    return mine


#: a run of at least this many tests shares the kernels out first (a few test files do not: they compile what
#: they use)
_SHARE_FROM = 500


def pytest_collection_modifyitems(config, items):
    """Tests marked ``slow`` run first (in collection order otherwise): xdist hands tests out in order, and a
    test of a minute handed out last runs alone while the other workers wait."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def _shares_folder(config):
    """Where the workers of one run mark their shares done (they share one ``testrunuid``)."""
    import tempfile
    from pathlib import Path

    return Path(tempfile.gettempdir()) / f"viewer-kernel-shares-{config.workerinput['testrunuid']}"


def pytest_sessionfinish(session):
    """A worker takes its marker back; the last one out removes the folder."""
    if not hasattr(session.config, "workerinput"):
        return
    run = _shares_folder(session.config)
    try:
        (run / session.config.workerinput["workerid"]).unlink()
        run.rmdir()
    except OSError:
        pass


#: seconds a worker waits for the others to finish their shares (a worker that died is not waited for longer)
_SHARE_WAIT_S = 600.0


def pytest_collection_finish(session):
    """Under xdist, in a run of the whole suite, each worker first compiles (or loads from numba's cache) its
    own share of the kernels, then waits until every worker has done its share. From a fresh clone the cache is
    empty and every worker would otherwise compile nearly every kernel itself (minutes of compiling); shared
    out, and no test started before the cache is whole, every later test and every process a test starts
    loads them. Warm, loading a share is quick."""
    import os
    import time

    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if not worker.startswith("gw") or workers < 2 or len(session.items) < _SHARE_FROM:
        return
    from viewer.index import INDEXES, warm_up

    for name in _share_of_kernels(int(worker[2:]), workers):
        if name == "frame":
            from viewer.frame.pipeline import warm

            warm()
        elif name in INDEXES and INDEXES[name].unavailable() is None:
            warm_up([name])
    run = _shares_folder(session.config)
    run.mkdir(exist_ok=True)
    (run / worker).touch()
    end = time.monotonic() + _SHARE_WAIT_S
    while len(list(run.glob("gw*"))) < workers and time.monotonic() < end:
        time.sleep(0.2)


@pytest.fixture(autouse=True)
def _strict_numerics():
    import gc

    old = np.seterr(divide="raise", over="raise", invalid="raise", under="ignore")
    yield
    np.seterr(**old)
    gc.unfreeze()  # a session's warm-up freezes the heap for its run (viewer.timing.heap): not for the next test


@pytest.fixture(scope="module")
def gl(request):
    """A headless EGL context (frame kernels warmed) and an offscreen target of the test module's ``W`` x ``H``
    pixels, as ``.ctx``, ``.fbo`` and ``.render`` (the :mod:`viewer.render` package); skipped without EGL."""
    from types import SimpleNamespace

    render = pytest.importorskip("viewer.render")
    from viewer.frame.pipeline import warm

    try:
        ctx = render.create_headless_context()
    except RuntimeError as exc:
        pytest.skip(str(exc))
    warm()
    fbo = render.offscreen_target(ctx, (request.module.W, request.module.H))
    yield SimpleNamespace(ctx=ctx, fbo=fbo, render=render)
    ctx.release()


@pytest.fixture(autouse=True)
def _shared_gl_context_current(request):
    """A test of a shared GL context (``gl``, ``compute_gl``) runs with that context current: a command run in
    this process (:func:`tests.support.cli.run_cli`: ``record``, ``view --headless``) makes a context of its own
    and releases it, leaving none current, and the shared context's next draw would go nowhere."""
    for name in ("gl", "compute_gl"):
        if name in request.fixturenames:
            shared = request.getfixturevalue(name)
            ctx = getattr(shared, "ctx", None) or (shared[0] if isinstance(shared, tuple) else shared)
            ctx.__enter__()  # makes it current; nothing to undo: the next test makes its own current
    yield


@pytest.fixture(scope="module")
def compute_gl():
    """A headless EGL context that runs the GPU culling mode's compute shaders, and its shader library, as
    ``(ctx, ShaderLibrary)``; skipped without EGL or without compute shaders with 64-bit floats."""
    render = pytest.importorskip("viewer.render")
    from viewer.render.gpu_cull import gpu_cull_unavailable

    try:
        ctx = render.create_headless_context()
    except RuntimeError as exc:
        pytest.skip(str(exc))
    why = gpu_cull_unavailable(ctx)
    if why is not None:
        pytest.skip(why)
    yield ctx, render.ShaderLibrary(ctx)
    ctx.release()


@pytest.fixture
def display():
    """A fresh Xvfb display (``":N"``) for a test that opens a real window, stopped afterwards."""
    from .support.xwindow import xvfb_display

    yield from xvfb_display()


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


def pytest_runtest_makereport(item, call):
    """In CI (CI=true) a skipped test is a failure: the GL, window and peer-library tests must run
    on the CI machine exactly as on a developer's, not quietly skip when something is missing."""
    import os

    if os.environ.get("CI", "").lower() not in ("1", "true", "yes"):
        return None
    from _pytest.runner import pytest_runtest_makereport as make

    report = make(item, call)
    if report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, which must run every test: {report.longrepr}"
    return report
