"""A scene opened for a run: what its progress bar is labelled while it loads, and the import line said on stderr
for a file imported on the fly (what it made and the view-distance rule it chose, and why)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

from .files import load_scene
from .importers import IMPORT_FORMATS, import_line

__all__ = ["generation_progress", "loading_label", "open_scene", "open_scene_shown"]


def loading_label(scene: str) -> str:
    """The progress bar's label while ``scene`` (a recipe, a ``.npz``, a file to import) loads: ``read NAME`` for
    a file imported on the fly, else ``generate NAME``."""
    p = Path(scene)
    return f"{'read' if p.suffix.lower() in IMPORT_FORMATS else 'generate'} {p.name}"


def open_scene(scene: str, import_options: dict[str, str | None] | None = None,
               progress: Callable[[int, int], None] | None = None, quiet: bool = False):
    """Load ``scene`` (:func:`viewer.scenes.load_scene`, with ``import_options``: ``--view-distance`` and
    ``--columns``, None when not given); for a file imported on the fly print the import line to stderr unless
    ``quiet``. ``progress(done, n)`` as ``load_scene`` takes it. Raises :class:`viewer.scenes.SceneError` (a
    :class:`viewer.errors.UserError`) for a bad file or an option it refuses."""
    loaded = load_scene(scene, progress, import_options=import_options)
    if not quiet and Path(loaded.source or "").suffix.lower() in IMPORT_FORMATS:
        print(f"imported {scene}: {import_line(loaded)}", file=sys.stderr, flush=True)
    return loaded


def open_scene_shown(scene: str, import_options: dict[str, str | None] | None = None, *, quiet: bool = False,
                     min_total: int = 0):
    """:func:`open_scene` with the loading's progress on stderr (unless ``quiet``; only for a scene of at least
    ``min_total`` objects), labelled by :func:`loading_label`."""
    from viewer.terminal.progress import ProgressCallback

    loading = ProgressCallback(loading_label(scene), enabled=not quiet, min_total=min_total)
    loaded = open_scene(scene, import_options, progress=loading, quiet=quiet)
    loading.close()
    return loaded


def generation_progress(label: str, enabled: bool = True):
    """Progress of a long generation or import (a million objects or more) on stderr
    (:mod:`viewer.terminal.progress`), labelled ``label``."""
    from viewer.terminal.progress import ProgressCallback

    return ProgressCallback(label, enabled=enabled, min_total=1_000_000)
