"""The values a run's options take, as the commands' parsers offer and check them: the choices of the drawing,
colouring and generated-path options, and the argparse types of the view counts and the hysteresis margin.

Each value is defined where the frame or the camera paths define it; the drivers that take the options hand
them to the parsers from here, so a command speaks to the drivers alone. The types import the heavy modules
(the frame pipeline) when a parser calls them, not when ``viewer --help`` builds the parsers."""

from __future__ import annotations

import argparse

from ..frame.options import COLOUR_MODES, DRAW_MODES
from ..paths import GENERATED

__all__ = ["COLOUR_MODES", "DEMO_FRAMES", "DRAW_MODES", "GENERATED", "margin", "record_views", "window_views"]

#: frames of the default recording of a generated path (a demo: the whole flight at a larger step; --full: every
#: frame at 1/60 s): few enough that a first run, compiling included, stays short on a 2-core machine.
DEMO_FRAMES = 1800


def record_views(text: str) -> int:
    """``record --views K``: a whole number of views, 1 to :data:`viewer.frame.views.MAX_VIEWS`."""
    from ..frame.views import MAX_VIEWS

    v = _whole(text)
    if not 1 <= v <= MAX_VIEWS:
        raise argparse.ArgumentTypeError(f"views are a whole number 1..{MAX_VIEWS}, got {text!r}")
    return v


def window_views(text: str) -> int:
    """``view --views K``: one of the splits the window cycles through (:data:`viewer.frame.views.VIEW_CYCLE`)."""
    from ..frame.views import VIEW_CYCLE

    v = _whole(text)
    if v not in VIEW_CYCLE:
        raise argparse.ArgumentTypeError(f"the window splits into {', '.join(map(str, VIEW_CYCLE))} views, got {text!r} "
                                         "(for K views headless: 'viewer record SCENE --views K')")
    return v


def _whole(text: str) -> int:
    """``text`` as a whole number, or 0 (no view count) when it is not one."""
    try:
        return int(text)
    except ValueError:
        return 0


def margin(text: str) -> tuple[float, bool]:
    """A hysteresis margin: world units, or ``P%`` of each radius (see :func:`viewer.frame.events.parse_margin`)."""
    from ..frame.events import parse_margin

    return parse_margin(text)
