"""What reaches the terminal: progress bars with an ETA (:mod:`.progress`, drawn by rich, imported on the first
bar) and text from files shown as visible characters, clipped to a length (:mod:`.text`).

Modules are imported by name (``from viewer.terminal.text import clip``): the scenes and the recording layer use
``text`` and need not load ``progress``.
"""
