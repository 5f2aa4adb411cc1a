"""The project's version, in a module that imports nothing, so any layer may read it (``viewer.system.provenance``)."""

__version__ = "0.1.0"
