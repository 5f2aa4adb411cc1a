"""``viewer report``'s run: the inputs read, then one page written whole (or the headline table printed)."""

from __future__ import annotations

import sys
from typing import Sequence

from ..errors import UserError
from ..files.output import atomic_file, check_output_file, refuse_replacing
from .inputs import read_inputs
from .markdown import headline_markdown
from .report import build_report

__all__ = ["run_report"]


def run_report(paths: Sequence[str], out: str | None, *, markdown: bool = False, force: bool = False,
               title: str = "viewdist report") -> int:
    """Read ``paths`` (recordings, bench runs, sweeps) and write their page to ``out`` (checked, and refused when
    it exists unless ``force``, before anything is read); with ``markdown`` print one bench run's headline table
    on standard output instead. Raises :class:`UserError` for a wrong mix of flags or inputs. Returns 0."""
    if markdown:
        if out:
            raise UserError("--markdown prints the table on standard output: leave out -o/--out")
        inputs = read_inputs(paths)
        if len(inputs.benches) != 1 or inputs.recordings or inputs.sweeps:
            raise UserError(f"--markdown takes one bench run (its directory or bench.json), got {len(paths)} "
                            f"input(s) with {len(inputs.benches)} bench run(s)")
        sys.stdout.write(headline_markdown(inputs.benches[0]))
        return 0
    if not out:
        raise UserError("-o/--out REPORT.html: name the page to write (or pass --markdown)")
    page = check_output_file(out, "-o", (".html", ".htm"))
    refuse_replacing([page], f"-o {page}", "viewer report", force)
    print(f"reading {len(paths)} input(s)", file=sys.stderr)
    inputs = read_inputs(paths)
    print(f"drawing {len(inputs.recordings)} recording(s), {len(inputs.benches)} bench run(s), "
          f"{len(inputs.sweeps)} sweep(s)", file=sys.stderr)
    text = build_report(inputs, title)
    with atomic_file(page, text=True, encoding="utf-8") as fh:
        fh.write(text)
    print(f"wrote {page} ({len(text.encode()) / 1e6:.1f} MB, opens offline)", file=sys.stderr)
    return 0
