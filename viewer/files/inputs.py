"""Input files: why one cannot be opened, said the same way by every reader."""

from __future__ import annotations

import os

__all__ = ["why_missing"]


def why_missing(path: str | os.PathLike) -> str:
    """Why ``path``, which does not exist as far as ``Path.exists`` can tell, cannot be read: ``"no such file"``,
    or for a symbolic link whose target is missing or that loops back on itself, that (``exists`` follows
    links, so both look like a missing file)."""
    if os.path.islink(path):
        return "a symbolic link that leads nowhere (its target is missing, or the links loop)"
    return "no such file"
