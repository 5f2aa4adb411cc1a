"""The balanced turn orders (:mod:`viewer.timing.interleave`): each item follows every other equally often
and takes every place equally often."""

from __future__ import annotations

from collections import Counter

import pytest

from viewer.timing import interleave


@pytest.mark.parametrize("k", range(0, 10))
def test_balanced_orders_make_each_item_follow_every_other_equally_often(k):
    rows = interleave.balanced_orders(k)
    assert all(sorted(r) == list(range(k)) for r in rows)
    assert len(rows) == (1 if k <= 1 else k if k % 2 == 0 else 2 * k)  # Williams: k rows, 2k for odd k
    follows = Counter((a, b) for r in rows for a, b in zip(r, r[1:]))
    assert set(follows) == {(a, b) for a in range(k) for b in range(k) if a != b}
    assert len(set(follows.values())) <= 1
    places = Counter((item, place) for r in rows for place, item in enumerate(r))
    assert set(places) == {(i, p) for i in range(k) for p in range(k)}
    assert len(set(places.values())) <= 1
