"""The hypothesis state machine: random sequences of inserts, removes, moves, batch moves (good and bad) and
queries (single, at a surface, in batches) against a plain model and brute force."""

from __future__ import annotations

import numpy as np

from ._kit import Subject, blamed, prop, together
from ._oracle import Model, assert_same, raises

#: hypothesis examples (sequences) and steps in each, by default
EXAMPLES = 40
STEPS = 40


def machine_for(*subjects: Subject):
    """A ``RuleBasedStateMachine`` class driving the indexes of ``subjects`` against one :class:`Model`: every
    step is drawn once and done to each of them in turn (hypothesis's drawing, most of a step's cost, is paid
    once however many indexes run). Ids are the model's; each index's own ids are mapped from them, so an index
    that hands out other ids than the rest is checked as rightly. A failure's exception carries the failing
    index's label as ``index_label``."""
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
            self.held = [_Held(s, c, r) for s in subjects]
            self.model = Model(c, r)
            self.removed: set[int] = set()
            self.next_id = len(r)

        def check(self, points, what: str = "query") -> None:
            ids, c, r = self.model.arrays()
            for h in self.held:
                with blamed(h.s):
                    assert_same(h.index, c, r, points, ids=h.their(ids), what=what)

        @rule(target=ids)
        def initial(self):
            return int(next(iter(self.model.c))) if self.model.c else self.insert((0.0, 0.0, 0.0), 1.0)

        @rule(target=ids, p=point, r=radius)
        def insert(self, p, r):
            m, self.next_id = self.next_id, self.next_id + 1
            for h in self.held:
                with blamed(h.s):
                    i = h.index.insert(p, r)
                    assert i not in h.used, f"insert handed out id {i}, already used"
                    h.ids[m] = i
                    h.used.add(i)
            self.model.c[m], self.model.r[m] = np.array(p, dtype=float), r
            return m

        @rule(i=consumes(ids))
        def remove(self, i):
            for h in self.held:
                with blamed(h.s):
                    if i in self.model.c:
                        h.index.remove(h.ids[i])
                    else:
                        with raises(KeyError, call=f"remove({h.ids[i]}), a removed id"):
                            h.index.remove(h.ids[i])
            if i in self.model.c:
                del self.model.c[i], self.model.r[i]
                self.removed.add(i)

        @rule(i=ids, p=point, r=st.none() | radius, small=st.booleans())
        def move(self, i, p, r, small):
            if i not in self.model.c:
                for h in self.held:
                    with blamed(h.s), raises(KeyError, call=f"move({h.ids[i]}, ...), a removed id"):
                        h.index.move(h.ids[i], p, r)
                return
            new = self.model.c[i] + np.array(p) * 1e-3 if small else np.array(p, dtype=float)
            for h in self.held:
                with blamed(h.s):
                    h.index.move(h.ids[i], new, r)
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
                    ids.append(None)  # an id no index holds
                if len(ids) > len(targets):
                    targets = np.concatenate([targets, np.zeros((1, 3))])
                    radii = None if radii is None else np.append(radii, 1.0)
                for h in self.held:
                    with blamed(h.s), raises(KeyError, ValueError, call=f"a bad batch ({bad})"):
                        h.index.move_many(h.their(ids), targets, radii)
                self.check(targets[np.isfinite(targets).all(axis=1)], what=f"query after a refused batch ({bad})")
                return
            for h in self.held:
                with blamed(h.s):
                    h.index.move_many(h.their(ids), targets, radii)
            for k, i in enumerate(ids):
                self.model.c[i] = targets[k].copy()
                if radii is not None:
                    self.model.r[i] = float(radii[k])

        @rule(p=point)
        def query(self, p):
            self.check([p])

        @rule(i=ids)
        def query_at_object(self, i):
            if i in self.model.c:
                self.check([self.model.c[i] + np.array([self.model.r[i], 0.0, 0.0])],
                           what="query exactly on a sphere's surface")

        @rule(ps=st.lists(point, max_size=6), surface=st.booleans())
        def query_many(self, ps, surface):
            pts = np.array(ps, dtype=np.float64).reshape(-1, 3)
            if surface and self.model.c:
                k = sorted(self.model.c)[0]
                pts = np.concatenate([pts, [self.model.c[k] + np.array([0.0, self.model.r[k], 0.0])]])
            ids, c, r = self.model.arrays()
            for h in self.held:
                with blamed(h.s):
                    offsets, found = h.index.query_many(pts)
                    for k, p in enumerate(pts):
                        assert_same(_Answer(found[offsets[k]:offsets[k + 1]]), c, r, [p], ids=h.their(ids),
                                    what=f"query_many's view {k}")

        @invariant()
        def sizes_agree(self):
            for h in self.held:
                with blamed(h.s):
                    assert len(h.index) == len(self.model.c), \
                        f"len(ix) is {len(h.index)}, {len(self.model.c)} objects held"
                    check = getattr(h.index, "check", None)
                    if check:
                        check()

    name = f"{subjects[0].cls.__name__}Machine" if len(subjects) == 1 else "IndexesMachine"
    IndexMachine.__name__ = IndexMachine.__qualname__ = name
    return IndexMachine


#: the id a bad batch names that no index holds
UNKNOWN_ID = 10**6


class _Held:
    """One index the machine drives: its subject, the index, the index's id of each of the model's ids, and every
    id it has handed out (none may come back)."""

    def __init__(self, s: Subject, c: np.ndarray, r: np.ndarray):
        self.s, self.index = s, s.build(c, r)
        self.ids = {i: i for i in range(len(r))}  # a build's ids are its rows
        self.used = set(self.ids.values())

    def their(self, model_ids) -> np.ndarray:
        """``model_ids`` as this index's ids (int64; None: :data:`UNKNOWN_ID`)."""
        return np.array([UNKNOWN_ID if i is None else self.ids[i] for i in model_ids], dtype=np.int64)


class _Answer:
    """One view of a ``query_many`` answer, looking like an index to :func:`assert_same`."""

    def __init__(self, ids):
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
    run_machine([s])


@together("state_machine")
def run_machine(subjects: list[Subject]) -> None:
    """The state machine over every index of ``subjects`` at once, with the first's seed and examples: each
    example's steps are drawn once and done to every index (so each index meets the sequences it would alone)."""
    from hypothesis import Phase, settings
    from hypothesis import seed as with_seed
    from hypothesis.stateful import run_state_machine_as_test

    s = subjects[0]
    run_state_machine_as_test(with_seed(s.seed)(machine_for(*subjects)),
                              settings=settings(max_examples=s.n_examples(EXAMPLES), stateful_step_count=STEPS,
                                                deadline=None, database=None,
                                                # no explain phase: its extra runs cost more than its notes tell
                                                phases=[p for p in Phase if p is not Phase.explain]))
