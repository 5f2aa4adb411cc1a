"""The package's architecture, read from its import graph (grimp, through import-linter): every import goes
from a higher layer to a lower one (the layers in pyproject.toml's ``[tool.importlinter]``), and no module
imports itself back through any chain, function-level and annotation (``TYPE_CHECKING``) imports included."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("importlinter", reason="pip install '.[test]' (import-linter)")


def installed_tree(tmp_path: Path) -> Path:
    """The package as it installs (``scenes/`` and ``shaders/`` inside ``viewer/``), for grimp, which walks
    folders and cannot follow the editable install's mapping."""
    patterns = shutil.ignore_patterns("__pycache__", "*.npz", "*.png")

    def ignore(folder: str, names: list[str]) -> set[str]:
        # the bench's committed results are data, not code (viewer.results, the loader, is code)
        return patterns(folder, names) | ({"results"} if Path(folder).name == "bench" else set())

    shutil.copytree(ROOT / "viewer", tmp_path / "viewer", ignore=ignore)
    shutil.copytree(ROOT / "scenes", tmp_path / "viewer" / "scenes", ignore=ignore)
    shutil.copytree(ROOT / "shaders", tmp_path / "viewer" / "shaders", ignore=ignore)
    return tmp_path


def run_python(tree: Path, code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    # run from the copy: the working directory comes first on sys.path
    return subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True,
                          timeout=240)


def test_imports_only_go_down_the_layers(tmp_path):
    tree = installed_tree(tmp_path)
    r = run_python(tree, "import sys; from importlinter.cli import lint_imports; "
                         f"sys.exit(lint_imports(config_filename={str(ROOT / 'pyproject.toml')!r}, no_cache=True))")
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "0 broken" in r.stdout, r.stdout[-2000:]


CYCLES = """
import sys
import grimp

g = grimp.build_graph("viewer", cache_dir=None, exclude_type_checking_imports=False)
assert "viewer.scenes.build" in g.modules and "viewer.frame.pipeline" in g.modules, sorted(g.modules)[:20]
# Tarjan's strongly connected components over module -> imported module
index, low, stack, on, comps = {}, {}, [], set(), []
sys.setrecursionlimit(100000)
def visit(v):
    index[v] = low[v] = len(index); stack.append(v); on.add(v)
    for w in g.find_modules_directly_imported_by(v):
        if w not in index:
            visit(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop(); on.discard(w); comp.append(w)
            if w == v:
                break
        if len(comp) > 1:
            comps.append(sorted(comp))
for m in sorted(g.modules):
    if m not in index:
        visit(m)
print(len(g.modules), "modules;", sum(len(g.find_modules_directly_imported_by(m)) for m in g.modules), "imports")
for c in comps:
    print("cycle:", " <-> ".join(c))
sys.exit(1 if comps else 0)
"""


def test_no_module_imports_itself_back(tmp_path):
    r = run_python(installed_tree(tmp_path), CYCLES)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


def test_the_top_of_the_package_is_small():
    """The top of ``viewer/`` holds the command line and the few facts every layer shares; everything else
    lives in a sub-package named for its job."""
    top = sorted(p.name for p in (ROOT / "viewer").glob("*.py"))
    assert len(top) <= 10, top
    assert set(top) >= {"__init__.py", "cli.py", "errors.py", "domain.py", "camera.py"}, top


#: the parts of the package the commands layer may import: a command parses its arguments and calls a driver
#: (``drivers``, whose :mod:`viewer.drivers.options` also hands the parsers the values a run's options take), a
#: bench or a sweep run (``bench``, ``sweep``), a report or a page (``reports``, ``pages``, ``results``), and
#: refuses with a :class:`viewer.errors.UserError` (``errors``)
COMMAND_PARTS = {"bench", "drivers", "errors", "pages", "reports", "results", "sweep"}


def _parts_imported(path: Path) -> set[str]:
    """The parts of ``viewer`` (the first name under it) that the module at ``path`` (in viewer/commands/)
    imports, at any level of the module, ``TYPE_CHECKING`` imports included."""
    import ast

    parts = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            parts |= {a.name.split(".")[1] for a in node.names if a.name.startswith("viewer.")}
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level == 2 or (node.level == 0 and module.split(".")[0] == "viewer"):
                below = module.split(".")[1:] if node.level == 0 else module.split(".")
                parts |= {below[0]} if below and below[0] else {a.name for a in node.names}
    return parts


def test_the_commands_import_few_parts():
    """Commands parse arguments and call a driver or a report: the setup they would do themselves (loading a
    scene, building a camera path, opening writers, reading machine facts, writing files) lives below them."""
    found = {f.name: _parts_imported(f) for f in sorted((ROOT / "viewer" / "commands").glob("*.py"))}
    extra = {name: sorted(parts - COMMAND_PARTS) for name, parts in found.items() if parts - COMMAND_PARTS}
    assert not extra, f"viewer/commands imports parts beyond {sorted(COMMAND_PARTS)}: {extra}"
