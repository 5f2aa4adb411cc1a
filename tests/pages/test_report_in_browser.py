"""``viewer report``'s page in a real browser (headless Chromium, every host name unresolvable): it loads from a
file:// URL with every script inside it, logs nothing to the console and raises no script error, its plots are
drawn (plotly's SVG in the DOM, a screenshot of many colours), and its tables sort (the page's own script, run on
load by ``?sort=KEY``)."""

from __future__ import annotations

import re

import pytest
from PIL import Image

from tests.support.browser import dump_dom, screenshot
from tests.support.cli import run_cli


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """A report of a small bench run (raw samples, moving frames) and two recordings (a still world's flight)."""
    d = tmp_path_factory.mktemp("report")
    done = run_cli("bench", "--n", "2e3", "--scene", "uniform,clustered", "--index", "scan;octree;hashgrid;brute",
                   "--queries", "20", "--rounds", "2", "--updates", "0", "--frames", "3", "--dynamic", "0.1",
                   "--no-plots", "--no-first-build", "--out", d / "bench")
    assert done.returncode == 0, done.stderr
    from tests.cli.conftest import tiny_recipe

    scene = tiny_recipe(d, "clustered-100k", "tiny-clustered")
    done = run_cli("record", scene, "--index", "scan", "octree", "--frames", "30", "--size", "64x48", "-q",
                   "-o", d / "runs")
    assert done.returncode == 0, done.stderr
    done = run_cli("report", d / "bench", d / "runs" / "scan.csv", d / "runs" / "octree.csv", "-o", d / "report.html")
    assert done.returncode == 0, done.stderr
    return d / "report.html"


def test_the_page_holds_every_script_it_runs(page):
    text = page.read_text()
    assert not re.search(r"<script[^>]*\bsrc=", text)
    assert not re.search(r"<link[^>]*\bhref=\"?https?:", text)
    assert "plotly.js v" in text or "Plotly" in text  # plotly's JavaScript is inside the file


def test_the_page_draws_its_plots_offline_without_a_console_message(page):
    dom, console = dump_dom(page.as_uri())
    assert console == []
    assert re.search(r'<pre id="page-errors">\s*</pre>', dom), dom[:2000]
    # every figure drawn: two recordings' timelines, one distribution, two trade-offs
    assert dom.count('class="main-svg"') >= 2 * 5
    for words in ("Stage times per frame", "query times per index", "memory against query time",
                  "update cost against query time", "Machine and provenance", "answers queries"):
        assert words in dom


def test_a_table_sorts_by_the_column_the_address_names(page):
    for desc in (False, True):
        dom, console = dump_dom(page.as_uri() + "?sort=query_median_us" + ("&desc" if desc else ""))
        assert console == []
        table = dom[dom.index('id="bench-table-0"'):]
        table = table[: table.index("</table>")]
        assert 'data-key="query_median_us" class="' + ("desc" if desc else "asc") + '"' in table
        col = re.findall(r"<th data-key=\"([^\"]+)\"", table).index("query_median_us")
        rows = re.findall(r"<tr>(.*?)</tr>", table[table.index("<tbody>"):])
        cells = [re.findall(r"<td([^>]*)>", r)[col] for r in rows]
        values = [float(re.search(r'data-value="([^"]+)"', c).group(1)) for c in cells]
        assert len(values) == 8
        assert values == sorted(values, reverse=desc)


def test_the_screenshot_is_not_blank(page, tmp_path):
    png = tmp_path / "shot.png"
    assert screenshot(page.as_uri(), png) == []
    img = Image.open(png).convert("RGB")
    colours = img.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 200
    assert max(c for c, _ in colours) < 0.97 * img.width * img.height  # not one colour with specks
