"""Index classes a plugin author might write wrong, for the ``--index path/to/file.py:Class`` refusals of every
command's ``REFUSED`` table and of tests/index/test_specs.py (loaded by path, never imported by name)."""

from __future__ import annotations

from viewer.index import BruteForce, SphereIndex

#: this file, as a file spec's path
PATH = __file__


def spec(cls: str, options: str = "") -> str:
    """A file spec naming class ``cls`` of this file, with ``options`` (``key=value,...``)."""
    return f"{PATH}:{cls}" + (f":{options}" if options else "")


class Fine(BruteForce):
    """Brute force under another name, with typed options: what a correct plugin looks like here."""

    def __init__(self, centres, radii, leaf: int = 16, scale: float = 1.0, exact: bool = True, tag: str = ""):
        super().__init__(centres, radii)
        self.leaf, self.scale, self.exact, self.tag = leaf, scale, exact, tag


class NoMove(SphereIndex):
    """Implements every hook but ``_move``."""

    def __init__(self, centres, radii):
        super().__init__()

    def _query(self, px, py, pz, out):
        return 0

    def _insert(self, x, y, z, r):
        return 0

    def _remove(self, id):
        pass

    def _id_state(self):
        raise NotImplementedError

    def __len__(self):
        return 0


class NotAnIndex:
    """A class with an index's public verbs but not the protocol's base."""

    def __init__(self, centres, radii):
        pass

    def query(self, point):
        return []


class Raises(BruteForce):
    """A constructor that fails on any world."""

    def __init__(self, centres, radii):
        raise RuntimeError("the plugin's own failure")


not_a_class = 42
