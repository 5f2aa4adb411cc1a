"""The tests mirror the code: every folder of tests/ is named after a package of ``viewer`` (or is one of the
folders that test across packages: the commands, the architecture, the shared helpers), and no test file, test
name or docstring is named after the review round, issue or persona that found what it checks."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent

#: the folders of tests/ that are no package of viewer: the commands' tests, the architecture's, the helpers
ACROSS = {"cli", "architecture", "support"}
#: what names a review round, an issue or a persona rather than a behaviour
HISTORY = re.compile(r"\b(issue|round) \d+|\bround (two|three|four|five|six|seven|eight)\b|\bnewcomer|"
                     r"\bfirst ten minutes\b|^\d\d\.\d+: ", re.IGNORECASE)
NAMED_FOR_HISTORY = re.compile(r"round\d|hostile_round|first_minutes|first_run|newcomer")


def _test_files() -> list[Path]:
    return sorted(TESTS.rglob("test_*.py"))


def test_every_test_folder_is_a_package_of_viewer_or_tests_across_them():
    packages = {p.name for p in (ROOT / "viewer").iterdir() if (p / "__init__.py").is_file()} | {"scenes"}
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders - packages - ACROSS == set()
    assert not [p.name for p in TESTS.glob("test_*.py")], "a test file belongs in the folder of what it tests"


def test_every_test_folder_is_a_package_of_tests():
    """tests.<folder>.test_x imports: xdist's workers and the shared helpers rely on it."""
    for d in (p for p in TESTS.iterdir() if p.is_dir() and p.name != "__pycache__"):
        assert (d / "__init__.py").is_file(), d


@pytest.mark.parametrize("path", _test_files(), ids=lambda p: str(p.relative_to(TESTS)))
def test_no_test_is_named_after_the_round_or_issue_that_found_it(path):
    assert not NAMED_FOR_HISTORY.search(path.stem), path
    tree = ast.parse(path.read_text())
    for node in [tree, *ast.walk(tree)]:
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)):
            if not isinstance(node, ast.Module):
                assert not NAMED_FOR_HISTORY.search(node.name), (path, node.name)
            doc = ast.get_docstring(node, clean=False) or ""
            assert not HISTORY.search(doc), (path, getattr(node, "name", "module"), HISTORY.search(doc).group(0))
