"""The built-in indexes' options, each of the type its constructor declares (a switch True or False, a number a
number, a text a text). The contract itself (exact sets against brute force, updates, batches, bad input and values
that are not real numbers, the state machine, the numeric domain) runs through the conformance kit, for every
index: tests/index/test_every_index_conforms.py."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from viewer.index import INDEXES, make_index

NAMES = sorted(INDEXES)


def _options(kind: str) -> list[tuple[str, str]]:
    """Every (index, option) whose constructor parameter is annotated ``kind``: ``bool`` (or defaults to a bool),
    ``number`` (int or float, perhaps None) or ``str``."""
    found = []
    for n in NAMES:
        for p in list(inspect.signature(INDEXES[n].__init__).parameters.values())[3:]:
            note = str(getattr(p.annotation, "__name__", p.annotation))
            if kind == "bool" and (note == "bool" or isinstance(p.default, bool)):
                found.append((n, p.name))
            elif kind == "number" and ("int" in note or "float" in note):
                found.append((n, p.name))
            elif kind == "str" and note == "str":
                found.append((n, p.name))
    return found


BOOL_OPTIONS = _options("bool")
NUMBER_OPTIONS = _options("number")
TEXT_OPTIONS = _options("str")


def test_the_switches_of_the_indexes_are_found():
    assert ("coherent", "relative") in BOOL_OPTIONS  # the search below sees at least the one known


@pytest.mark.parametrize("index,option", BOOL_OPTIONS, ids=[f"{i}:{o}" for i, o in BOOL_OPTIONS])
def test_a_switch_takes_only_true_or_false(index, option):
    """An index's boolean option is True or False (numpy's too); text (which Python reads as true, 'off' and
    'false' too), a number or None is a ValueError naming the option."""
    if INDEXES[index].unavailable():
        pytest.skip(INDEXES[index].unavailable())
    c, r = np.zeros((2, 3)), np.ones(2)
    for value in ("off", "false", "maybe", "", 1, 0, 1.0, None):
        with pytest.raises(ValueError, match=rf"^{option} must be True or False, got {value!r}"):
            make_index(index, c, r, **{option: value})
    for value in (True, False, np.bool_(True), np.bool_(False)):
        assert getattr(make_index(index, c, r, **{option: value}), option) is bool(value)


@pytest.mark.parametrize("index,option", NUMBER_OPTIONS, ids=[f"{i}:{o}" for i, o in NUMBER_OPTIONS])
def test_a_number_option_takes_only_numbers(index, option):
    """An index's number option refuses a bool (an int to Python), text, a list and an int too large for a float
    (a float option's; an int option may have no upper bound) with a ValueError naming it."""
    if INDEXES[index].unavailable():
        pytest.skip(INDEXES[index].unavailable())
    c, r = np.random.default_rng(0).uniform(0.0, 100.0, (16, 3)), np.full(16, 5.0)
    huge = (10**400,) if "float" in str(inspect.signature(INDEXES[index].__init__).parameters[option].annotation) else ()
    for value in (True, np.bool_(False), "2", [2], -(10**400), *huge):
        with pytest.raises(ValueError, match=option):
            make_index(index, c, r, **{option: value})


@pytest.mark.parametrize("index,option", TEXT_OPTIONS, ids=[f"{i}:{o}" for i, o in TEXT_OPTIONS])
def test_a_text_option_takes_only_its_names(index, option):
    c, r = np.zeros((2, 3)), np.ones(2)
    for value in (True, 1, ["all"], "nonsense"):
        with pytest.raises(ValueError, match=option):
            make_index(index, c, r, **{option: value})


