"""Errors a user can cause and fix: the CLI prints their message and exits with status 2, no traceback."""


class UserError(Exception):
    """A mistake in the user's input (a file, a flag, a value). The message says what and where."""


__all__ = ["UserError"]
