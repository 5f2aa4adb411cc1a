"""``viewer check-index``'s run: the conformance kit (:mod:`viewer.index.conformance`) on one index spec, one line
per property, pass or FAIL with its time; under a failure, the smallest counter-example found and how to replay
it."""

from __future__ import annotations

import time

from ..errors import UserError
from ..index.conformance import DEFAULT_SEED, evaluate, properties, subject_for, warm
from ..index.specs import check_index_spec, parse_index_spec
from ..system.machine import machine, machine_line

__all__ = ["run_conformance"]


def run_conformance(spec_text: str, *, seed: int | None = None, examples: int | None = None,
                    only: str | None = None) -> int:
    """Check the index ``spec_text`` names (a spec as ``--index`` takes it, refused as ``SPEC`` when it does not
    load or build) against the kit's properties (``only``: one, or a family's cases), every draw from ``seed``
    (None: :data:`viewer.index.conformance.DEFAULT_SEED`), ``examples`` hypothesis examples each (None: the
    kit's). Prints a line per property; returns 0 when every one holds, 1 when any fails."""
    if seed is None:
        seed = DEFAULT_SEED
    names = properties(only)
    if not names:
        families = sorted({n.split("/")[0] for n in properties()})
        raise UserError(f"--only {only!r}: no such property; choose from {', '.join(families)} "
                        f"(or one case, e.g. {properties()[0]!r})")
    spec = parse_index_spec(spec_text, flag="SPEC")  # UserError when it does not load
    why = spec.cls.unavailable()
    if why:
        raise UserError(f"SPEC {spec.label!r}: cannot be built here: {why}")
    check_index_spec(spec, flag="SPEC")  # a constructor that raises on a handful of objects: refused here
    subject = subject_for(spec, seed=seed, examples=examples)
    warming = "warm-up (compiling kernels)"
    width = max(len(n) for n in [*names, warming])
    print(f"check-index {subject.label}: {_count(len(names))}, seed {seed}"
          + (f", {examples} examples" if examples else ""), flush=True)
    print(machine_line(machine()), flush=True)
    t0 = time.perf_counter()
    try:
        warm(subject)
    except Exception as exc:
        raise UserError(f"SPEC {spec.label!r}: its warm_up raised {type(exc).__name__}: {exc}") from None
    print(f"  {'':4}  {warming:{width}}  {time.perf_counter() - t0:7.2f} s", flush=True)
    failed = []
    for name in names:
        out = evaluate(subject, name)
        print(f"  {'pass' if out.ok else 'FAIL':4}  {name:{width}}  {out.seconds:7.2f} s", flush=True)
        if not out.ok:
            failed.append(name)
            print("\n".join("        " + line for line in out.report.splitlines()), flush=True)
    total = time.perf_counter() - t0
    if failed:
        print(f"{subject.label}: {len(failed)} of {_count(len(names))} FAIL ({', '.join(failed)}); {total:.1f} s")
        return 1
    held = f"the property {names[0]} holds" if len(names) == 1 else f"all {_count(len(names))} hold"
    print(f"{subject.label}: {held}; {total:.1f} s")
    return 0


def _count(n: int) -> str:
    return f"{n} {'property' if n == 1 else 'properties'}"
