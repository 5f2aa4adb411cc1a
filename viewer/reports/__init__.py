"""Reports of recordings: figures (:mod:`.plot`, matplotlib, imported lazily) and tables (:mod:`.compare`).

Both read runs through :mod:`viewer.recording` and take the stages and columns they show from
:data:`viewer.frame.STAGES`, so a new stage appears in them without a change here.
"""
