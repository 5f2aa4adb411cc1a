"""The rivals: every culling structure the testbed measures against the paper's octree and the baseline scan,
under the same contract (:mod:`viewer.index._contract`) and registered by name in :data:`viewer.index.INDEXES`
(import them from there: ``from viewer.index import BVH``). By family:

- :mod:`.leaftrees`: the binary trees over leaf buckets of slots (``bvh``, ``kdtree``, ``bsp``, ``spheretree``),
  one storage, the build loop's steps and one refit skeleton;
- :mod:`.grids`: the hash grids (``hashgrid``, ``hgrid``) and the bucket tree on their cell table;
- here: the radius-banded ``quadtree`` and the ``looseoctree`` on its object lists, the ``coherent`` index (the
  visible set kept across queries), and the ``peers`` (``ckdtree``, ``rtree``: libraries wrapped under the
  contract, ``pip install '.[peers]'``).
"""
