"""Is one set of timings really slower than another? The ratio of their medians with a 95% bootstrap interval,
and a Mann-Whitney U test (scipy's, as Google benchmark's ``compare.py`` uses): timings are skewed and
heavy-tailed, so neither the mean nor a t-test suits them.

A difference is *significant* when the U test's two-sided p-value is below ``alpha`` and the interval of the
ratio leaves out 1: both say the two sets are not draws of one distribution, and which way the medians moved.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Difference", "difference"]


@dataclass(frozen=True)
class Difference:
    """How ``b`` compares with ``a`` (two sets of timings, any unit).

    ratio : median(b) / median(a): above 1, ``b`` is slower
    lo, hi : the 95% bootstrap interval of that ratio (percentile method)
    p : the two-sided Mann-Whitney U test's p-value (NaN with fewer than 2 samples a side)
    significant : p < alpha and the interval leaves out 1
    """

    ratio: float
    lo: float
    hi: float
    p: float
    significant: bool

    def words(self) -> str:
        """``slower by 12.3%``, ``faster by 4.0%`` (significant) or ``no significant difference``."""
        if not self.significant:
            return "no significant difference"
        return f"slower by {100 * (self.ratio - 1):.1f}%" if self.ratio > 1 else f"faster by {100 * (1 - self.ratio):.1f}%"


def difference(a, b, *, alpha: float = 0.05, resamples: int = 2000, seed: int = 0) -> Difference:
    """Compare timings ``b`` with ``a`` ((n,) and (m,) arrays, the same unit; non-finite values dropped)."""
    from scipy.stats import mannwhitneyu

    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    if a.size == 0 or b.size == 0:
        nan = float("nan")
        return Difference(nan, nan, nan, nan, False)
    ma, mb = float(np.median(a)), float(np.median(b))
    ratio = mb / ma if ma > 0 else float("inf") if mb > 0 else 1.0
    if a.size < 2 or b.size < 2:
        return Difference(ratio, float("nan"), float("nan"), float("nan"), False)
    rng = np.random.default_rng(seed)
    boot_a = np.median(a[rng.integers(0, a.size, (resamples, a.size))], axis=1)
    boot_b = np.median(b[rng.integers(0, b.size, (resamples, b.size))], axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = boot_b / boot_a
    ratios = ratios[np.isfinite(ratios)]
    lo, hi = (float(v) for v in np.percentile(ratios, [2.5, 97.5])) if ratios.size else (float("nan"),) * 2
    p = float(mannwhitneyu(a, b, alternative="two-sided").pvalue)
    return Difference(ratio, lo, hi, p, bool(p < alpha and not lo <= 1.0 <= hi))
