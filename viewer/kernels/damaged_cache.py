"""A kernel cache file that cannot be read is compiled again and rewritten, and the user is told once.

numba reads its on-disk cache with pickle and trusts what it reads: an index (``.nbi``) or a kernel's file
(``.nbc``) cut short, emptied or overwritten with anything else (a copy or a sync stopped half way, a disk
error, a stray write) ended every later command in an ``EOFError`` or ``UnpicklingError`` traceback, until
someone found and deleted the file; bytes changed inside a kernel's machine code still unpickled, and LLVM
aborted the process (or the kernel ran damaged code). For this package's kernels (those filed by the locators
of :mod:`viewer.kernels.jit`) every file is written sealed: :data:`SEAL`, the SHA-256 of the rest, then the
bytes numba would have written. A file whose seal does not match what follows is never unpickled: its kernel
is a cache miss, numba compiles it again and files it as after any miss. An index that cannot be read is
started afresh (empty) first, so the kernels filed in it are written into a readable one as they compile; a
kernel's own file is overwritten in place under its index's entry. The next run loads them again.

The first such file of a process is named on stderr, once (:func:`say_damaged`); the compile report of
:mod:`viewer.kernels.compile` then shows what compiles, as on a first run. A file that holds a plain pickle
(no seal: written before files were sealed) is stale, compiled again and rewritten without a word. Other
libraries' numba caches are left as numba handles them.

numba is imported lazily, inside :func:`install`: this module is not one of the files that key the kernel
cache (:func:`viewer.kernels.jit.kernel_digest`), and it compiles nothing.
"""

from __future__ import annotations

import hashlib
import io
import pickle
import threading
from typing import Callable

from .compile import say

__all__ = ["SEAL", "DamagedCacheFile", "install", "say_damaged", "seal", "unseal"]

#: what a sealed cache file starts with, before the SHA-256 (32 bytes) of the bytes after it
SEAL = b"viewer kernel cache, sha256\n"

_DIGEST = 32  # bytes of a SHA-256
_PICKLE = 0x80  # pickle's PROTO opcode: the first byte of a file numba wrote without a seal

_lock = threading.Lock()
_said: list[str] = []  # the file named, once a damaged file has been reported in this process


class DamagedCacheFile(Exception):
    """A kernel cache file that cannot be read: ``path`` and ``why`` (in words: ``empty``, ``cut short or
    damaged``, ``not a kernel cache file``, or the system's reason)."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(f"{path}: {why}")
        self.path, self.why = path, why


def seal(body: bytes) -> bytes:
    """``body`` sealed: :data:`SEAL`, its SHA-256, then ``body``."""
    return SEAL + hashlib.sha256(body).digest() + body


def unseal(raw: bytes, path: str) -> bytes | None:
    """The body of the sealed file ``raw`` (read from ``path``); None for a plain pickle (a file written
    before files were sealed: stale, not damaged). Raises :class:`DamagedCacheFile` when ``raw`` is empty,
    its seal does not match what follows (cut short, bytes changed), or it is neither sealed nor a pickle."""
    if not raw:
        raise DamagedCacheFile(path, "empty")
    if raw.startswith(SEAL):
        digest, body = raw[len(SEAL):len(SEAL) + _DIGEST], raw[len(SEAL) + _DIGEST:]
        if hashlib.sha256(body).digest() != digest:
            raise DamagedCacheFile(path, "cut short or damaged")
        return body
    if SEAL.startswith(raw[:len(SEAL)]):
        raise DamagedCacheFile(path, "cut short or damaged")
    if raw[0] == _PICKLE:
        return None
    raise DamagedCacheFile(path, "not a kernel cache file")


def say_damaged(exc: DamagedCacheFile) -> None:
    """Tell the user, the first time in this process, that the kernel cache file ``exc.path`` could not be
    read and that what cannot be read is compiled again and rewritten; later calls say nothing."""
    with _lock:
        if _said:
            return
        _said.append(exc.path)
    say(f"kernel cache: {exc.path} cannot be read ({exc.why}); kernels whose cached files cannot be read are "
        "compiled again and their files rewritten")


def _read(path: str) -> bytes:
    """The bytes of the cache file ``path``; FileNotFoundError passes (no file: nothing cached), any other
    OSError is a :class:`DamagedCacheFile`."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise DamagedCacheFile(path, exc.strerror or type(exc).__name__) from exc


def install(ours: Callable[[object], bool]) -> bool:
    """Make numba's dispatchers file the kernels whose cache locator ``ours(locator)`` accepts in sealed files,
    compiled again when they cannot be read (every other function's cache behaves as numba's own). Returns
    False, installing nothing, when numba's cache internals are not as expected."""
    try:
        from numba.core import caching, dispatcher

        base, files = dispatcher.FunctionCache, caching.IndexDataCacheFile
        for owner, names in ((base, ("_load_overload", "_save_overload", "flush")),
                             (files, ("_load_index", "_save_index", "_load_data", "_save_data", "_dump",
                                      "_data_path", "_open_for_write"))):
            for name in names:
                getattr(owner, name)
        probe = files("", "probe", None)  # sets its attributes only
        probe._index_path, probe._version, probe._source_stamp  # noqa: B018 - what the sealed file reads
    except (ImportError, AttributeError, TypeError):
        return False
    if getattr(base, "seals_files", False):  # installed already
        return True

    class SealedCacheFile(files):
        """numba's index and data files of one function, each written sealed and unsealed before unpickling;
        the same bytes as numba's own behind the seal."""

        def _load_index(self):
            try:
                body = unseal(_read(self._index_path), self._index_path)
            except FileNotFoundError:
                return {}
            if body is None:
                return {}
            stream = io.BytesIO(body)
            if pickle.load(stream) != self._version:
                return {}
            stamp, overloads = pickle.loads(stream.read())
            return overloads if stamp == self._source_stamp else {}

        def _save_index(self, overloads):
            body = pickle.dumps(self._version, protocol=-1) + self._dump((self._source_stamp, overloads))
            with self._open_for_write(self._index_path) as f:
                f.write(seal(body))

        def _load_data(self, name):
            path = self._data_path(name)
            body = unseal(_read(path), path)  # a missing file: numba's load treats its OSError as a miss
            return None if body is None else pickle.loads(body)

        def _save_data(self, name, data):
            with self._open_for_write(self._data_path(name)) as f:
                f.write(seal(self._dump(data)))

    class MendingFunctionCache(base):
        """numba's function cache; for this package's kernels, in sealed files, and a file that cannot be read
        is a miss (see the module's docstring)."""

        seals_files = True

        def __init__(self, py_func) -> None:
            super().__init__(py_func)
            impl = getattr(self, "_impl", None)
            if impl is not None and hasattr(self, "_cache_file") and ours(getattr(impl, "locator", None)):
                self._cache_file = SealedCacheFile(self.cache_path, impl.filename_base,
                                                   impl.locator.get_source_stamp())

        def _load_overload(self, sig, target_context):
            try:
                return super()._load_overload(sig, target_context)
            except DamagedCacheFile as exc:
                self._mend(exc)
                return None  # a miss: numba compiles the kernel, then saves it

        def _save_overload(self, sig, data):
            try:
                super()._save_overload(sig, data)
            except DamagedCacheFile as exc:  # the index was damaged after this kernel's load
                self._mend(exc)
                super()._save_overload(sig, data)

        def _mend(self, exc: DamagedCacheFile) -> None:
            """Say so (once a process); an index that cannot be read is started afresh (empty), so the save
            after the kernel compiles files it in a readable one (a kernel's own file is overwritten by that
            save, under the index's entry)."""
            say_damaged(exc)
            if exc.path == self._cache_file._index_path:
                self.flush()

    dispatcher.FunctionCache = MendingFunctionCache
    return True
