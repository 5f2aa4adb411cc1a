"""Where a result comes from: the project's version and git commit (with whether the checkout had local
changes), the machine line and the package versions, written into every result file so two results from
different commits, machines or libraries never look alike. Standard library only; ``git`` is asked once per
process, and only when the package sits in a git checkout (an installed wheel has no commit: None).
"""

from __future__ import annotations

import functools
import importlib.metadata as _md
import platform
import subprocess
from pathlib import Path

__all__ = ["PROJECT", "git_state", "package_versions", "provenance"]

#: the project's distribution name, as result files name it
PROJECT = "viewdist-testbed"

#: the packages whose versions a result records (beside Python and the project)
_PACKAGES = ("numpy", "numba", "pyrr", "moderngl", "moderngl-window", "pyglet", "pillow", "matplotlib", "scipy", "rtree",
             "llvmlite", "imgui-bundle", "dask", "distributed", "pyarrow")

#: the checkout this package was imported from, when it is one
_ROOT = Path(__file__).resolve().parents[2]


def package_versions() -> dict[str, str | None]:
    """Installed versions of the packages a result depends on (None: not installed). Imports nothing."""
    from .._version import __version__

    out: dict[str, str | None] = {"python": platform.python_version(), "viewer": __version__}
    for name in _PACKAGES:
        try:
            out[name] = _md.version(name)
        except _md.PackageNotFoundError:
            out[name] = None
    return out


@functools.lru_cache(maxsize=1)
def git_state() -> tuple[str | None, bool | None]:
    """``(commit, dirty)`` of the checkout the package runs from: the commit's full hash and whether tracked
    files differ from it; ``(None, None)`` when it is not a git checkout or git is missing."""
    if not (_ROOT / ".git").exists():
        return None, None

    def git(*args: str) -> str | None:
        try:
            p = subprocess.run(["git", "-C", str(_ROOT), *args], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        return p.stdout if p.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return None, None
    status = git("status", "--porcelain", "--untracked-files=no")
    return commit.strip(), (None if status is None else bool(status.strip()))


def provenance() -> dict:
    """What a result file records of where it comes from: ``project``, ``version``, ``commit``, ``dirty``,
    ``machine`` (the line ``viewer bench`` prints), ``platform`` and ``packages``."""
    from .._version import __version__
    from .machine import machine, machine_line, system

    commit, dirty = git_state()
    return {"project": PROJECT, "version": __version__, "commit": commit, "dirty": dirty,
            "machine": machine_line(machine()), "platform": system(), "packages": package_versions()}
