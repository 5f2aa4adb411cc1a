"""Every built-in index through the conformance kit (:mod:`viewer.index.conformance`), property by property: the
contract's cases against brute force, move_many's, the hypothesis state machine of inserts, removes, moves and
batch moves, and the numeric domain sweep. The kit is the one source of truth for what "exact" means; a plugin
author runs the same properties (``viewer check-index``, or ``check`` from their pytest suite)."""

from __future__ import annotations

import pytest

from viewer.index import INDEXES
from viewer.index.conformance import check, check_together, properties, together_properties

#: the state machine and the fuzz run once over every index (``check_together``): each example is drawn once
ONE_BY_ONE = [p for p in properties() if p not in together_properties()]


@pytest.mark.parametrize("prop", ONE_BY_ONE)
@pytest.mark.parametrize("name", sorted(INDEXES))
def test_index_holds_the_property(name, prop):
    why = INDEXES[name].unavailable()
    if why:
        pytest.skip(f"{name}: {why}")
    check(name, prop)


@pytest.mark.parametrize("prop", together_properties())
def test_every_index_holds_the_property_in_one_run(prop):
    """The same examples (for the state machine, random sequences of inserts, removes, moves, batch moves and
    queries) as ``check(name, prop)`` gives each index alone, done to every index in one run; a failure names its
    index."""
    missing = {name: INDEXES[name].unavailable() for name in sorted(INDEXES) if INDEXES[name].unavailable()}
    check_together([name for name in sorted(INDEXES) if name not in missing], prop)
    if missing:
        pytest.skip(f"not run on these indexes: {missing}")
