"""The kit's machinery: the index under test (:class:`Subject`), the registry of named properties, running one
property (:func:`evaluate`, :func:`check`) and what a failure reports (the counter-example, shrunk when a fresh
build reproduces it, and how to replay it)."""

from __future__ import annotations

import math
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from .._contract import SphereIndex
from ._oracle import Mismatch

#: the seed of every random draw when none is given (each property draws from a fresh generator of it)
DEFAULT_SEED = 12345


@dataclass(frozen=True)
class Subject:
    """The index under test: its class, the options every build passes, and how to name it in a replay.

    cls : the index class (a :class:`~viewer.index.SphereIndex` subclass, or one that duck-types its API)
    options : keyword arguments of every build (an ``--index`` spec's options)
    label : how a user names it: a registered name or a spec (``octree``, ``pkg.mod:Cls:leaf=16``)
    seed : the seed of every random draw; examples : hypothesis examples per randomised property (None: each
    property's own default)
    """

    cls: type
    options: dict = field(default_factory=dict)
    label: str = ""
    seed: int = DEFAULT_SEED
    examples: int | None = None

    def build(self, centres, radii, **more) -> SphereIndex:
        """An index of ``cls`` over ``centres`` (N, 3) and ``radii`` (N,), with the subject's options and ``more``."""
        return self.cls(centres, radii, **{**self.options, **more})

    def rng(self, salt: int | None = None) -> np.random.Generator:
        """A fresh generator of the seed (and ``salt``, so two draws of one property differ)."""
        return np.random.default_rng(self.seed if salt is None else (self.seed, salt))

    def n_examples(self, default: int) -> int:
        return self.examples if self.examples is not None else default


@dataclass(frozen=True)
class Property:
    """One named property: ``run(subject, case)`` raises (an ``AssertionError`` for a wrong answer) or returns."""

    name: str
    doc: str
    run: Callable[[Subject, object], None]
    case: object = None


_PROPERTIES: dict[str, Property] = {}


def prop(name: str, cases: dict[str, object] | None = None):
    """Register the decorated ``fn(subject, case)`` as property ``name`` (or, with ``cases``, one property
    ``name/label`` per case); its docstring's first paragraph is the property's description."""

    def register(fn):
        doc = (fn.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
        for label, case in (cases or {None: None}).items():
            key = name if label is None else f"{name}/{label}"
            assert key not in _PROPERTIES, key
            _PROPERTIES[key] = Property(key, doc, fn, case)
        return fn

    return register


#: the properties that can run over many subjects at once (``run(subjects)``: each example drawn once, done to all)
TOGETHER: dict[str, Callable[[list["Subject"]], None]] = {}


def together(name: str):
    """Register the decorated ``run(subjects)`` as property ``name``'s run over many subjects at once."""

    def register(fn):
        TOGETHER[name] = fn
        return fn

    return register


@contextmanager
def blamed(subject: Subject):
    """Whatever fails inside is marked as ``subject``'s (the exception's ``index_label``), for a run over many."""
    try:
        yield
    except BaseException as exc:
        if not hasattr(exc, "index_label"):
            exc.index_label = subject.label
        raise


def registered() -> dict[str, Property]:
    """Every property by name, in the order they were registered."""
    return _PROPERTIES


@dataclass(frozen=True)
class Outcome:
    """What one property gave: ``ok``, the seconds it took and, for a failure, the report (what went wrong,
    the smallest counter-example found, how to replay it)."""

    name: str
    ok: bool
    seconds: float
    report: str = ""


class ConformanceFailure(AssertionError):
    """An index broke a property; the message is the whole report (counter-example and replay)."""


def evaluate(subject: Subject, name: str) -> Outcome:
    """Run property ``name`` on ``subject``; never raises for the index's faults (they are the outcome)."""
    from hypothesis.reporting import with_reporter

    p = _PROPERTIES[name]
    said: list[str] = []
    t0 = time.perf_counter()
    try:
        with with_reporter(lambda text: said.append(str(text))):
            p.run(subject, p.case)
    except Exception as exc:  # the index's fault, whatever it raised: reported, not propagated
        seconds = time.perf_counter() - t0
        return Outcome(name, False, seconds, _report(subject, name, exc, said))
    return Outcome(name, True, time.perf_counter() - t0)


def check(index, prop: str, *, seed: int = DEFAULT_SEED, examples: int | None = None, **options) -> None:
    """Run property ``prop`` (a name of :func:`properties`) on ``index``: a class, a spec text (``octree``,
    ``pkg.mod:Cls:leaf=16``) or an ``IndexSpec``; ``options`` are passed to every build. Returns if the
    property holds, else raises :class:`ConformanceFailure` whose message is the report."""
    if prop not in _PROPERTIES:
        raise KeyError(f"no property {prop!r}; properties() lists them")
    subject = subject_for(index, seed=seed, examples=examples, **options)
    warm(subject)
    out = evaluate(subject, prop)
    if not out.ok:
        raise ConformanceFailure(out.report)


def build(index, centres, radii, **options) -> SphereIndex:
    """An index of ``index`` (a class, a spec text or an ``IndexSpec``, as :func:`check` takes) over ``centres``
    (N, 3) and ``radii`` (N,): what a failure's replay snippet calls."""
    return subject_for(index, **options).build(centres, radii)


def subject_for(index, *, seed: int = DEFAULT_SEED, examples: int | None = None, flag: str = "index",
                **options) -> Subject:
    """The :class:`Subject` of ``index``: a class, a spec text (read by :func:`viewer.index.specs.parse_index_spec`,
    :class:`~viewer.errors.UserError` naming ``flag`` and the spec when it does not load) or an ``IndexSpec``."""
    if isinstance(index, str):
        from ..specs import parse_index_spec

        index = parse_index_spec(index, flag=flag)
    if isinstance(index, type):
        cls, opts, label = index, {}, f"{index.__module__}:{index.__qualname__}"
    else:  # an IndexSpec
        cls, opts, label = index.cls, dict(index.options), index.label
    if options:  # the replay names them as a spec's options
        label += ("," if opts else ":") + ",".join(f"{k}={v}" for k, v in options.items())
    return Subject(cls, {**opts, **options}, label, seed, examples)


def warm(subject: Subject) -> None:
    """Compile the class's kernels once (so no property's time holds them, and forked cases inherit them)."""
    warm_up = getattr(subject.cls, "warm_up", None)
    if warm_up is not None and not unavailable(subject):
        warm_up()


def unavailable(subject: Subject) -> str | None:
    """Why the class cannot be built here (a library missing), or None."""
    why = getattr(subject.cls, "unavailable", None)
    return why() if why is not None else None


# --------------------------------------------------------------------------- the failure's report


def _report(subject: Subject, name: str, exc: BaseException, said: list[str]) -> str:
    lines = [_one_line(exc)]
    # hypothesis's shrunk example: reported, or (newer releases) in the exception's notes
    hyp = [s for s in [*said, *getattr(exc, "__notes__", [])] if s.strip() and not s.startswith("You can ")]
    if hyp:  # hypothesis's shrunk example (a state machine's steps as code)
        lines += ["smallest counter-example hypothesis found:", *_indent("\n".join(hyp))]
    mismatch = _find(exc, Mismatch)
    if mismatch is not None and mismatch.centres is not None:
        lines += _shrunk(subject, mismatch)
    elif not hyp and not isinstance(exc, AssertionError):
        lines += ["raised from:", *_indent(_last_frames(exc))]
    lines += ["replay:", *_indent(replay(subject, name))]
    return "\n".join(lines)


def replay(subject: Subject, name: str) -> str:
    """The command and the Python that run property ``name`` on ``subject`` again, with its seed."""
    seed = "" if subject.seed == DEFAULT_SEED else f" --seed {subject.seed}"
    ex = "" if subject.examples is None else f" --examples {subject.examples}"
    args = "" if subject.seed == DEFAULT_SEED else f", seed={subject.seed}"
    args += "" if subject.examples is None else f", examples={subject.examples}"
    return (f"viewer check-index '{subject.label}' --only '{name}'{seed}{ex}\n"
            f"python -c \"from viewer.index.conformance import check; check('{subject.label}', '{name}'{args})\"")


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    first = text.splitlines()[0]
    return first if isinstance(exc, AssertionError) else f"{type(exc).__name__}: {first}"


def _find(exc: BaseException | None, kind: type) -> BaseException | None:
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, kind):
            return exc
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return None


def _last_frames(exc: BaseException, n: int = 3) -> str:
    frames = traceback.extract_tb(exc.__traceback__)[-n:]
    return "".join(traceback.format_list(frames)).rstrip()


def _indent(text: str, pad: str = "  ") -> list[str]:
    return [pad + line for line in text.splitlines()]


# --------------------------------------------------------------------------- shrinking a wrong answer

_MAX_BUILDS = 200  # fresh builds one shrink may try (each is tiny)


def _differs(subject: Subject, c: np.ndarray, r: np.ndarray, p: np.ndarray) -> bool:
    """Whether a fresh build over (c, r) answers ``p`` otherwise than brute force (a build that raises counts
    as not reproducing: the shrink looks for a wrong answer, not for another error)."""
    from ..brute import brute_query

    try:
        got = np.sort(np.asarray(subject.build(c, r).query(p), dtype=np.int64))
    except Exception:
        return False
    return not np.array_equal(got, brute_query(c, r, p))


def shrink(subject: Subject, centres, radii, point) -> tuple[np.ndarray, np.ndarray] | None:
    """The fewest objects (a subset of ``centres`` (N, 3), ``radii`` (N,)) over which a fresh build answers
    ``point`` wrongly, or None when a fresh build over all of them answers it rightly (the updates before the
    query mattered). Greedy: halves, then single objects dropped, within :data:`_MAX_BUILDS` builds."""
    c, r, p = np.asarray(centres, float).reshape(-1, 3), np.asarray(radii, float), np.asarray(point, float)
    budget = [_MAX_BUILDS]

    def fails(keep: np.ndarray) -> bool:
        if budget[0] <= 0:
            return False
        budget[0] -= 1
        return _differs(subject, c[keep], r[keep], p)

    keep = np.arange(len(r))
    if not fails(keep):
        return None
    # an object that brute force and the index disagree on, alone, first
    for row in _suspects(c, r, p):
        if fails(np.array([row])):
            return c[[row]], r[[row]]
    chunk = len(keep) // 2
    while chunk >= 1 and budget[0] > 0:
        start, shrunk = 0, False
        while start < len(keep):
            trial = np.concatenate([keep[:start], keep[start + chunk:]])
            if trial.size and fails(trial):
                keep, shrunk = trial, True
            else:
                start += chunk
        if not shrunk:
            chunk //= 2
    return c[keep], r[keep]


def _suspects(c: np.ndarray, r: np.ndarray, p: np.ndarray, n: int = 8) -> np.ndarray:
    """The rows whose surface ``p`` is nearest (where an index's test most likely differs from the exact one)."""
    if not len(r):
        return np.zeros(0, dtype=np.int64)
    gap = np.abs(np.sqrt(((c - p) ** 2).sum(axis=1)) - r)
    return np.argsort(gap, kind="stable")[:n]


def _shrunk(subject: Subject, m: Mismatch) -> list[str]:
    found = shrink(subject, m.centres, m.radii, m.point)
    if found is None:
        return ["a fresh build over the same objects answers this point rightly: the updates before the query "
                "matter (replay the property to see them); where the objects it disagrees on should be:",
                *_indent(_whereabouts(m))]
    c, r = found
    from ..brute import brute_query

    return [f"smallest counter-example found: {len(r)} object(s), a fresh build, one query:",
            *_indent(snippet(subject, c, r, m.point, brute_query(c, r, m.point)))]


def _whereabouts(m: Mismatch, n: int = 4) -> str:
    """The ids the index missed or returned wrongly, each with the centre and radius it should have now."""
    rows = {int(i): k for k, i in enumerate(m.ids)}
    lines = []
    for what, ids in (("missed", np.setdiff1d(m.want, m.got)), ("returned, though outside", np.setdiff1d(m.got, m.want))):
        for i in ids[:n]:
            k = rows.get(int(i))
            held = "not held at all" if k is None else \
                f"centre {_floats(m.centres[k])}, radius {_float(float(m.radii[k]))}"
            lines.append(f"id {int(i)} ({what}): {held}")
    return "\n".join(lines)


def snippet(subject: Subject, centres: np.ndarray, radii: np.ndarray, point, want) -> str:
    """Python that builds ``subject`` over ``centres``/``radii`` and queries ``point`` (``want``: the right ids)."""
    return "\n".join([
        "import numpy as np",
        "from viewer.index.conformance import build",
        f"ix = build({subject.label!r}, np.array({_floats(centres)}), np.array({_floats(radii)}))",
        f"print(sorted(ix.query({_floats(np.asarray(point, float))})))  # the exact answer: "
        f"{sorted(int(i) for i in want)}",
    ])


def _floats(a) -> str:
    """``a`` as a Python literal that reads back to the same float64 values (repr round-trips)."""
    a = np.asarray(a, dtype=float)
    if a.ndim == 0:
        return _float(float(a))
    return "[" + ", ".join(_floats(x) for x in a) + "]" if a.ndim > 1 else \
        "[" + ", ".join(_float(float(x)) for x in a) + "]"


def _float(x: float) -> str:
    if math.isnan(x):
        return "float('nan')"
    if math.isinf(x):
        return "float('inf')" if x > 0 else "-float('inf')"
    return repr(x)


def names_matching(pattern: str | None) -> Iterator[str]:
    """Property names equal to ``pattern``, starting with ``pattern/``, or all (None)."""
    for key in _PROPERTIES:
        if pattern is None or key == pattern or key.startswith(pattern + "/"):
            yield key


__all__ = ["DEFAULT_SEED", "ConformanceFailure", "Outcome", "Property", "Subject", "build", "check", "evaluate", "prop",
           "registered", "replay", "shrink", "snippet", "subject_for", "warm"]
