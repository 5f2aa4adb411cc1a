"""The hash grids: the spatial hash grid (``hashgrid``, its cell table shared here), the hierarchical grids one
per radius band (``hgrid``) and the bucket tree, a hash of cells each an octree of leaves (``buckettree``)."""
