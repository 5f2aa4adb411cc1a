"""Errors a user can cause and fix: the CLI prints their message and exits with status 2, no traceback; and
:func:`once`, the refusal of a value a list flag repeats."""


class UserError(Exception):
    """A mistake in the user's input (a file, a flag, a value). The message says what and where."""


__all__ = ["UserError", "once"]


def once(items, flag: str, key=None, show=str) -> None:
    """A :class:`UserError` naming ``flag`` and each item of ``items`` that repeats an earlier one (the same
    ``key(item)``; the item itself by default), shown as ``show(item)`` (and as written again when that
    differs: ``a.toml twice (again as ./a.toml)``): a list flag runs each of its values once, and a value
    listed twice would run the same work again under the same label."""
    key = key or (lambda item: item)
    first: dict = {}
    twice: dict = {}
    for item in items:
        k, shown = key(item), show(item)
        if k in first and k not in twice:
            twice[k] = first[k] if shown == first[k] else f"{first[k]} (again as {shown})"
        first.setdefault(k, shown)
    if twice:
        raise UserError(f"{flag} lists {' and '.join(twice.values())} twice")
