"""Files in and out, said the same way by every command: output files checked before the work that fills
them and written whole or not at all (:mod:`.output`), and why an input file cannot be opened (:mod:`.inputs`).

Modules are imported by name (``from viewer.files.output import replace_atomically``): each is small and loads
only the standard library (and :mod:`viewer.errors`).
"""
