"""Stars: a luminosity function, view distances from a limiting magnitude, colours from temperature.

The ``starfield`` generator (:mod:`viewer.scenes.generators`) places stars in a thin exponential disc;
this module gives each star an absolute magnitude M and the distance at which its apparent magnitude
``m = M + 5 log10(d / 10 pc)`` reaches the limiting magnitude ``m_lim`` (what the eye sees: 6.5)::

    r = 10 * 10 ** ((m_lim - M) / 5)    parsecs (world units)

The luminosity function is a mixture of two piecewise-uniform tables (relative numbers of stars per
magnitude bin): main-sequence dwarfs from M = -5 (O/B stars) to M = 16 (late M dwarfs), shaped like the
solar neighbourhood's at the faint end (rising towards it, peaking near M = 12) with the bright end weighted
up, and a share ``giants`` of
giants and supergiants from M = -6 to M = 1 (most in the red clump near M = 0.5). With the default
share (10%: the bright end of a magnitude-limited catalogue rather than a volume's census) radii span about 0.2 .. 3000 pc, and the giants, seen across most of a disc a few kpc wide,
put thousands of stars in view from anywhere in it. Colours are blackbody colours of each star's
effective temperature (from M along the main sequence or the giant branch).

Everything uses only PCG64's raw doubles and IEEE-exact arithmetic (:mod:`viewer.scenes._portable`): a
seed gives the same bits on every machine. Pure numpy.
"""

from __future__ import annotations

import numpy as np

from . import _portable as P

__all__ = [
    "DWARF_LF", "GIANT_LF", "absolute_magnitudes", "star_colours", "temperatures", "view_distance",
    "blackbody_rgb",
]

_LOG2_10 = 3.321928094887362  # log2(10)

#: Main-sequence luminosity function: (M bin's bright edge, relative number per bin), bins of one magnitude
#: from M = -5 to 16: the solar neighbourhood's shape at the faint end (after Wielen et al.), its bright end
#: (O to A stars, M < 2) weighted up as in a magnitude-limited sample, so the sky shows blue-white stars
#: beside the red giants.
DWARF_LF: tuple[tuple[float, float], ...] = tuple(zip(
    [float(m) for m in range(-5, 16)],
    [0.03, 0.08, 0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 2.2, 2.6, 3.0, 3.6, 4.4, 5.6, 7.0, 8.0, 7.0,
     5.5, 4.0],
))
#: Giants and supergiants: bins of one magnitude from M = -6 to 1, most in the red clump (M ~ 0.5).
GIANT_LF: tuple[tuple[float, float], ...] = tuple(zip(
    [-6.0, -5.0, -4.0, -3.0, -2.0, -1.0, 0.0],
    [0.5, 0.7, 1.0, 1.0, 1.5, 2.5, 4.0],
))

# Effective temperature (K) against absolute magnitude, linear in between (clamped at the ends).
_MS_TEMPERATURE = np.array([
    (-5.0, 30000.0), (-3.0, 20000.0), (-1.0, 12000.0), (0.6, 9600.0), (2.0, 8000.0), (3.0, 7000.0),
    (4.8, 5800.0), (6.0, 5000.0), (8.0, 4100.0), (10.0, 3500.0), (12.0, 3200.0), (16.0, 2700.0),
])
_GIANT_TEMPERATURE = np.array([(-6.0, 3500.0), (-3.0, 3900.0), (-1.0, 4300.0), (1.0, 4900.0)])
# Blackbody colour (sRGB, 0..255) against temperature (K), after Mitchell Charity's table.
_BLACKBODY = np.array([
    (1000.0, 255, 56, 0), (2000.0, 255, 137, 18), (3000.0, 255, 180, 107), (4000.0, 255, 209, 163),
    (5000.0, 255, 228, 206), (6000.0, 255, 243, 239), (6500.0, 255, 249, 253), (7000.0, 245, 243, 255),
    (8000.0, 227, 233, 255), (10000.0, 204, 219, 255), (15000.0, 181, 205, 255), (20000.0, 170, 197, 255),
    (30000.0, 161, 189, 255), (40000.0, 157, 185, 255),
])


def _table(lf) -> tuple[np.ndarray, np.ndarray]:
    edges = np.array([b for b, _ in lf], dtype=np.float64)
    w = np.array([v for _, v in lf], dtype=np.float64)
    return edges, w / w.sum()


def _mixture(giants: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bins of the whole luminosity function: (faint-edge - 1 (B,), probability (B,), is_giant (B,))."""
    de, dw = _table(DWARF_LF)
    ge, gw = _table(GIANT_LF)
    edges = np.concatenate([de, ge])
    prob = np.concatenate([dw * (1.0 - giants), gw * giants])
    return edges, prob, np.concatenate([np.zeros(de.size, bool), np.ones(ge.size, bool)])


def absolute_magnitudes(rng: np.random.Generator, m: int, giants: float) -> np.ndarray:
    """(m,) float64 absolute magnitudes drawn from the luminosity function (a share ``giants`` of giants)."""
    edges, prob, _ = _mixture(giants)
    cum = np.cumsum(prob)
    u = rng.random((m, 2))
    b = np.minimum(np.searchsorted(cum, u[:, 0] * cum[-1], side="right"), cum.size - 1)
    return edges[b] + u[:, 1]


def view_distance(M: np.ndarray, m_lim: float) -> np.ndarray:
    """The distance (parsecs) at which a star of absolute magnitude ``M`` (N,) reaches apparent magnitude
    ``m_lim``: ``10 * 10 ** ((m_lim - M) / 5)``, (N,) float64 (portable to a few ulp)."""
    x = (m_lim - np.asarray(M, dtype=np.float64)) * (_LOG2_10 / 5.0)
    return 10.0 * P.exp2(x)


def absolute_from_distance(r: np.ndarray, m_lim: float) -> np.ndarray:
    """The inverse of :func:`view_distance`: (N,) absolute magnitudes of stars seen out to ``r`` (N,) pc."""
    return m_lim - 5.0 * (P.log2(np.asarray(r, dtype=np.float64) / 10.0) / _LOG2_10)


def _interp(x: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Piecewise-linear ``table[:, 1:]`` at ``x`` along ``table[:, 0]`` (clamped at the ends): exact
    IEEE operations only (np.interp's rounding is not specified)."""
    xs = table[:, 0]
    i = np.clip(np.searchsorted(xs, x, side="right") - 1, 0, xs.size - 2)
    f = np.clip((x - xs[i]) / (xs[i + 1] - xs[i]), 0.0, 1.0)[:, None]
    return table[i, 1:] * (1.0 - f) + table[i + 1, 1:] * f


def temperatures(M: np.ndarray, giant: np.ndarray) -> np.ndarray:
    """(N,) float64 effective temperatures (K) of stars of absolute magnitude ``M`` (N,) on the main
    sequence or, where ``giant`` (N,) bool, the giant branch."""
    t = _interp(M, _MS_TEMPERATURE)[:, 0]
    g = np.flatnonzero(giant)
    t[g] = _interp(M[g], _GIANT_TEMPERATURE)[:, 0]
    return t


def blackbody_rgb(t: np.ndarray) -> np.ndarray:
    """(N, 3) uint8 sRGB colours of blackbodies at temperatures ``t`` (N,) K."""
    return np.rint(_interp(np.asarray(t, dtype=np.float64), _BLACKBODY)).astype(np.uint8)


def star_colours(rng: np.random.Generator, radii: np.ndarray, m_lim: float, giants: float) -> np.ndarray:
    """(N, 4) uint8 RGBA colours of stars seen out to ``radii`` (N,) pc: each star's absolute magnitude
    from its view distance, whether it is a giant drawn from the luminosity function's odds at that
    magnitude (``rng``), and the blackbody colour of its temperature."""
    M = absolute_from_distance(radii, m_lim)
    edges, prob, is_giant = _mixture(giants)
    # P(giant | M): the giant bins' density over all bins' density at M (bins are one magnitude wide)
    dens_g = np.zeros(M.size)
    dens_all = np.zeros(M.size)
    for e, p, g in zip(edges, prob, is_giant):
        inside = np.where((M >= e) & (M < e + 1.0), p, 0.0)
        dens_all += inside
        if g:
            dens_g += inside
    p_giant = np.divide(dens_g, dens_all, out=np.zeros(M.size), where=dens_all > 0)
    giant = rng.random(M.size) < p_giant
    out = np.empty((M.size, 4), dtype=np.uint8)
    out[:, :3] = blackbody_rgb(temperatures(M, giant))
    out[:, 3] = 255
    return out
