"""The facts about the machine that a timing depends on, read once here for every figure that is printed
or written (``viewer bench``, the sweep's rows, a recording's metadata).

The CPU's model name alone can hide what matters: on a cloud VM it may read just "AMD EPYC", and two such
machines gave different rankings of the same kernels (a branch-free candidate loop far faster than a
bit-mask one on one of them). So the description carries the target LLVM (and so numba) compiles for and
the cache sizes, which is what a hot loop over flat arrays feels.
"""

from __future__ import annotations

import os
import platform
import socket
from pathlib import Path

__all__ = ["caches", "cpu", "cpu_model", "cpu_target", "machine", "machine_line", "system"]

_CACHE_DIR = Path("/sys/devices/system/cpu/cpu0/cache")


def cpu_model() -> str:
    """The CPU's model name from ``/proc/cpuinfo`` (else what :mod:`platform` says)."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cpu_target() -> str:
    """LLVM's name for the host CPU (``znver5``, ``skylake-avx512``): the target numba's kernels are built
    for. Empty when llvmlite cannot tell."""
    try:
        import llvmlite.binding as ll

        return str(ll.get_host_cpu_name())
    except Exception:  # noqa: BLE001 - a description, never a reason to fail
        return ""


def caches() -> dict[str, int]:
    """Data and unified cache sizes of CPU 0 in bytes by level name (``{"L1d": 49152, "L2": 1048576, "L3":
    33554432}``); empty where sysfs does not say."""
    out: dict[str, int] = {}
    for d in sorted(_CACHE_DIR.glob("index*")):
        try:
            level = (d / "level").read_text().strip()
            kind = (d / "type").read_text().strip()
            size = (d / "size").read_text().strip()
        except OSError:
            continue
        if kind == "Instruction" or not size:
            continue
        mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(size[-1], 1)
        try:
            out[f"L{level}" + ("d" if kind == "Data" else "")] = int(size.rstrip("KMG")) * mult
        except ValueError:
            continue
    return out


def _size(b: int) -> str:
    return f"{b >> 20} MiB" if b >= 1 << 20 and b % (1 << 20) == 0 else f"{b >> 10} KiB"


def cpu() -> str:
    """One line: model name, LLVM target, L2 and L3 sizes (``AMD EPYC (znver5; L2 1 MiB, L3 32 MiB)``)."""
    c = caches()
    parts = [t for t in (cpu_target(),) if t]
    sizes = ", ".join(f"{k} {_size(v)}" for k, v in c.items() if k in ("L2", "L3"))
    if sizes:
        parts.append(sizes)
    return cpu_model() + (f" ({'; '.join(parts)})" if parts else "")


def machine() -> dict:
    """host, cpu (:func:`cpu`), cores (logical CPUs), threads (numba's thread count, which the scan uses)."""
    import numba

    return {"host": socket.gethostname(), "cpu": cpu(), "cores": os.cpu_count() or 0,
            "threads": numba.get_num_threads()}


def machine_line(where: dict) -> str:
    """One line naming the machine of a run (``where``: :func:`machine`): its figures are this CPU's, not
    another's (printed beside every timing a command prints)."""
    return f"machine: {where['host']}, {where['cpu']}, {where['cores']} logical CPUs, no GPU involved"


def system() -> str:
    """The operating system and C library (``Linux-6.1-x86_64-with-glibc2.36``): what a metadata file
    records beside :func:`machine` (the sweep's rows keep to the four fields of :func:`machine`)."""
    return platform.platform()
