"""An example plugin for viewdist-testbed: a uniform grid (:class:`UniformGrid`), installed under the index name
``mygrid`` through the entry-point group ``viewdist_testbed.indexes``, and two subtly wrong variants of it
(:mod:`my_index.wrong`) that the conformance kit catches."""

from .grid import UniformGrid

__all__ = ["UniformGrid"]
