"""How many frames a run renders or simulates (``viewer record``, ``viewer view --headless``, ``viewer soak``):
the most one run takes, and how many sampling a camera path gives, refused before anything is allocated."""

from __future__ import annotations

import math

from ..errors import UserError
from ..terminal.text import count_text

__all__ = ["MAX_FRAMES", "over_limit", "planned_frames", "sampled_frames"]

#: the most frames one run renders or simulates: 1e7 frames is 46 hours at 60 frames per second, and
#: every frame's pose is held in memory (with a CSV row of ~250 bytes per index and frame)
MAX_FRAMES = 10_000_000


def planned_frames(duration: float, frames: int | None, dt: float, what: str = "the camera path") -> int:
    """How many frames sampling a path of ``duration`` seconds gives (``frames``, else one per ``dt``
    seconds, as :meth:`viewer.paths.CameraPath.sample` counts them); a :class:`UserError` naming ``what``
    (the path, and the flag that made it) and the flags that fix it when that is more than
    :data:`MAX_FRAMES` (a tiny ``--dt``, a path lasting weeks, a crawling ``--speed``), before anything is
    allocated."""
    if frames is not None:
        return frames
    n = sampled_frames(duration, dt)
    if n > MAX_FRAMES:
        raise UserError(f"{what} lasts {duration:.4g} s, which at --dt {dt:g} s per frame is {over_limit(n)}: give "
                        "--frames N (the whole path in N frames) or a larger --dt")
    return int(n)


def sampled_frames(duration: float, dt: float) -> float:
    """How many frames sampling a path of ``duration`` seconds one per ``dt`` seconds gives, as
    :meth:`viewer.paths.CameraPath.sample` counts them (inf past the floats)."""
    q = duration / dt
    return math.floor(q + 1e-9) + 1 if math.isfinite(q) else math.inf


def over_limit(n: float, what: str = "frames") -> str:
    """``10,000,001 frames, more than the limit 10,000,000``: a count past :data:`MAX_FRAMES` for a message,
    both written out in full (as ``1e+07`` the two read alike), an endless one as ``more than 1e308``."""
    shown = "more than 1e308" if math.isinf(n) else count_text(int(n))
    return f"{shown} {what}, more than the limit {count_text(MAX_FRAMES)}"
