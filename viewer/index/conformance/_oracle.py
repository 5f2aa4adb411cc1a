"""The kit's oracle: an index's answers against brute force (:func:`assert_same`, :class:`Model`), raising a
:class:`Mismatch` that carries the objects and the point (so a failure can be shrunk and replayed); and
:func:`raises`, what a bad call must do."""

from __future__ import annotations

import re
from contextlib import contextmanager

import numpy as np

from ..brute import brute_query


class Mismatch(AssertionError):
    """An index answered a point otherwise than brute force.

    point : (3,) float64; got, want : the ids the index gave and the right ones (sorted int64); missed, extra:
    their differences. centres (N, 3), radii (N,), ids (N,) int64: the objects the index held then (row k is
    id ``ids[k]``), or None when unknown."""

    def __init__(self, message: str):
        super().__init__(message)
        self.point = self.got = self.want = None
        self.centres = self.radii = self.ids = None

    @classmethod
    def of(cls, what: str, point, got, want, centres=None, radii=None, ids=None) -> Mismatch:
        got, want = np.sort(np.asarray(got, dtype=np.int64)), np.sort(np.asarray(want, dtype=np.int64))
        missed, extra = np.setdiff1d(want, got), np.setdiff1d(got, want)
        p = tuple(float(v) for v in np.asarray(point, dtype=float).ravel())
        m = cls(f"{what} at point {p}: missed ids {_few(missed)}, returned ids outside {_few(extra)}"
                + ("" if missed.size or extra.size else f" (the same set, other order or repeats: {_few(got)})"))
        m.point, m.got, m.want = np.asarray(p), got, want
        if centres is not None:
            m.centres = np.asarray(centres, dtype=float).reshape(-1, 3).copy()
            m.radii = np.asarray(radii, dtype=float).copy()
            m.ids = np.arange(len(m.radii)) if ids is None else np.asarray(ids, dtype=np.int64).copy()
        return m


def _few(a: np.ndarray, n: int = 8) -> str:
    items = ", ".join(str(int(v)) for v in a[:n])
    return f"[{items}{', ...' if a.size > n else ''}]" + (f" ({a.size})" if a.size > n else "")


def assert_same(ix, centres, radii, points, ids=None, what: str = "query") -> None:
    """Every point's ``ix.query`` equals brute force over ``centres`` (N, 3), ``radii`` (N,) mapped through
    ``ids`` (N,) (default: row numbers); ``stats`` agree (visible = the count, candidates >= it)."""
    centres = np.asarray(centres, dtype=float).reshape(-1, 3)
    for p in np.asarray(points, dtype=float).reshape(-1, 3):
        got = np.asarray(ix.query(p))
        want = brute_query(centres, radii, p)
        if ids is not None:
            want = np.asarray(ids)[want]
        if not np.array_equal(np.sort(got), np.sort(want)):
            raise Mismatch.of(what, p, got, want, centres, radii, ids)
        st = ix.stats
        assert st.visible == len(want), f"{what} at {tuple(p)}: stats.visible {st.visible}, {len(want)} visible"
        assert st.candidates >= len(want), f"{what} at {tuple(p)}: stats.candidates {st.candidates} < {len(want)} visible"


class Model:
    """Ids -> (centre, radius): what the index under test should hold, beside it."""

    def __init__(self, c, r):
        self.c = {i: np.array(p, dtype=float) for i, p in enumerate(c)}
        self.r = {i: float(q) for i, q in enumerate(r)}

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(ids (N,) int64 sorted, centres (N, 3), radii (N,)) of the objects held."""
        ids = np.array(sorted(self.c), dtype=np.int64)
        return ids, np.array([self.c[i] for i in ids]).reshape(-1, 3), np.array([self.r[i] for i in ids])

    def check(self, ix, points, what: str = "query") -> None:
        """Every point's answer equals brute force over the model."""
        ids, c, r = self.arrays()
        assert_same(ix, c, r, points, ids=ids, what=what)


class _Raised:
    value: BaseException | None = None


@contextmanager
def raises(*kinds: type[BaseException], call: str, match: str | None = None):
    """The block must raise one of ``kinds`` with a message (matching the regex ``match``); ``call`` says in the
    failure which call it was (``ix.remove(7), a removed id``)."""
    box = _Raised()
    names = " or ".join(k.__name__ for k in kinds)
    try:
        yield box
    except kinds as exc:
        box.value = exc
        text = str(exc)
        assert text, f"{call}: raised {type(exc).__name__} with no message; the message must name the problem"
        assert match is None or re.search(match, text), \
            f"{call}: raised {type(exc).__name__}({text!r}), whose message should match {match!r}"
    except AssertionError:
        raise
    except Exception as exc:
        raise AssertionError(f"{call}: raised {type(exc).__name__}({exc}); expected {names}") from exc
    else:
        raise AssertionError(f"{call}: raised nothing; expected {names}")
