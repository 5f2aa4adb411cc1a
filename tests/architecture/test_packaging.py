"""What pyproject.toml installs: every package of the repository, under the ``viewer`` namespace only."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_every_package_is_installed():
    cfg = _config()
    dirs = {"viewer." + ".".join(p.relative_to(ROOT / "viewer").parts) if p != ROOT / "viewer" else "viewer"
            for p in (f.parent for f in (ROOT / "viewer").rglob("__init__.py"))}
    for pkg, folder in cfg["package-dir"].items():  # mapped packages and their sub-packages
        base = ROOT / folder
        dirs |= {".".join([pkg, *f.parent.relative_to(base).parts]) for f in base.rglob("__init__.py")}
    assert set(cfg["packages"]) == dirs


def test_no_generic_top_level_names():
    assert all(p == "viewer" or p.startswith("viewer.") for p in _config()["packages"])


def test_mapped_packages_import_under_viewer():
    import viewer.scenes
    import viewer.shaders

    assert Path(viewer.scenes.__file__).parent == ROOT / "scenes"
    assert Path(viewer.shaders.__file__).parent == ROOT / "shaders"
    assert viewer.scenes.bundled_recipes() and viewer.shaders.shader_names()


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_the_package_is_marked_typed_for_a_type_checker():
    """PEP 561: a plugin author's type checker reads viewer's annotations only when py.typed is installed."""
    assert (ROOT / "viewer" / "py.typed").is_file()
    assert "py.typed" in _config()["package-data"]["viewer"]


def test_the_license_file_is_the_license_pyproject_names():
    assert (ROOT / "LICENSE").read_text().splitlines()[0] == f"{_project()['license']['text']} License"


def test_no_dependency_is_pinned_to_one_version():
    """An exact pin in a library's requirements blocks every environment that needs another version."""
    assert not [d for d in _project()["dependencies"] if "==" in d]
