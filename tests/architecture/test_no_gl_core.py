"""The pure modules (index, scenes, camera, recording) must never load a GL or window module."""

from __future__ import annotations

import subprocess
import sys

GL_MODULES = ("moderngl", "moderngl_window", "pyglet", "glcontext")

# every module but viewer.render (moderngl) and viewer.drivers.window (moderngl_window); viewer.cli too, so
# `viewer --help` and the non-GL commands never load GL
PURE = [
    "viewer",
    "viewer.index",
    "viewer.scenes",
    "viewer.camera",
    "viewer.frame.frustum",
    "viewer.frame",
    "viewer.frame.culling",
    "viewer.paths",
    "viewer.recording",
    "viewer.bench",
    "viewer.cli",
    "viewer.drivers.headless",
]


def _loaded_after_import(*modules: str) -> list[str]:
    """The GL modules loaded in a fresh process after importing ``modules`` (a process of its own: this one has
    GL loaded by other tests)."""
    code = (
        f"import sys, importlib; [importlib.import_module(m) for m in {list(modules)!r}]; "
        f"print(','.join(m for m in {GL_MODULES!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [m for m in out.stdout.strip().split(",") if m]


def test_index_core_loads_no_gl():
    """All the pure modules in one process; only if GL was loaded, one process each to name the module."""
    loaded = _loaded_after_import(*PURE)
    if loaded:
        for module in PURE:
            assert _loaded_after_import(module) == [], module
    assert loaded == []


def test_index_core_builds_and_queries_without_gl():
    code = (
        "import sys, numpy as np\n"
        "from viewer.index import INDEXES\n"
        "c = np.random.default_rng(0).uniform(-10, 10, (100, 3)); r = np.full(100, 3.0)\n"
        "for name, cls in INDEXES.items():\n"
        "    try:\n"
        "        ix = cls(c, r)\n"
        "    except ImportError:\n"
        "        continue\n"
        "    ix.query((0.0, 0.0, 0.0))\n"
        f"print(','.join(m for m in {GL_MODULES!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
