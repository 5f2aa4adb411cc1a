"""Elementary functions that give the same bits on every machine.

numpy's ``exp`` / ``log`` dispatch to CPU-specific SIMD code (AVX512F paths, or the platform libm),
which may differ in the last bit; ``Generator.normal`` calls libm in its rare branches. Scenes must be
bit-identical everywhere, so the generators use only: the raw uniform doubles and integers of PCG64,
IEEE-exact operations (+, -, *, /, sqrt, floor, rint, ldexp, frexp), and the polynomials below,
evaluated one rounded numpy operation at a time (no fused multiply-add). Accuracy is a few ulp, far
below anything a scene needs; what matters is that it is the same everywhere.
"""

from __future__ import annotations

import numpy as np

__all__ = ["exp2", "log2", "pow_", "standard_normal", "unit_vectors"]

_LN2 = 0.6931471805599453
_INV_LN2 = 1.4426950408889634
_SQRT_HALF = 0.7071067811865476

# e^t = sum t^k / k!, for |t| <= ln2 / 2 (degree 13: truncation < 1e-17 relative)
_EXP_COEF = [1.0 / float(np.prod(np.arange(1, k + 1, dtype=np.float64))) for k in range(13, -1, -1)]
# ln m = 2 * atanh(s) = 2 * sum s^(2k+1) / (2k+1), |s| <= 0.1716 (to s^21: truncation < 1e-17)
_LOG_COEF = [1.0 / (2 * k + 1) for k in range(10, -1, -1)]


def exp2(x) -> np.ndarray:
    """2**x elementwise, float64. ``x`` finite, |x| < 1000."""
    x = np.asarray(x, dtype=np.float64)
    k = np.rint(x)
    t = x - k  # exact: |t| <= 0.5
    t *= _LN2
    p = np.full_like(t, _EXP_COEF[0])
    for c in _EXP_COEF[1:]:
        p *= t
        p += c
    return np.ldexp(p, k.astype(np.int32))


def log2(x) -> np.ndarray:
    """log2(x) elementwise, float64. ``x`` finite and > 0."""
    x = np.asarray(x, dtype=np.float64)
    m, e = np.frexp(x)  # x = m * 2**e, m in [0.5, 1)
    small = m < _SQRT_HALF
    m = np.where(small, m * 2.0, m)  # exact; m in [0.707, 1.414)
    e = e.astype(np.float64) - small
    s = (m - 1.0) / (m + 1.0)
    s2 = s * s
    p = np.full_like(s, _LOG_COEF[0])
    for c in _LOG_COEF[1:]:
        p *= s2
        p += c
    p *= s
    p *= 2.0 * _INV_LN2
    return e + p


def pow_(base, exponent) -> np.ndarray:
    """base**exponent for base > 0, through :func:`exp2` and :func:`log2`."""
    return exp2(log2(base) * exponent)


def standard_normal(rng: np.random.Generator, size: int) -> np.ndarray:
    """(size,) float64 standard normal deviates by Marsaglia's polar method on ``rng.random``."""
    out = np.empty(size, dtype=np.float64)
    filled = 0
    while filled < size:
        need = size - filled
        pairs = (need + 1) // 2
        k = pairs * 4 // 3 + 8  # pi/4 of the pairs are accepted
        u = rng.random(2 * k)
        u *= 2.0
        u -= 1.0
        x, y = u[0::2], u[1::2]
        s = x * x
        s += y * y
        ok = np.flatnonzero((s < 1.0) & (s > 0.0))
        s = s[ok]
        f = log2(s)
        f *= -2.0 * _LN2
        f /= s
        np.sqrt(f, out=f)
        take = min(need, 2 * ok.size)
        z = out[filled : filled + take]
        z[0::2] = x[ok[: (take + 1) // 2]] * f[: (take + 1) // 2]
        z[1::2] = y[ok[: take // 2]] * f[: take // 2]
        filled += take
    return out


def unit_vectors(rng: np.random.Generator, size: int) -> np.ndarray:
    """(size, 3) float64 directions uniform on the unit sphere."""
    v = standard_normal(rng, 3 * size).reshape(size, 3)
    norm = np.sqrt(v[:, 0] * v[:, 0] + v[:, 1] * v[:, 1] + v[:, 2] * v[:, 2])
    norm[norm == 0.0] = 1.0  # probability ~0; keeps the division defined
    v /= norm[:, None]
    return v
