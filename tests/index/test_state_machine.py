"""Random insert / remove / move / move_many / query sequences against a plain model, for every index:
nothing lost, nothing stale, bad ids rejected, a bad batch changes nothing."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, consumes, invariant, rule

from viewer.index import INDEXES, brute_query

coord = st.floats(-300, 300, allow_nan=False, width=64) | st.sampled_from([0.0, 16.0, -32.0, 64.0, 1e5])
radius = st.floats(0, 80, allow_nan=False) | st.sampled_from([0.0, 4.0, 8.0, 16.0, 1000.0])
point = st.tuples(coord, coord, coord)


def machine_for(name: str):
    class IndexMachine(RuleBasedStateMachine):
        ids = Bundle("ids")

        def __init__(self):
            super().__init__()
            rng = np.random.default_rng(7)
            c = rng.uniform(-100, 100, (20, 3))
            r = rng.uniform(0, 40, 20)
            self.index = INDEXES[name](c, r)
            self.model = {i: (c[i].copy(), float(r[i])) for i in range(20)}
            self.removed: set[int] = set()

        @rule(target=ids)
        def initial(self):
            return int(next(iter(self.model))) if self.model else self.index.insert((0.0, 0.0, 0.0), 1.0)

        @rule(target=ids, p=point, r=radius)
        def insert(self, p, r):
            i = self.index.insert(p, r)
            assert i not in self.model and i not in self.removed
            self.model[i] = (np.array(p, dtype=float), r)
            return i

        @rule(i=consumes(ids))
        def remove(self, i):
            if i in self.model:
                self.index.remove(i)
                del self.model[i]
                self.removed.add(i)
            else:
                with pytest.raises(KeyError):
                    self.index.remove(i)

        @rule(i=ids, p=point, r=st.none() | radius, small=st.booleans())
        def move(self, i, p, r, small):
            if i not in self.model:
                with pytest.raises(KeyError):
                    self.index.move(i, p, r)
                return
            c0, r0 = self.model[i]
            new = c0 + np.array(p) * 1e-3 if small else np.array(p, dtype=float)
            self.index.move(i, new, r)
            self.model[i] = (new, r0 if r is None else r)

        @rule(data=st.data(), keep=st.booleans(), small=st.booleans(),
              bad=st.sampled_from([None] * 6 + ["removed", "unknown", "repeated", "nan", "radius"]))
        def move_many(self, data, keep, small, bad):
            live = sorted(self.model)
            ids = data.draw(st.lists(st.sampled_from(live), unique=True, max_size=12)) if live else []
            m = len(ids)
            targets = np.array(data.draw(st.lists(point, min_size=m, max_size=m)), dtype=float).reshape(m, 3)
            if small and m:
                targets = np.array([self.model[i][0] for i in ids]) + targets * 1e-3
            radii = None if keep else np.array(data.draw(st.lists(radius, min_size=m, max_size=m)), dtype=float)
            if bad is not None:
                ids, targets = list(ids), targets.copy()
                if bad == "removed" and self.removed:
                    ids.append(min(self.removed))
                elif bad == "repeated" and ids:
                    ids.append(ids[0])
                elif bad == "nan" and ids:
                    targets[-1, 1] = np.nan
                elif bad == "radius" and ids and radii is not None:
                    radii[-1] = -1.0
                else:
                    ids.append(10**6)  # unknown
                if len(ids) > len(targets):
                    targets = np.concatenate([targets, np.zeros((1, 3))])
                    radii = None if radii is None else np.append(radii, 1.0)
                with pytest.raises((KeyError, ValueError)):
                    self.index.move_many(np.array(ids, dtype=np.int64), targets, radii)
                for p in targets[np.isfinite(targets).all(axis=1)]:
                    self._compare(p)  # nothing moved
                return
            self.index.move_many(np.array(ids, dtype=np.int64), targets, radii)
            for k, i in enumerate(ids):
                self.model[i] = (targets[k].copy(), self.model[i][1] if radii is None else float(radii[k]))

        @rule(p=point)
        def query(self, p):
            self._compare(np.array(p))

        @rule(i=ids)
        def query_at_object(self, i):
            if i in self.model:
                c, r = self.model[i]
                self._compare(c + np.array([r, 0.0, 0.0]))  # exactly on the surface

        @rule(ps=st.lists(point, max_size=6), surface=st.booleans())
        def query_many(self, ps, surface):
            pts = np.array(ps, dtype=np.float64).reshape(-1, 3)
            if surface and self.model:  # a view exactly on an object's surface, as query_at_object
                c, r = self.model[sorted(self.model)[0]]
                pts = np.concatenate([pts, [c + np.array([0.0, r, 0.0])]])
            offsets, ids = self.index.query_many(pts)
            for k, p in enumerate(pts):
                self._compare(p, ids[offsets[k]:offsets[k + 1]])

        def _compare(self, p, got=None):
            got = np.sort(self.index.query(p) if got is None else got)
            keys = np.array(sorted(self.model), dtype=np.int64)
            if keys.size:
                cs = np.array([self.model[k][0] for k in keys])
                rs = np.array([self.model[k][1] for k in keys])
                want = keys[brute_query(cs, rs, p)]
            else:
                want = keys
            assert np.array_equal(got, np.sort(want)), (p, got, want)

        @invariant()
        def sizes_agree(self):
            assert len(self.index) == len(self.model)
            check = getattr(self.index, "check", None)
            if check:
                check()

    IndexMachine.__name__ = f"{name.capitalize()}Machine"
    return IndexMachine


@pytest.mark.parametrize("name", sorted(INDEXES))
def test_state_machine(name):
    why = INDEXES[name].unavailable()
    if why:
        pytest.skip(why)
    machine = machine_for(name)
    machine.TestCase.settings = settings(max_examples=40, stateful_step_count=40, deadline=None)
    machine.TestCase().runTest()
