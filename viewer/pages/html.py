"""The page's HTML: its frame (style, the table-sorting script, a box listing script errors), sortable tables and
plotly figures, every byte inside the one file (it opens offline: plotly's JavaScript is embedded once).

Sorting: a click on a column's header sorts its table by that column (numbers as numbers), a second click
reverses it. On load, ``?sort=KEY`` (``&desc`` reversed) sorts each table with a column of that key: a page can
be opened sorted, and a test can tell the script ran.
"""

from __future__ import annotations

import html
import math
from typing import Sequence

__all__ = ["figure_html", "page", "table_html"]

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1200px; color: #222; }
h1 { font-size: 1.5em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 2em; }
table.sortable { border-collapse: collapse; font-size: .85em; margin: .5em 0 1.5em; }
table.sortable th, table.sortable td { border: 1px solid #ddd; padding: .25em .5em; text-align: right; }
table.sortable th { background: #f3f3f3; cursor: pointer; user-select: none; position: sticky; top: 0; }
table.sortable th.asc::after { content: " \\25B2"; } table.sortable th.desc::after { content: " \\25BC"; }
table.sortable td.text, table.sortable th.text { text-align: left; }
pre { background: #f7f7f7; padding: .6em; overflow-x: auto; font-size: .8em; }
#page-errors { color: #a00; } #page-errors:empty { display: none; }
.verdicts li { margin: .3em 0; }
"""

#: listed before any other script: an error of any later one is written into the page (and read by a test)
ERRORS_SCRIPT = """
window.addEventListener('error', function (e) {
  var box = document.getElementById('page-errors');
  if (box) { box.textContent += 'script error: ' + e.message + '\\n'; }
});
"""

SORT_SCRIPT = """
(function () {
  function cell(row, i) {
    var td = row.cells[i]; var v = td.getAttribute('data-value');
    if (v === null) { v = td.textContent; }
    var n = parseFloat(v);
    return isNaN(n) || !/^\\s*[-+]?[0-9.]/.test(v) ? v.toLowerCase() : n;
  }
  function sortBy(table, i, desc) {
    var body = table.tBodies[0]; var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cell(a, i), y = cell(b, i);
      var c = (typeof x === typeof y) ? (x < y ? -1 : x > y ? 1 : 0) : (typeof x === 'number' ? -1 : 1);
      return desc ? -c : c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, k) {
      th.classList.remove('asc', 'desc'); if (k === i) { th.classList.add(desc ? 'desc' : 'asc'); }
    });
  }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      th.addEventListener('click', function () { sortBy(table, i, th.classList.contains('asc')); });
    });
  });
  var q = new URLSearchParams(window.location.search); var key = q.get('sort');
  if (key) {
    document.querySelectorAll('table.sortable').forEach(function (table) {
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
        if (th.getAttribute('data-key') === key) { sortBy(table, i, q.has('desc')); }
      });
    });
  }
})();
"""


def _shown(v) -> tuple[str, str | None]:
    """A cell's text and its sort value (None: sort by the text)."""
    if isinstance(v, bool) or v is None:
        return ("" if v is None else str(v)), None
    if isinstance(v, (int, float)):
        if not math.isfinite(v):
            return "-", None
        text = f"{v:,}" if isinstance(v, int) else (f"{v:.4g}" if abs(v) < 1e6 else f"{v:,.0f}")
        return text, repr(v)
    return str(v), None


def table_html(columns: Sequence[tuple[str, str]], rows: Sequence[dict], table_id: str) -> str:
    """A sortable table: ``columns`` (key, header) in order, a row per dict of ``rows`` (a missing key: empty);
    numbers printed to four significant digits, sorted by their exact value."""
    head = "".join(f'<th data-key="{html.escape(k)}" class="{"text" if i < 2 else ""}">{html.escape(h)}</th>'
                   for i, (k, h) in enumerate(columns))
    body = []
    for r in rows:
        cells = []
        for i, (k, _) in enumerate(columns):
            text, value = _shown(r.get(k))
            attr = f' data-value="{html.escape(value)}"' if value is not None else ""
            cls = ' class="text"' if value is None else ""
            cells.append(f"<td{attr}{cls}>{html.escape(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (f'<table class="sortable" id="{html.escape(table_id)}"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table>')


def figure_html(fig, first: bool) -> str:
    """A plotly figure as a ``<div>`` and its script; ``first``: plotly's JavaScript embedded before it (once a
    page), so the page needs no network."""
    return fig.to_html(full_html=False, include_plotlyjs=True if first else False,
                       config={"displaylogo": False, "responsive": True})


def page(title: str, body: str) -> str:
    """The whole page: ``body`` (HTML) in the frame, the error box first, the sorting script last."""
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style><script>{ERRORS_SCRIPT}</script></head><body>"
            f"<pre id=\"page-errors\"></pre><h1>{html.escape(title)}</h1>{body}"
            f"<script>{SORT_SCRIPT}</script></body></html>\n")
