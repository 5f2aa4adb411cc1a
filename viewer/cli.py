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
from .host.text import escape_text

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
    return parser


class Terminated(SystemExit):
    """SIGTERM, raised in the main thread so a command unwinds (temporary files removed, recordings
    closed) instead of dying where it stands."""


def _on_sigterm(signum, frame) -> None:
    raise Terminated(128 + signum)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``viewer`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
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
