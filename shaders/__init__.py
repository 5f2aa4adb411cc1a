"""GLSL programs of the viewer, one file per program with every stage in it.

Each ``NAME.glsl`` starts with a ``#version`` line and splits its stages with
``#if defined VERTEX_SHADER`` / ``#elif defined FRAGMENT_SHADER`` (moderngl-window's single-file
layout); :mod:`viewer.render.shaders` compiles them. A ``_NAME.glsl`` file is a part of programs (code two
of them share, pulled in by ``#include "_NAME.glsl"``), not a program. This package only locates the files
(no GL here).
"""

from __future__ import annotations

from pathlib import Path

SHADER_DIR = Path(__file__).resolve().parent

__all__ = ["SHADER_DIR", "shader_names", "shader_path"]


def shader_path(name: str) -> Path:
    """The file of program ``name`` (without ``.glsl``)."""
    return SHADER_DIR / f"{name}.glsl"


def shader_names() -> list[str]:
    """Names of every program shipped here, sorted (not the parts programs include, ``_*.glsl``)."""
    return sorted(p.stem for p in SHADER_DIR.glob("*.glsl") if not p.stem.startswith("_"))
