"""Every built-in index through the conformance kit (:mod:`viewer.index.conformance`), property by property: the
contract's cases against brute force, move_many's, the hypothesis state machine of inserts, removes, moves and
batch moves, and the numeric domain sweep. The kit is the one source of truth for what "exact" means; a plugin
author runs the same properties (``viewer check-index``, or ``check`` from their pytest suite)."""

from __future__ import annotations

import pytest

from viewer.index import INDEXES
from viewer.index.conformance import check, properties


@pytest.mark.parametrize("prop", properties())
@pytest.mark.parametrize("name", sorted(INDEXES))
def test_index_holds_the_property(name, prop):
    why = INDEXES[name].unavailable()
    if why:
        pytest.skip(f"{name}: {why}")
    check(name, prop)
