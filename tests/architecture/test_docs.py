"""The READMEs: the top one stays short, and every relative link in them leads somewhere real.

The top README.md is the three-minute read; the deep material lives in README.md files next to the code
it describes, each reached by a link. A link to a file that moved, or to a heading that was renamed, fails
here.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOP = ROOT / "README.md"
MAX_TOP_LINES = 200

#: the README files the top one sends readers to (each must exist, and be linked from the top one)
MOVED = [
    "viewer/index/README.md",
    "viewer/bench/results/README.md",
    "viewer/sweep/README.md",
    "viewer/recording/README.md",
    "viewer/paths/README.md",
    "viewer/frame/README.md",
    "viewer/render/README.md",
    "viewer/reports/README.md",
    "scenes/README.md",
]

_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_FENCE = re.compile(r"^(```|~~~)")


def _prose(text: str) -> str:
    """The text outside fenced code blocks and inline code spans (where brackets are not links)."""
    out, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if not fenced:
            out.append(re.sub(r"`[^`]*`", "``", line))
    return "\n".join(out)


def _links(path: Path) -> list[str]:
    return _LINK.findall(_prose(path.read_text(encoding="utf-8")))


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces as hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    """Every heading's anchor in a Markdown file (a repeated heading gets -1, -2, ... as on GitHub)."""
    seen: dict[str, int] = {}
    out = set()
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if _FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        m = None if fenced else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            base = _slug(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return out


def _documents() -> list[Path]:
    return [TOP, *(ROOT / p for p in MOVED)]


def test_the_top_readme_is_a_three_minute_read():
    lines = TOP.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_TOP_LINES, f"README.md has {len(lines)} lines, at most {MAX_TOP_LINES}"


def test_every_moved_readme_exists_and_is_linked_from_the_top_one():
    linked = {(TOP.parent / unquote(link.split("#", 1)[0])).resolve() for link in _links(TOP)
              if not re.match(r"^[a-z][a-z0-9+.-]*:", link) and not link.startswith("#")}
    for rel in MOVED:
        path = ROOT / rel
        assert path.is_file(), f"{rel} is missing"
        assert path.resolve() in linked, f"README.md has no link to {rel}"


@pytest.mark.parametrize("doc", _documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_points_to_a_file_and_heading_that_exist(doc):
    bad = []
    for link in _links(doc):
        if re.match(r"^[a-z][a-z0-9+.-]*:", link):  # http:, https:, mailto: ...: not checked here
            continue
        target, _, anchor = link.partition("#")
        path = (doc.parent / unquote(target)).resolve() if target else doc
        if not path.exists():
            bad.append(f"{link}: no file {path}")
            continue
        if ROOT not in path.parents and path != ROOT:
            bad.append(f"{link}: outside the repository")
            continue
        if anchor:
            if path.suffix.lower() != ".md" or path.is_dir():
                bad.append(f"{link}: an anchor into a file that is not Markdown")
            elif unquote(anchor) not in _anchors(path):
                bad.append(f"{link}: no heading #{anchor} in {path.relative_to(ROOT)}")
    assert not bad, f"{doc.relative_to(ROOT)}:\n" + "\n".join(bad)


def test_the_slugs_are_githubs():
    assert _slug("The octree's targets, what was done, what was tried") == \
        "the-octrees-targets-what-was-done-what-was-tried"
    assert _slug("The CSV, the metadata and the guarantees") == "the-csv-the-metadata-and-the-guarantees"
    assert _slug("Measured: `viewer bench --n 1e6`") == "measured-viewer-bench---n-1e6"


def test_the_readmes_test_command_installs_every_system_package_ci_installs():
    """``.ci/run`` runs the README's test command from a clean clone: the README's command installs (at least)
    every system package ``.ci/run`` does, so whoever follows it runs the same tests, the browser's too."""
    ci = re.search(r"^for pkg in ([^;]+);", (ROOT / ".ci" / "run").read_text(), re.M)
    assert ci, ".ci/run's package loop not found"
    command = next(line for line in (ROOT / "README.md").read_text().splitlines()
                   if "apt-get install" in line and "pytest" in line)
    listed = re.search(r"apt-get install -y ([^&]+)&&", command)
    assert listed, command
    missing = set(ci.group(1).split()) - set(listed.group(1).split())
    assert not missing, f"the README's test command does not install {sorted(missing)}"
