"""The leaf-bucket binary trees (``bvh``, ``kdtree``, ``bsp``, ``spheretree``): one storage of slots in leaf ranges
and its staged rebuild (:mod:`._leaftree`), shared kernels (:mod:`._leaftree_kernels`) and update kernels
(:mod:`._leaftree_ops`); each tree adds its own in its ``_*_kernels.py``."""
