"""Text from files shown safely: a label, a scene name or a path read from a recording is printed as
visible characters, never as terminal control sequences, line breaks or NUL bytes.

Pure: standard library only.
"""

from __future__ import annotations

import unicodedata

__all__ = ["DIGITS_LIMIT", "clip", "count_text", "escape_text", "figure", "shorten"]

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escape_text(text: object) -> str:
    """``str(text)`` with every control character (C0 and C1 controls, ESC, NUL, DEL), format character
    (bidirectional overrides, zero-width marks) and line or paragraph separator written as an escape:
    ``\\n``, ``\\t``, ``\\x1b``, ``\\x00``, ``\\u202e``. Other characters, backslashes included, are kept."""
    s = str(text)
    if s.isprintable():
        return s
    out = []
    for ch in s:
        if ch in _NAMED:
            out.append(_NAMED[ch])
        elif ch.isprintable() or ch == " " or unicodedata.category(ch) not in ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"):
            out.append(ch)
        else:
            o = ord(ch)
            out.append(f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}")
    return "".join(out)


def shorten(text: str, most: int) -> str:
    """``text`` when it has at most ``most`` characters, else its start (:func:`clip`) and its length."""
    if len(text) <= most:
        return text
    tail = f" ({len(text)} characters)"
    return clip(text, max(most - len(tail), 4)) + tail


def clip(text: str, most: int) -> str:
    """``text`` for a message, at most ``most`` characters: whole when it fits, else cut after its last whole
    word that leaves room for ``...`` and ended so (a word is cut only when one alone fills more than half
    of ``most``: a long name or number)."""
    if len(text) <= most:
        return text
    head = text[: max(most - 3, 1)]
    if not text[len(head)].isspace():
        space = head.rfind(" ")
        if space >= most // 2:
            head = head[:space]
    return head.rstrip(" ,;:") + "..."


#: the largest magnitude a number is written out digit by digit; past it, as ``1.23e+20`` (a figure of 1e308 read
#: from a hand-edited file, or a count typed as 1e300, would otherwise be printed as 309 digits)
DIGITS_LIMIT = 1e15


def figure(v: float, spec: str) -> str:
    """``v`` formatted by ``spec`` (``.3f``, ``,.0f``, ...) when its magnitude is below :data:`DIGITS_LIMIT`,
    else to three significant digits (``1e+308``)."""
    return format(v, spec) if abs(v) < DIGITS_LIMIT else f"{v:.3g}"


def count_text(n: int) -> str:
    """A whole number for a message: with thousands separators, or as ``1e+300`` past 15 digits (a huge value
    typed on the command line is not echoed digit by digit)."""
    return f"{n:,}" if abs(n) < DIGITS_LIMIT else f"{float(n):.3g}"
