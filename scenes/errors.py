"""The one error a scene file or recipe can raise: :class:`SceneError`, naming the file and the field."""

from __future__ import annotations

from viewer.errors import UserError

__all__ = ["SceneError"]


class SceneError(UserError, ValueError):
    """A bad recipe, scene file or generator argument.

    The message reads ``FILE: field FIELD: PROBLEM`` (the file part is absent for a recipe given as a
    Python dict). ``source``, ``field`` and ``problem`` are kept as attributes for tests and tools.
    """

    def __init__(self, problem: str, field: str | None = None, source: str | None = None):
        self.problem = problem
        self.field = field
        self.source = source
        parts = []
        if source:
            parts.append(str(source))
        if field:
            parts.append(f"field '{field}'")
        parts.append(problem)
        super().__init__(": ".join(parts))

    def at(self, source) -> "SceneError":
        """The same error, attributed to the file ``source``."""
        return SceneError(self.problem, self.field, str(source))
