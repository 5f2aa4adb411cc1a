"""The conformance kit: whether an index answers exactly as the contract says, as named properties an index
author runs from the command line or from their own pytest suite (the project's own index tests run through
it too: one source of truth for what "exact" means).

What it checks (``properties()`` lists the names, ``describe(name)`` says what each holds):

- the contract's cases: answers equal brute force's on seeded worlds; points exactly on sphere surfaces and one
  ulp either side; empty worlds, coincident objects, radii 0, far points and large coordinates;
  ``query_into`` and ``query_many_into`` overflow; ``query_many`` against single queries; inserts, removes and
  moves by id; bad input refused with the right error type (``ValueError``, ``KeyError``, ``TypeError``),
  changing nothing;
- ``move_many``: a batch equals the same moves one by one, a bad batch is refused whole, a repeated batch is
  checked again after an insert or remove, ``last_move_repeated``;
- a hypothesis state machine of inserts, removes, moves and batch moves (good and bad) and queries against a
  model and brute force;
- the numeric domain (:mod:`viewer.domain`): exact at every magnitude from 1e-300 to 2**100 and over input
  dtypes, values outside it refused at every entry point (each such case in a forked child under a time guard).

From the command line (exit 0 when every property holds, 1 when any fails, 2 when the spec does not load)::

    viewer check-index octree
    viewer check-index ./my_index.py:MyIndex:leaf=16 --examples 400 --seed 7

From pytest, one test per property::

    import pytest
    from viewer.index.conformance import check, properties

    from mypackage import MyIndex

    @pytest.mark.parametrize("prop", properties())
    def test_conforms(prop):
        check(MyIndex, prop)                    # or check("mypackage.module:MyIndex:leaf=16", prop)

``check`` raises :class:`ConformanceFailure` (an ``AssertionError``) whose message is the report: what went
wrong, the smallest counter-example found (for a wrong answer, the fewest objects over which a fresh build
still answers wrongly, as a Python snippet; for the state machine, hypothesis's shrunk steps) and the command
that replays it. Every random draw comes from ``seed`` (default :data:`DEFAULT_SEED`), so a run repeats;
``examples`` sets the hypothesis examples of the randomised properties (the state machine, the fuzz).
"""

from __future__ import annotations

from collections.abc import Iterator

# importing them registers their properties, in this order: the contract's cases, the batches', the state
# machine, the domain's
from . import _contract_cases  # noqa: F401  isort: skip
from . import _batch_cases  # noqa: F401  isort: skip
from . import _machine  # noqa: F401  isort: skip
from . import _domain_cases  # noqa: F401  isort: skip
from ._kit import (DEFAULT_SEED, ConformanceFailure, Outcome, Subject, build, check, evaluate, registered, replay,
                   subject_for, warm)
from ._kit import names_matching as _names_matching


def properties(pattern: str | None = None) -> list[str]:
    """The names of the kit's properties, in order (``pattern``: only that name, or the cases of a family,
    ``bad_batch_changes_nothing`` for every ``bad_batch_changes_nothing/...``)."""
    return list(_names_matching(pattern))


def describe(name: str) -> str:
    """What property ``name`` holds, in a sentence or two."""
    return registered()[name].doc


def run(index, names: list[str] | None = None, *, seed: int = DEFAULT_SEED,
        examples: int | None = None) -> Iterator[Outcome]:
    """Run ``names`` (default: every property) on ``index`` (a class, a spec text or an ``IndexSpec``), yielding
    each :class:`Outcome` as it completes (the class warmed up first)."""
    subject = subject_for(index, seed=seed, examples=examples)
    warm(subject)
    for name in properties() if names is None else names:
        yield evaluate(subject, name)


def check_together(indexes, prop: str = "state_machine", *, seed: int = DEFAULT_SEED,
                   examples: int | None = None) -> None:
    """Property ``prop`` (one of :func:`together_properties`: the state machine, the fuzz) over every index of
    ``indexes`` (classes, spec texts or ``IndexSpec`` objects) at once: each example is drawn once and done to
    each index, so each meets the examples :func:`check` would give it alone, for the cost of drawing them once
    (drawing is most of an example's cost). Returns if every index holds it, else raises
    :class:`ConformanceFailure` with the report of the index that failed, whose replay runs that index alone."""
    from hypothesis.reporting import with_reporter

    from ._kit import TOGETHER, _report

    if prop not in TOGETHER:
        raise KeyError(f"{prop!r} does not run over many indexes at once; together_properties() lists those that do")
    subjects = [subject_for(index, seed=seed, examples=examples) for index in indexes]
    for subject in subjects:
        warm(subject)
    said: list[str] = []
    try:
        with with_reporter(lambda text: said.append(str(text))):
            TOGETHER[prop](subjects)
    except Exception as exc:  # an index's fault: reported as that index's
        labels = [getattr(e, "index_label", None) for e in [exc, *getattr(exc, "exceptions", ())]]
        subject = next((s for s in subjects if s.label in labels), subjects[0])
        raise ConformanceFailure(f"{subject.label}: {_report(subject, prop, exc, said)}") from None


def together_properties() -> list[str]:
    """The properties :func:`check_together` runs over many indexes at once."""
    from ._kit import TOGETHER

    return list(TOGETHER)


__all__ = ["DEFAULT_SEED", "ConformanceFailure", "Outcome", "Subject", "build", "check", "check_together", "describe",
           "evaluate", "properties", "replay", "run", "subject_for", "together_properties", "warm"]
