"""The ``viewer`` command: one sub-command per job.

Each sub-command lives in its own module in :mod:`viewer.commands`, which exposes
``add_parser(subparsers)``; the parser it adds sets ``func(args) -> int``. Modules are found there
by name, so adding a command is adding a module. They are imported without touching GL: GL and
window code is imported inside the commands that need it.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import signal
import sys
import threading

from . import __version__
from .errors import UserError
from .terminal.text import escape_text

# the order --help lists sub-commands in; any others follow alphabetically
ORDER: tuple[str, ...] = ("view", "record", "bench", "scene", "plot", "compare")


def command_modules() -> list[str]:
    from . import commands

    names = [m.name for m in pkgutil.iter_modules(commands.__path__) if not m.name.startswith("_")]
    names.sort(key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))
    return [f"viewer.commands.{n}" for n in names]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="viewer",
        description=(
            "A view-distance culling testbed: build spatial indexes over millions of objects, each "
            "with its own view distance, fly through them on the GPU, record and compare per-frame costs."
        ),
        epilog="Run 'viewer COMMAND --help' for the options of a command.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for path in command_modules():
        importlib.import_module(path).add_parser(sub)
    refuse_repeats(parser)
    return parser


class _Once:
    """Mixed into a single-valued option's action: a second occurrence is an error, not a silent overwrite
    (``--k 1 --k 8`` would otherwise measure 8 alone). The occurrences so far are kept in the namespace's
    ``_given`` (removed by :func:`main` after parsing)."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = namespace.__dict__.setdefault(_GIVEN, {})
        if self.dest in given:
            first = given[self.dest]
            same = "twice" if first == option_string else f"twice ({first} and {option_string})"
            parser.error(f"argument {'/'.join(self.option_strings)}: given {same}; give it once"
                         + (" (it takes several values: list them after one flag)" if self.nargs in ("+", "*") else ""))
        given[self.dest] = option_string
        super().__call__(parser, namespace, values, option_string)


_GIVEN = "_given"
_SINGLE = (argparse._StoreAction, argparse._StoreConstAction, argparse.BooleanOptionalAction)
_once_classes: dict[type, type] = {}


def refuse_repeats(parser: argparse.ArgumentParser) -> None:
    """Make every single-valued option of ``parser`` and of its sub-commands refuse a second occurrence
    (repeatable options, ``action="append"`` / ``"extend"``, are left as they are)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for p in {id(p): p for p in action.choices.values()}.values():
                refuse_repeats(p)
        elif action.option_strings and isinstance(action, _SINGLE) and not isinstance(action, _Once):
            cls = type(action)
            if cls not in _once_classes:
                _once_classes[cls] = type(f"Once{cls.__name__}", (_Once, cls), {})
            action.__class__ = _once_classes[cls]


class Terminated(SystemExit):
    """SIGTERM, raised in the main thread so a command unwinds (temporary files removed, recordings
    closed) instead of dying where it stands."""


def _on_sigterm(signum, frame) -> None:
    raise Terminated(128 + signum)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``viewer`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    vars(args).pop(_GIVEN, None)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    restore = None
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        restore = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        return int(args.func(args) or 0)
    except UserError as exc:
        # the message quotes file names and file contents: their control characters are shown escaped, so
        # a hostile name or row can neither drive the terminal nor split the one error line
        print(f"viewer {args.command}: error: {escape_text(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"viewer {args.command}: interrupted", file=sys.stderr)
        return 130
    except Terminated as exc:
        print(f"viewer {args.command}: terminated", file=sys.stderr)
        return int(exc.code)
    except BrokenPipeError:
        return 0
    finally:
        if restore is not None:
            signal.signal(signal.SIGTERM, restore)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
