"""The ``viewer`` sub-commands, one module each (``add_parser(subparsers)``); see :mod:`viewer.cli`."""
