"""One switch for numba's on-disk cache, and a cache that cannot go stale across files.

``VIEWER_NUMBA_CACHE=0`` (or ``off``, ``false``, ``no``, any case) turns the cache off (for debugging a
kernel, or a read-only install); any other value, or none, leaves it on. Every
kernel module imports ``njit`` (or :data:`CACHE`) from here.

numba keys a cached kernel on its own source file only: a caller whose callee, in another file, changed
(the project's kernels call kernels from ``_contract_kernels.py``, ``_morton.py``, :mod:`.prefetch` and
others, some inlined) would load its old machine code, with the old callee compiled in: a wrong answer
with no error after a ``git pull`` into an editable install. Here every kernel of this package is keyed
on its own file *and* on :data:`KERNEL_DIGEST`, a hash of every module of the package that imports
numba or ``njit`` from here: a change in any of them recompiles every kernel once (on its next first call), and nothing else
does. The key goes in through numba's cache locators (subclasses of its own three, so the cache lives where
numba would put it: ``NUMBA_CACHE_DIR`` when set, else beside the source, else the user's cache folder;
first in line for this package's files only). A cached kernel whose file cannot be read (cut short, emptied,
damaged) is compiled again and its file rewritten, said once (:mod:`.damaged_cache`). A numba whose cache
internals differ gets no cache at all rather than an unsound one.
"""

from __future__ import annotations

import functools
import types
import hashlib
import os
import re
from pathlib import Path

import numba

from .damaged_cache import install as install_mending

__all__ = ["CACHE", "KERNEL_DIGEST", "kernel_digest", "njit", "njit_noref"]

# a module-level numba import (not one inside a function that only reads numba's version or threads), or
# an import from this module anywhere
_IMPORTS_NUMBA = re.compile(rb"^(import numba|from numba\b|[ \t]*from \S*jit import)", re.MULTILINE)

#: the package's folder (``viewer/``); kernels of files under it get the digest in their cache key
_PACKAGE = Path(__file__).resolve().parents[1]


def kernel_digest(root: Path = _PACKAGE) -> str:
    """SHA-256 (hex) over the path and bytes of every ``.py`` file under ``root`` that imports numba at
    module level (an unindented line ``import numba`` or ``from numba ...``) or imports from this module
    (a line ``from ...jit import ...``), in path order: what every cached kernel of the package depends on
    (its own file, its callees, the compile switches). A module that imports numba only inside a function
    (to read its threading layer or thread count: the bench's report, the machine's description) defines
    no kernel: editing it recompiles nothing."""
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        data = path.read_bytes()
        if _IMPORTS_NUMBA.search(data):
            h.update(str(path.relative_to(root)).encode())
            h.update(len(data).to_bytes(8, "little"))
            h.update(data)
    return h.hexdigest()


class _PackageKeyed:
    """Mixed into numba's locators: a locator for this package's files only, whose source stamp also carries
    :data:`KERNEL_DIGEST` (numba drops a cache index whose stamp differs)."""

    @classmethod
    def from_function(cls, py_func, py_file):
        try:
            inside = Path(py_file).resolve().is_relative_to(_PACKAGE)
        except (OSError, ValueError):
            inside = False
        return super().from_function(py_func, py_file) if inside else None

    def get_source_stamp(self):
        return (super().get_source_stamp(), KERNEL_DIGEST)


def _install_locators() -> bool:
    """Put the package's locators first in numba's list; False when numba's internals are not as expected."""
    try:
        from numba.core import caching

        classes = caching.CacheImpl._locator_classes
        bases = caching.UserProvidedCacheLocator, caching.InTreeCacheLocator, caching.UserWideCacheLocator
    except AttributeError:
        return False

    # numba's own order: NUMBA_CACHE_DIR when set, else beside the source, else the user's cache folder
    if not any(getattr(c, "__name__", "").startswith("_PackageKeyed") for c in classes):
        classes[0:0] = [type(f"_PackageKeyed{b.__name__}", (_PackageKeyed, b), {}) for b in bases]
    return True

#: the values of ``VIEWER_NUMBA_CACHE`` that turn the cache off (compared stripped and lower-cased)
CACHE_OFF = ("0", "off", "false", "no", "")

_WANTED = os.environ.get("VIEWER_NUMBA_CACHE", "1").strip().lower() not in CACHE_OFF

#: the kernel digest (empty when the cache is off)
KERNEL_DIGEST: str = kernel_digest() if _WANTED else ""

#: whether kernels are cached on disk (a cached kernel that cannot be read compiled again: :mod:`.damaged_cache`)
CACHE: bool = _WANTED and _install_locators() and install_mending(lambda locator: isinstance(locator, _PackageKeyed))

# Reference counting on, said explicitly: numba lets a kernel that does not set it inherit it from its first
# caller, so a kernel that allocates (the trees' leaf split) compiled first under an ``njit_noref`` caller
# (their batch move, before any insert) failed to compile, on a first run only.
njit = functools.partial(numba.njit, cache=CACHE, nogil=True, _nrt=True)

# For small kernels that allocate nothing (they get every buffer from the caller): compiled without
# numba's reference counting. Every array passed from one numba function to another otherwise costs
# an atomic incref/decref pair, more than a small helper's own work, which dominates hot loops that call
# helpers taking arrays.
njit_noref = functools.partial(numba.njit, cache=CACHE, nogil=True, _nrt=False)


def variant(py_func, tag: str):
    """A copy of the Python function ``py_func`` named ``<name>_<tag>``, for a second kernel compiled from the
    same code with other options (a one-thread twin of a parallel kernel, a reference-counted twin of one
    without): ``variant(_scan, "serial")``.

    numba files a cached kernel under its function's qualified name, source line and bytecode and under the
    signature, not under the compile options (parallel, fastmath, reference counting): two kernels of one
    function would load each other's machine code from the cache, whichever was compiled first: before this,
    the parallel scan ran the one-thread code and the scan's one-thread read floor the threaded one, slower
    and with no error. The copy has a name of its own, so a cache file of its own."""
    f = types.FunctionType(py_func.__code__, py_func.__globals__, f"{py_func.__name__}_{tag}",
                           py_func.__defaults__, py_func.__closure__)
    f.__qualname__ = f"{py_func.__qualname__}_{tag}"
    f.__module__ = py_func.__module__
    f.__doc__ = py_func.__doc__
    f.__kwdefaults__ = py_func.__kwdefaults__
    return f
