"""What the command-line tests share: how a refusal must look."""

from __future__ import annotations


def refused(status: int, err: str, *words: str) -> str:
    """Exit status 2, exactly one error line naming every one of ``words``, no traceback; returns the line."""
    assert status == 2, err
    assert "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if "error:" in ln]
    assert len(lines) == 1, err
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]
