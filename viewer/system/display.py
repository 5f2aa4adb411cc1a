"""Whether the X display a window would open on answers, asked before the window toolkit tries.

pyglet reports an unreachable ``DISPLAY`` (a forwarded display whose ssh session is gone, a stale
``:99``) with a traceback, and on a remote host that does not answer it first waits for the TCP
timeout. :func:`display_problem` connects to the display's socket itself, with a short timeout, and
says in one line what is wrong. No GL, no toolkit imported here.
"""

from __future__ import annotations

import os
import re
import socket

__all__ = ["WindowUnavailable", "display_problem", "parse_display"]

#: seconds to wait for a display's socket to accept a connection
CONNECT_TIMEOUT = 3.0

_DISPLAY = re.compile(r"^(?:(?P<proto>[A-Za-z]+)/)?(?P<host>[^:]*):(?P<num>\d+)(?:\.(?P<screen>\d+))?$")


class WindowUnavailable(RuntimeError):
    """No window can be opened; the message says why (one line)."""


def parse_display(value: str) -> tuple[str, int] | None:
    """``"host:N.S"`` -> ``(host, N)`` (host '' for the local machine), or None when not a display name."""
    m = _DISPLAY.match(value.strip())
    if not m:
        return None
    host = m.group("host")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if host in ("unix",) or m.group("proto") == "unix":
        host = ""
    return host, int(m.group("num"))


def display_problem(exc: BaseException | None = None, *, display: str | None = None,
                    timeout: float = CONNECT_TIMEOUT) -> str | None:
    """Why no window can open on ``display`` (default ``$DISPLAY``), or None when its socket answers.

    exc : an exception the window toolkit raised while opening the window: the answer then says why when
    the exception is about the display (pyglet's ``NoSuchDisplayException``, "Cannot connect to ...").
    """
    value = os.environ.get("DISPLAY", "") if display is None else display
    if exc is not None:
        text = f"{type(exc).__name__}: {exc}"
        if "display" in text.lower() or "cannot connect" in text.lower():
            return f"the display DISPLAY={value!r} refused the window ({exc})"
        return None
    if not value:
        if os.environ.get("WAYLAND_DISPLAY"):
            return "only a Wayland display is set ($WAYLAND_DISPLAY); the window needs X (XWayland's $DISPLAY)"
        return "no display to open a window on ($DISPLAY is not set)"
    parsed = parse_display(value)
    if parsed is None:
        return f"DISPLAY={value!r} is not a display name (expected [host]:N[.screen], e.g. :0)"
    host, num = parsed
    if host == "":
        path = f"/tmp/.X11-unix/X{num}"
        for address in ("\0" + path, path):  # Linux's abstract socket first, as Xlib does
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                    s.settimeout(timeout)
                    s.connect(address)
                return None
            except OSError:
                continue
        return f"the display DISPLAY={value!r} does not answer (no X server listens at {path})"
    try:
        with socket.create_connection((host, 6000 + num), timeout=timeout):
            return None
    except OSError as exc:
        why = "no answer within {:g} s".format(timeout) if isinstance(exc, TimeoutError) else (exc.strerror or str(exc))
        return f"the display DISPLAY={value!r} does not answer (X server {host} port {6000 + num}: {why})"
