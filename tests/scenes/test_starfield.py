"""The starfield generator: view distances from magnitudes, the disc, the stars' colours."""

from __future__ import annotations

import numpy as np
import pytest

from viewer.index import brute_query
from viewer.scenes import SceneError, generate_scene, load_scene
from viewer.scenes.stars import DWARF_LF, GIANT_LF, absolute_from_distance, blackbody_rgb, view_distance


def test_view_distance_is_the_distance_modulus_at_the_limiting_magnitude():
    M = np.array([6.5, 1.5, -3.5, 16.5, 0.0])
    r = view_distance(M, 6.5)
    want = 10.0 * 10.0 ** ((6.5 - M) / 5.0)
    np.testing.assert_allclose(r, want, rtol=1e-14)
    assert r[0] == pytest.approx(10.0, rel=1e-15) and r[1] == pytest.approx(100.0, rel=1e-15)
    np.testing.assert_allclose(absolute_from_distance(r, 6.5), M, atol=1e-12)


def test_radii_follow_the_formula_with_magnitudes_from_the_luminosity_function():
    n = 60_000
    a = generate_scene("starfield", n, seed=3, world=4000.0)
    b = generate_scene("starfield", n, seed=3, world=4000.0, m_lim=3.5)
    # the same stars (same magnitudes, same places): radii scale by 10**((3.5 - 6.5) / 5) exactly as the
    # formula says, whatever each star's M is
    assert np.array_equal(a.centres, b.centres)
    np.testing.assert_allclose(b.radii / a.radii, 10.0 ** (-3.0 / 5.0), rtol=1e-13)
    # r = 10 * 10**((m_lim - M) / 5) with M inside the luminosity function's range, distributed as it says
    M = absolute_from_distance(a.radii, 6.5)
    lo = min(DWARF_LF[0][0], GIANT_LF[0][0])
    hi = max(DWARF_LF[-1][0], GIANT_LF[-1][0]) + 1.0
    assert M.min() >= lo - 1e-9 and M.max() <= hi + 1e-9
    giants = 0.1
    dw = np.array([w for _, w in DWARF_LF]) / sum(w for _, w in DWARF_LF)
    gw = np.array([w for _, w in GIANT_LF]) / sum(w for _, w in GIANT_LF)
    faint = M >= 1.0  # only dwarfs are fainter than M = 1: their share per bin is the dwarf table's
    want = (1 - giants) * dw[[e >= 1.0 for e, _ in DWARF_LF]].sum()
    assert abs(faint.mean() - want) < 5 * np.sqrt(want * (1 - want) / n)
    bright = M < -5.0  # only supergiants are brighter than M = -5
    want = giants * gw[0]
    assert abs(bright.mean() - want) < 5 * np.sqrt(want * (1 - want) / n) + 1e-4
    # radii span several decades
    assert a.radii.max() / a.radii.min() > 1e4


def test_the_disc_is_thin_and_thousands_of_stars_are_in_view():
    s = load_scene("starfield-100k")
    c = s.centres
    ext = c.max(axis=0) - c.min(axis=0)
    assert ext[1] < ext[0] / 5 and ext[1] < ext[2] / 5  # thin along y (up)
    rng = np.random.default_rng(0)
    at = c[rng.integers(0, s.n, 10)]
    counts = [brute_query(c, s.radii, p).size for p in at]
    assert np.median(counts) > 1000


def test_colours_are_blackbody_colours_and_sizes_follow_the_view_distance():
    s = generate_scene("starfield", 20_000, seed=1, world=4000.0)
    M = absolute_from_distance(s.radii, 6.5)
    a_stars = s.colours[(M > 1.2) & (M < 2.2)]  # only main-sequence A stars (~8000 K): blue-white
    cool = s.colours[M > 12.0]  # red dwarfs
    supergiants = s.colours[M < -5.0]  # only red supergiants are this bright (~3500 K)
    assert a_stars.size and (a_stars[:, 2] == 255).all() and (a_stars[:, 0] < 255).all()
    assert (cool[:, 0] == 255).all() and cool[:, 2].max() < 130
    assert supergiants.size and (supergiants[:, 0] == 255).all() and supergiants[:, 2].max() < 150
    assert blackbody_rgb(np.array([5800.0]))[0].tolist()[0] == 255
    np.testing.assert_allclose(s.sizes, (s.radii * 0.001).astype(np.float32), rtol=1e-6)


def test_a_radius_table_is_refused():
    with pytest.raises(SceneError, match="radius"):
        generate_scene("starfield", 100, radius={"model": "constant", "value": 5})
