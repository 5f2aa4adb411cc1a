"""One checked scene constructor: the generators, the ``.npz`` reader and every importer build their scenes
with :func:`viewer.scenes.construct.scene_from_arrays`, so one set of rules (one ``MAX_N``, one box fitter,
one domain check) refuses the same bad array the same way whichever path it came by; and the scenes
package has no import cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import viewer.scenes.build
import viewer.scenes.construct
from viewer.scenes import SceneError, generate_scene, import_scene, load_scene

SCENES = Path(viewer.scenes.__file__).resolve().parent
CENTRES = np.array([[0.0, 0.0, 0.0], [10.0, 2.0, 3.0], [4.0, 9.5, -1.0], [7.0, 1.0, 8.25]])
RADII = np.array([5.0, -1.0, 2.0, 3.0])  # the second one is bad


def _npz(path: Path, centres=CENTRES, radii=RADII) -> Path:
    np.savez(path, format_version=np.array(2), centres=centres, radii=radii)
    return path


def _csv(path: Path, centres=CENTRES, radii=RADII) -> Path:
    rows = "".join(f"{x!r},{y!r},{z!r},{r!r}\n" for (x, y, z), r in zip(centres.tolist(), radii.tolist()))
    path.write_text("x,y,z,r\n" + rows)
    return path


def _refusals(tmp_path, monkeypatch) -> dict[str, SceneError]:
    """The error each path raises for the radii above: a recipe whose radius model drew them, a data
    file and a CSV table that hold them."""
    out = {}
    with monkeypatch.context() as m:
        m.setattr(viewer.scenes.build, "sample_radii", lambda rng, k, spec: RADII[:k].copy())
        with pytest.raises(SceneError) as err:
            generate_scene("uniform", 4, seed=1, world=100.0)
        out["recipe"] = err.value
    for path, name in ((_npz(tmp_path / "s.npz"), "npz"), (_csv(tmp_path / "s.csv"), "csv")):
        with pytest.raises(SceneError) as err:
            load_scene(path)
        out[name] = err.value
    return out


def test_the_same_bad_array_is_refused_by_the_same_rule_on_every_path(tmp_path, monkeypatch):
    errors = _refusals(tmp_path, monkeypatch)
    rule = "-1.0 is negative (must be >= 0)"
    assert all(e.problem.endswith(rule) for e in errors.values()), {k: str(e) for k, e in errors.items()}
    # each names the field as its source calls it: the recipe's table, the file's entry, the table's column
    assert (errors["recipe"].field, errors["npz"].field, errors["csv"].field) == ("radius", "radii", "r")
    assert "radii[1]" in errors["recipe"].problem and "radii[1]" in errors["npz"].problem
    assert "row 2" in errors["csv"].problem  # the table's second data row
    assert errors["npz"].source and errors["csv"].source  # a file's error names the file


def test_one_max_n_for_generators_data_files_and_imports(tmp_path, monkeypatch):
    """The object limit is the constructor's: lowered there, all three paths refuse 4 objects alike."""
    monkeypatch.setattr(viewer.scenes.construct, "MAX_N", 3)
    good = np.array([1.0, 2.0, 3.0, 4.0])
    problems = []
    with pytest.raises(SceneError) as err:
        generate_scene("uniform", 4, seed=1, world=100.0)
    problems.append(err.value.problem)
    for path in (_npz(tmp_path / "n.npz", radii=good), _csv(tmp_path / "n.csv", radii=good)):
        with pytest.raises(SceneError) as err:
            load_scene(path)
        problems.append(err.value.problem)
    assert all(p.endswith("holds 4 objects, more than the limit 3") for p in problems), problems


def test_one_box_fitter_for_data_files_and_imports(tmp_path):
    rng = np.random.default_rng(5)
    for k in range(20):
        c = rng.uniform(-1, 1, (int(rng.integers(1, 30)), 3)) * 10.0 ** rng.uniform(-3, 12)
        r = rng.uniform(0, 5, c.shape[0])
        a = load_scene(_npz(tmp_path / f"b{k}.npz", c, r))
        b = import_scene(_csv(tmp_path / f"b{k}.csv", c, r))
        assert np.array_equal(a.origin, b.origin) and a.world == b.world, k


def _assignments(name: str) -> list[str]:
    """The modules of the scenes package that assign ``name`` at their top level."""
    found = []
    for path in sorted(SCENES.rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
                if isinstance(node, ast.AnnAssign) else []
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                found.append(path.relative_to(SCENES).as_posix())
    return found


def _calls(name: str) -> list[str]:
    """The modules of the scenes package that call ``name(...)``."""
    return sorted({path.relative_to(SCENES).as_posix() for path in SCENES.rglob("*.py")
                   for node in ast.walk(ast.parse(path.read_text()))
                   if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name})


def test_one_definition_of_each_rule():
    assert _assignments("MAX_N") == ["limits.py"]
    assert _calls("Scene") == ["construct.py"]  # every Scene is built by the one constructor
    assert _calls("fit_box") == ["construct.py", "importers/_build.py"]  # one box fitter, defined in limits.py


def _module(path: Path) -> str:
    parts = ["viewer", "scenes", *path.relative_to(SCENES).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The scenes modules ``path`` imports, at any depth of its code (function-level imports too)."""
    me = _module(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            # ``from . import look`` imports the submodule; ``from . import Scene`` the package's name
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        out |= {n for n in names if n in modules and n != me}
    return out


def test_the_scenes_package_has_no_import_cycle():
    paths = {_module(p): p for p in SCENES.rglob("*.py")}
    graph = {m: _imports(p, set(paths)) for m, p in paths.items()}
    done: set[str] = set()

    def visit(m: str, stack: list[str]) -> None:
        if m in stack:
            pytest.fail("import cycle: " + " -> ".join(stack[stack.index(m):] + [m]))
        if m in done:
            return
        for n in sorted(graph[m]):
            visit(n, stack + [m])
        done.add(m)

    for m in sorted(graph):
        visit(m, [])
    assert graph["viewer.scenes.build"] >= {"viewer.scenes.construct"}  # the walk sees relative imports
