"""The hypothesis state machine: random sequences of inserts, removes, moves, batch moves (good and bad) and
queries (single, at a surface, in batches) against a plain model and brute force."""

from __future__ import annotations

import numpy as np

from ._kit import Subject, prop
from ._oracle import Model, raises

#: hypothesis examples (sequences) and steps in each, by default
EXAMPLES = 40
STEPS = 40


def machine_for(s: Subject):
    """A ``RuleBasedStateMachine`` class driving ``s``'s index against a :class:`Model`."""
    from hypothesis import strategies as st
    from hypothesis.stateful import Bundle, RuleBasedStateMachine, consumes, invariant, rule

    coord = st.floats(-300, 300, allow_nan=False, width=64) | st.sampled_from([0.0, 16.0, -32.0, 64.0, 1e5])
    radius = st.floats(0, 80, allow_nan=False) | st.sampled_from([0.0, 4.0, 8.0, 16.0, 1000.0])
    point = st.tuples(coord, coord, coord)

    class IndexMachine(RuleBasedStateMachine):
        ids = Bundle("ids")

        def __init__(self):
            super().__init__()
            rng = np.random.default_rng(7)
            c = rng.uniform(-100, 100, (20, 3))
            r = rng.uniform(0, 40, 20)
            self.index = s.build(c, r)
            self.model = Model(c, r)
            self.removed: set[int] = set()

        @rule(target=ids)
        def initial(self):
            return int(next(iter(self.model.c))) if self.model.c else self.index.insert((0.0, 0.0, 0.0), 1.0)

        @rule(target=ids, p=point, r=radius)
        def insert(self, p, r):
            i = self.index.insert(p, r)
            assert i not in self.model.c and i not in self.removed, f"insert handed out id {i}, already used"
            self.model.c[i], self.model.r[i] = np.array(p, dtype=float), r
            return i

        @rule(i=consumes(ids))
        def remove(self, i):
            if i in self.model.c:
                self.index.remove(i)
                del self.model.c[i], self.model.r[i]
                self.removed.add(i)
            else:
                with raises(KeyError, call=f"remove({i}), a removed id"):
                    self.index.remove(i)

        @rule(i=ids, p=point, r=st.none() | radius, small=st.booleans())
        def move(self, i, p, r, small):
            if i not in self.model.c:
                with raises(KeyError, call=f"move({i}, ...), a removed id"):
                    self.index.move(i, p, r)
                return
            new = self.model.c[i] + np.array(p) * 1e-3 if small else np.array(p, dtype=float)
            self.index.move(i, new, r)
            self.model.c[i] = new
            if r is not None:
                self.model.r[i] = r

        @rule(data=st.data(), keep=st.booleans(), small=st.booleans(),
              bad=st.sampled_from([None] * 6 + ["removed", "unknown", "repeated", "nan", "radius"]))
        def move_many(self, data, keep, small, bad):
            live = sorted(self.model.c)
            ids = data.draw(st.lists(st.sampled_from(live), unique=True, max_size=12)) if live else []
            m = len(ids)
            targets = np.array(data.draw(st.lists(point, min_size=m, max_size=m)), dtype=float).reshape(m, 3)
            if small and m:
                targets = np.array([self.model.c[i] for i in ids]) + targets * 1e-3
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
                with raises(KeyError, ValueError, call=f"a bad batch ({bad})"):
                    self.index.move_many(np.array(ids, dtype=np.int64), targets, radii)
                self.model.check(self.index, targets[np.isfinite(targets).all(axis=1)],
                                 what=f"query after a refused batch ({bad})")
                return
            self.index.move_many(np.array(ids, dtype=np.int64), targets, radii)
            for k, i in enumerate(ids):
                self.model.c[i] = targets[k].copy()
                if radii is not None:
                    self.model.r[i] = float(radii[k])

        @rule(p=point)
        def query(self, p):
            self.model.check(self.index, [p])

        @rule(i=ids)
        def query_at_object(self, i):
            if i in self.model.c:
                self.model.check(self.index, [self.model.c[i] + np.array([self.model.r[i], 0.0, 0.0])],
                                 what="query exactly on a sphere's surface")

        @rule(ps=st.lists(point, max_size=6), surface=st.booleans())
        def query_many(self, ps, surface):
            pts = np.array(ps, dtype=np.float64).reshape(-1, 3)
            if surface and self.model.c:
                k = sorted(self.model.c)[0]
                pts = np.concatenate([pts, [self.model.c[k] + np.array([0.0, self.model.r[k], 0.0])]])
            offsets, found = self.index.query_many(pts)
            for k, p in enumerate(pts):
                self.model.check(_Answer(found[offsets[k]:offsets[k + 1]], self.index), [p],
                                 what=f"query_many's view {k}")

        @invariant()
        def sizes_agree(self):
            assert len(self.index) == len(self.model.c), \
                f"len(ix) is {len(self.index)}, {len(self.model.c)} objects held"
            check = getattr(self.index, "check", None)
            if check:
                check()

    IndexMachine.__name__ = IndexMachine.__qualname__ = f"{s.cls.__name__}Machine"
    return IndexMachine


class _Answer:
    """One view of a ``query_many`` answer, looking like an index to :meth:`Model.check`."""

    def __init__(self, ids, ix):
        self.ids, self.stats = ids, _Stats(len(ids))

    def query(self, p):
        return self.ids


class _Stats:
    def __init__(self, n: int):
        self.visible = self.candidates = n


@prop("state_machine")
def state_machine(s: Subject, _) -> None:
    """Random sequences (40 of 40 steps by default; ``--examples``) of inserts, removes, moves, batch moves
    (some bad: removed, unknown or repeated ids, NaN centres, negative radii, each refused changing nothing) and
    queries (anywhere, exactly on a surface, in batches) agree with brute force over a model at every step;
    ``len`` agrees; ids are never reused."""
    from hypothesis import Phase, settings
    from hypothesis import seed as with_seed
    from hypothesis.stateful import run_state_machine_as_test

    machine = machine_for(s)
    run_state_machine_as_test(with_seed(s.seed)(machine),
                              settings=settings(max_examples=s.n_examples(EXAMPLES), stateful_step_count=STEPS,
                                                deadline=None, database=None,
                                                # no explain phase: its extra runs cost more than its notes tell
                                                phases=[p for p in Phase if p is not Phase.explain]))
