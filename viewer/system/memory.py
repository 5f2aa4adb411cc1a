"""How much memory this process may still allocate: the smallest of what the machine has available, what its
cgroup still allows and what its address-space limit leaves. Standard library only; Linux files, each read
where it exists (elsewhere: no limit known).

Use: estimate what a job needs, compare it with :func:`available_bytes` before allocating, and refuse with
both figures (and :func:`available`'s reason) instead of being killed by the kernel with no message::

    need = 88 * n
    have, why = available()
    if need > have:
        raise UserError(f"needs about {format_bytes(need)}; this process may use {format_bytes(have)} ({why})")
"""

from __future__ import annotations

import resource

__all__ = ["UNKNOWN", "available", "available_bytes", "format_bytes"]

#: what :func:`available_bytes` returns when no limit is known (2**62 bytes: nothing will ever be refused)
UNKNOWN = 1 << 62


def _read(path: str) -> str | None:
    try:
        with open(path) as fh:
            return fh.read()
    except (OSError, ValueError):
        return None


def _mem_available() -> int | None:
    """``MemAvailable`` of ``/proc/meminfo``: what the kernel can give without swapping, bytes."""
    text = _read("/proc/meminfo")
    for line in (text or "").splitlines():
        if line.startswith("MemAvailable:"):
            try:
                return int(line.split()[1]) * 1024
            except (IndexError, ValueError):
                return None
    return None


def _int_file(path: str) -> int | None:
    text = _read(path)
    if text is None:
        return None
    text = text.strip()
    if not text or text == "max":
        return None
    try:
        return int(text)
    except ValueError:
        return None


def _cgroup_left() -> int | None:
    """What the process's memory cgroup (and each of its ancestors) still allows, bytes: cgroup v2
    ``memory.max`` minus ``memory.current``, v1 ``memory.limit_in_bytes`` minus ``memory.usage_in_bytes``.
    None when no limit is set."""
    text = _read("/proc/self/cgroup")
    if text is None:
        return None
    best = None
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, rel = parts
        rel = rel.strip().strip("/")
        if controllers == "":  # v2 unified hierarchy
            root, limit_name, used_name = "/sys/fs/cgroup", "memory.max", "memory.current"
        elif "memory" in controllers.split(","):
            root, limit_name, used_name = "/sys/fs/cgroup/memory", "memory.limit_in_bytes", "memory.usage_in_bytes"
        else:
            continue
        segs = [s for s in rel.split("/") if s]
        for k in range(len(segs), -1, -1):  # the process's own group, then every ancestor up to the root
            d = "/".join([root, *segs[:k]])
            limit = _int_file(f"{d}/{limit_name}")
            if limit is None or limit >= UNKNOWN:  # "max", or v1's "no limit" (a page-rounded 2**63 - 1)
                continue
            used = _int_file(f"{d}/{used_name}") or 0
            left = max(0, limit - used)
            best = left if best is None else min(best, left)
    return best


def _address_space_left() -> int | None:
    """RLIMIT_AS (the soft limit) minus the address space already mapped (``VmSize``), bytes; None when
    unlimited."""
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (OSError, ValueError):
        return None
    if soft == resource.RLIM_INFINITY or soft < 0:
        return None
    mapped = 0
    for line in (_read("/proc/self/status") or "").splitlines():
        if line.startswith("VmSize:"):
            try:
                mapped = int(line.split()[1]) * 1024
            except (IndexError, ValueError):
                mapped = 0
            break
    return max(0, soft - mapped)


def available() -> tuple[int, str]:
    """(bytes, where that figure comes from): the memory this process may still allocate, the smallest of

    - the machine's available memory (``MemAvailable`` of ``/proc/meminfo``),
    - its cgroup's limit minus its use where one is set (v2 ``memory.max`` - ``memory.current``, v1
      ``memory.limit_in_bytes`` - ``memory.usage_in_bytes``, the process's group and its ancestors),
    - its address-space limit (``RLIMIT_AS``, as ``ulimit -v`` or ``prlimit --as`` set it) minus what is
      already mapped.

    (:data:`UNKNOWN`, "no limit known") where none of them can be read.
    """
    found = []
    for value, what in ((_mem_available(), "the machine's available memory, MemAvailable"),
                        (_cgroup_left(), "what the cgroup's memory limit leaves"),
                        (_address_space_left(), "what the address-space limit RLIMIT_AS leaves")):
        if value is not None:
            found.append((value, what))
    if not found:
        return UNKNOWN, "no limit known"
    return min(found, key=lambda t: t[0])


def available_bytes() -> int:
    """The memory this process may still allocate, bytes: the smallest of the machine's available memory
    (``/proc/meminfo`` MemAvailable), its cgroup's limit minus its use (cgroup v2 ``memory.max`` minus
    ``memory.current``, v1 ``memory.limit_in_bytes`` minus ``memory.usage_in_bytes``) and what RLIMIT_AS
    leaves of the address space; :data:`UNKNOWN` (2**62) where none is known. Compare an estimate with it
    before allocating: a process that allocates past it is killed by the kernel with no message, or pages
    the machine to a halt. :func:`available` also says which limit it is."""
    return available()[0]


def format_bytes(n: float) -> str:
    """``n`` bytes for a message: ``29.1 GB``, ``512 MB``, ``12 KB`` (decimal units)."""
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= size:
            return f"{n / size:.3g} {unit}" if n / size < 100 else f"{n / size:.0f} {unit}"
    return f"{int(n)} bytes"
