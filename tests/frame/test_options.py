""":class:`viewer.frame.options.SessionOptions` checks what a session is told before any GL context exists:
every allowed mode is taken, and a bad draw, colour, cull, fade or fog value is a ValueError naming the
field and the value."""

from __future__ import annotations

import math

import pytest

from viewer.frame.options import COLOUR_MODES, CULL_MODES, DRAW_MODES, SessionOptions

MODES = {"draw": DRAW_MODES, "colour": COLOUR_MODES, "cull": CULL_MODES}


def test_the_defaults_are_valid_and_among_the_modes():
    o = SessionOptions()
    for name, allowed in MODES.items():
        assert getattr(o, name) in allowed
    assert 0.0 <= o.fade <= 1.0 and o.fog >= 0.0


@pytest.mark.parametrize("name, value", [(n, v) for n, modes in MODES.items() for v in modes])
def test_every_listed_mode_is_accepted(name, value):
    assert getattr(SessionOptions(**{name: value}), name) == value


@pytest.mark.parametrize("name", sorted(MODES))
@pytest.mark.parametrize("value", ["", "nonsense", "SPRITES", None, 1])
def test_an_unknown_mode_names_the_field_the_value_and_the_choices(name, value):
    with pytest.raises(ValueError) as info:
        SessionOptions(**{name: value})
    msg = str(info.value)
    assert msg.startswith(f"{name} must be one of") and repr(value) in msg
    assert all(mode in msg for mode in MODES[name])


@pytest.mark.parametrize("value", [0.0, 0.5, 1.0, 0, 1])
def test_fade_takes_fractions_from_zero_to_one(value):
    assert SessionOptions(fade=value).fade == value


@pytest.mark.parametrize("value", [-1e-9, 1.0 + 1e-9, -1.0, 2.0, math.inf, -math.inf, math.nan])
def test_fade_outside_zero_to_one_is_refused(value):
    with pytest.raises(ValueError, match=r"^fade must be in \[0, 1\]") as info:
        SessionOptions(fade=value)
    assert repr(value) in str(info.value)


@pytest.mark.parametrize("value", [0.0, 1.5, 100.0])
def test_fog_takes_any_non_negative_density(value):
    assert SessionOptions(fog=value).fog == value


@pytest.mark.parametrize("value", [-1e-9, -1.0, -math.inf, math.nan])
def test_negative_or_nan_fog_is_refused(value):
    with pytest.raises(ValueError, match=r"^fog must be >= 0") as info:
        SessionOptions(fog=value)
    assert repr(value) in str(info.value)


def test_the_first_bad_field_is_the_one_named():
    """Several bad values at once: the message names one field, so the user fixes one thing at a time."""
    with pytest.raises(ValueError) as info:
        SessionOptions(draw="bad", fade=5.0, fog=-1.0)
    msg = str(info.value)
    assert msg.startswith("draw ") and "fade" not in msg and "fog" not in msg


def test_options_do_not_share_their_mutable_defaults():
    a, b = SessionOptions(), SessionOptions()
    a.index_options["octree"] = {"leaf": 8}
    assert b.index_options == {}
