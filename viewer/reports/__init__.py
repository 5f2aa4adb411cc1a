"""Reports of recordings: figures (:mod:`.plot`, matplotlib, imported lazily) and tables (:mod:`.compare`); and
of a world itself: the cost map (:mod:`.costmap`: exact visible counts and query times on planes of camera
positions, the view-distance scale for a budget, also the window's minimap; its figures in :mod:`.costmap_figure`,
its run in :mod:`.costmap_run`) and a scene's description (:mod:`.scene_info`, ``viewer scene info`` / ``list``).

Both read runs through :mod:`viewer.recording` and take the stages and columns they show from
:data:`viewer.frame.STAGES`, so a new stage appears in them without a change here.
"""
