"""numba's on-disk cache keys a kernel on its own file; the package keys every kernel on all of its kernel
modules (viewer.kernels.jit), so a kernel whose callee in another file changed is compiled again, never loaded
stale, and an unchanged one still loads from the cache."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CALLEE = """
from viewer.kernels.jit import njit

@njit
def answer():
    return {value}
"""

CALLER = """
from viewer.kernels.jit import njit
from ._probe_callee import answer

@njit
def ask(x):
    return answer() + x
"""

RUN = """
from viewer.index._probe_caller import ask
print(ask(0), sum(ask.stats.cache_hits.values()), sum(ask.stats.cache_misses.values()))
"""


def _run(tree: Path) -> tuple[int, int, int]:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "VIEWER_NUMBA_CACHE")}
    env["PYTHONPATH"] = str(tree)
    r = subprocess.run([sys.executable, "-c", RUN], cwd=tree, env=env, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr[-3000:]
    value, hits, misses = r.stdout.split()
    return int(value), int(hits), int(misses)


def test_a_callee_edited_in_another_file_recompiles_its_caller(tmp_path):
    tree = tmp_path / "pkg"
    ignore = shutil.ignore_patterns("__pycache__", "results", "*.png", "*.npz")
    shutil.copytree(ROOT / "viewer", tree / "viewer", ignore=ignore)
    index = tree / "viewer" / "index"
    (index / "_probe_callee.py").write_text(CALLEE.format(value=1))
    (index / "_probe_caller.py").write_text(CALLER)

    assert _run(tree) == (1, 0, 1)  # compiled, then saved
    assert _run(tree) == (1, 1, 0)  # unchanged: loaded from the cache
    (index / "_probe_callee.py").write_text(CALLEE.format(value=2))  # only the callee's file changes
    assert _run(tree) == (2, 0, 1)  # the caller compiled again with the new callee
    assert _run(tree) == (2, 1, 0)


def test_the_cache_switch_reads_the_words_for_off_in_any_case():
    probe = "import viewer.kernels.jit as j; print(j.CACHE, j.KERNEL_DIGEST == '')"
    seen = {}
    for value in ("OFF", " no ", "0", "on", "1"):
        env = dict(os.environ, VIEWER_NUMBA_CACHE=value)
        r = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr[-2000:]
        seen[value] = r.stdout.split()
    assert seen["OFF"] == seen[" no "] == seen["0"] == ["False", "True"]
    assert seen["on"] == seen["1"] == ["True", "False"]


def test_no_two_kernels_share_a_cache_entry():
    """numba files a cached kernel under its function's module, qualified name and line, not under its options:
    two kernels of one Python function (a parallel scan and its one-thread twin) loaded each other's machine
    code, whichever compiled first (the parallel scan ran on one thread). Each twin is made from a copy with a
    name of its own (viewer.kernels.jit.variant)."""
    import importlib
    import pkgutil

    from numba.core.registry import CPUDispatcher

    import viewer

    kernels = {}
    for m in pkgutil.walk_packages(viewer.__path__, "viewer."):
        if m.name.split(".")[1] in ("render", "drivers", "commands", "__main__", "cli") and \
                not m.name.endswith("_kernels"):
            continue  # GL, windows, the command line: no kernels there but their kernel modules
        mod = importlib.import_module(m.name)
        for name, obj in vars(mod).items():
            if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == mod.__name__:
                kernels[id(obj)] = (f"{mod.__name__}.{name}", obj)
    assert len(kernels) > 100
    by_entry = {}
    for shown, d in kernels.values():
        f = d.py_func
        by_entry.setdefault((f.__module__, f.__qualname__, f.__code__.co_firstlineno), []).append(shown)
    shared = {k: v for k, v in by_entry.items() if len(v) > 1}
    assert not shared, shared
