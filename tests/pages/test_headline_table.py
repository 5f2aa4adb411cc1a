"""The README's headline table is generated, not typed: it equals what ``viewer report --markdown`` prints from the
committed bench run it quotes."""

from __future__ import annotations

import re

from tests.support.cli import ROOT, run_cli

#: the comment ending the line above the table in the README, naming the command that writes it
MARK = re.compile(r"<!-- generated: (viewer report --markdown (\S+)) -->\n\n")


def test_the_readmes_headline_table_is_what_report_markdown_prints():
    text = (ROOT / "README.md").read_text()
    m = MARK.search(text)
    assert m, "the README's headline table has no '<!-- generated: viewer report --markdown BENCH -->' line"
    table = text[m.end():].split("\n\n", 1)[0] + "\n"
    status, out, err = run_cli("report", "--markdown", ROOT / m.group(2))
    assert status == 0, err
    assert table == out


def test_the_headline_table_puts_the_scan_first_and_marks_each_worlds_fastest():
    status, out, err = run_cli("report", "--markdown", ROOT / "viewer/bench/results/baseline-1e5-1e6.json")
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0] == "| index | uniform | clustered | diagonal | octaves | starfield |"
    assert lines[2].startswith("| **scan** | **173 (1.84x read)**")
    octree, hashgrid = lines[-2], lines[-1]
    assert "**126 (3.6x)**" in octree and "| 3.74 (46x) |" in octree  # fastest on octaves, not on uniform
    assert "**2.66 (65x)**" in hashgrid
