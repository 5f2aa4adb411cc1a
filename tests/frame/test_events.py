"""Visibility events: entered / left arrays that replay to the visible set; hysteresis; subscribers."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from viewer.frame.events import VisibilityTracker, format_margin, parse_margin
from viewer.index import brute_query


def world(rng, n=3000):
    return rng.uniform(-60, 60, (n, 3)), rng.uniform(2, 25, n)


def flight(rng, frames=300):
    """A wandering camera path through the world, (frames, 3)."""
    return np.cumsum(rng.normal(0.0, 1.5, (frames, 3)), axis=0)


def dist(c, r, p):
    d = np.asarray(p) - c
    return np.sqrt((d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]) + d[:, 2] * d[:, 2])


def test_events_replayed_reconstruct_the_visible_set_every_frame(rng):
    c, r = world(rng)
    tr = VisibilityTracker(len(r))
    replayed: set[int] = set()
    changes = 0
    for p in flight(rng):
        c[:300] += rng.normal(0, 0.5, (300, 3))  # some objects move too
        vis = brute_query(c, r, p)
        entered, left = tr.update(vis, None, p, c, r)
        assert entered.dtype == np.int64 and np.all(np.diff(entered) > 0) and np.all(np.diff(left) > 0)
        assert not (set(entered.tolist()) & replayed)          # an entering object was out
        assert set(left.tolist()) <= replayed                  # a leaving object was in
        replayed |= set(entered.tolist())
        replayed -= set(left.tolist())
        assert replayed == set(vis.tolist())
        assert sorted(tr.inside().tolist()) == sorted(replayed) and len(tr) == vis.size
        changes += entered.size + left.size
    assert changes > 100  # the flight does cross boundaries
    assert tr.total_entered - tr.total_left == len(tr)


@pytest.mark.parametrize("margin, relative", [(3.0, False), (0.2, True)])
def test_with_a_margin_the_in_set_is_a_superset_that_follows_the_rule(rng, margin, relative):
    c, r = world(rng)
    tr = VisibilityTracker(len(r), margin, relative)
    plain = VisibilityTracker(len(r))
    replayed: set[int] = set()
    prev: set[int] = set()
    for p in flight(rng):
        vis = brute_query(c, r, p)
        entered, left = tr.update(vis, None, p, c, r)
        plain.update(vis, None, p, c, r)
        replayed = (replayed | set(entered.tolist())) - set(left.tolist())
        assert replayed == set(tr.inside().tolist())
        v = set(vis.tolist())
        assert v <= replayed                                     # everything visible is in
        big = r * (1 + margin) if relative else r + margin
        d = dist(c, r, p)
        extra = np.array(sorted(replayed - v), dtype=np.int64)
        assert (d[extra] <= big[extra]).all()                    # the rest is within the margin ...
        assert set(extra.tolist()) <= prev                       # ... and was in the frame before
        gone = np.array(sorted(prev - replayed), dtype=np.int64)
        assert (d[gone] > big[gone]).all()                       # leaving means beyond r + margin
        prev = replayed
    assert tr.total_left < plain.total_left                     # hysteresis cuts the churn


@pytest.mark.parametrize("margin, relative", [(2.0, False), (0.1, True)])
def test_an_object_hovering_on_its_boundary_makes_no_events_once_in(margin, relative):
    c = np.array([[0.0, 0.0, 0.0], [100.0, 0.0, 0.0]])
    r = np.array([20.0, 5.0])
    tr = VisibilityTracker(2, margin, relative)
    width = 0.9 * (margin if not relative else margin * r[0])  # oscillate by less than the margin
    events = []
    for k in range(200):
        x = r[0] + width * np.sin(k * 0.7)  # crosses r back and forth
        p = np.array([x, 0.0, 0.0])
        e, lft = tr.update(brute_query(c, r, p), None, p, c, r)
        events.append((e.tolist(), lft.tolist()))
    first = next(k for k, (e, _) in enumerate(events) if e)
    assert events[first] == ([0], [])
    assert all(ev == ([], []) for ev in events[first + 1:])
    # without a margin the same hover flickers
    flick = VisibilityTracker(2)
    n = 0
    for k in range(200):
        p = np.array([r[0] + width * np.sin(k * 0.7), 0.0, 0.0])
        e, lft = flick.update(brute_query(c, r, p), None, p, c, r)
        n += e.size + lft.size
    assert n > 20
    # and beyond the margin it does leave
    p = np.array([r[0] + 1.5 * (margin if not relative else margin * r[0]), 0.0, 0.0])
    assert tr.update(brute_query(c, r, p), None, p, c, r)[1].tolist() == [0]


def test_subscribers_reset_and_growth(rng):
    c, r = world(rng, 500)
    tr = VisibilityTracker(10)  # grows to the ids it meets
    got_in, got_out = [], []
    unsubscribe = tr.subscribe(on_enter=lambda ids: got_in.append(ids.copy()),
                               on_leave=lambda ids: got_out.append(ids.copy()))
    path = flight(rng, 100)
    for p in path:
        e, lft = tr.update(brute_query(c, r, p), None, p, c, r)
        if e.size:
            assert np.array_equal(got_in[-1], e) and not e.flags.writeable
        if lft.size:
            assert np.array_equal(got_out[-1], lft)
    assert sum(a.size for a in got_in) == tr.total_entered > 0
    assert sum(a.size for a in got_out) == tr.total_left
    unsubscribe()
    n = len(got_in)
    tr.reset()
    p = path[-1]
    vis = brute_query(c, r, p)
    e, lft = tr.update(vis, None, p, c, r)
    assert np.array_equal(e, np.sort(vis)) and lft.size == 0 and len(got_in) == n
    # query_into's buffer with a count works the same as an exact array
    buf = np.full(vis.size + 10, -1, dtype=np.int64)
    buf[: vis.size] = vis
    t2 = VisibilityTracker(len(r))
    assert np.array_equal(t2.update(buf, vis.size, p, c, r)[0], np.sort(vis))


def test_margin_text():
    assert parse_margin("5") == (5.0, False) and parse_margin("10%") == (0.1, True) and parse_margin("0") == (0.0, False)
    for bad in ("-1", "x", "nan", "inf%"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_margin(bad)
    assert format_margin(0.0, False) == "off" and format_margin(5.0, False) == "5" and format_margin(0.1, True) == "10%"
    with pytest.raises(ValueError):
        VisibilityTracker(4, margin=-1.0)


@pytest.mark.parametrize("relative", ["off", "true", 1, None])
def test_the_relative_switch_takes_true_or_false_only(relative):
    """To ``bool()`` the text 'off' is true: the switch is refused, naming itself, unless it is a bool."""
    with pytest.raises(ValueError, match="relative must be True or False"):
        VisibilityTracker(4, 0.1, relative)
    tr = VisibilityTracker(4, 0.1, np.bool_(True))
    with pytest.raises(ValueError, match="relative must be True or False"):
        tr.set_margin(0.2, relative)
    assert tr.relative is True and tr.margin == 0.1  # a refused change changes nothing
