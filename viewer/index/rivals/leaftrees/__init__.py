"""The leaf-bucket binary trees (``bvh``, ``kdtree``, ``bsp``, ``spheretree``): one storage of slots in leaf ranges
and its staged rebuild (:mod:`._leaftree`), the build loop's steps and one refit skeleton (:mod:`._leaftree_kernels`),
one set of update kernels (:mod:`._leaftree_ops`); each tree adds its split of a node, its bounds of a node, its
moves and its query in its ``_*_kernels.py``."""
