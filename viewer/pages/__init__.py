"""Pages that gather results: ``viewer report``'s one self-contained HTML page from recordings, bench runs and
sweeps, and the README's headline table as markdown from a bench run. Above the sweep layer: it reads all three.

- :mod:`.inputs`: each path sorted into a recording, a bench run or a sweep and read back (:func:`read_inputs`);
- :mod:`.report`: the page (:func:`build_report`); :mod:`.figures` its plotly figures, :mod:`.pareto` the front
  of a trade-off, :mod:`.html` the page's frame, sortable tables and the sorting script;
- :mod:`.markdown`: the headline table (:func:`headline_markdown`);
- :mod:`.run`: ``viewer report``'s run, the page written or the table printed (:func:`run_report`).
"""

from .inputs import Inputs, Sweep, read_inputs
from .markdown import headline_markdown
from .pareto import pareto_front
from .report import build_report

__all__ = ["Inputs", "Sweep", "build_report", "headline_markdown", "pareto_front", "read_inputs"]
