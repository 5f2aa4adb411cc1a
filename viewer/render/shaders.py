"""A cached loader for the single-file GLSL programs in :mod:`viewer.shaders`.

Each file holds every stage, split by ``#if defined VERTEX_SHADER`` / ``#elif defined FRAGMENT_SHADER``
(and optionally ``GEOMETRY_SHADER``); a stage is compiled by inserting its ``#define`` (and any
variant ``defines``) after the file's ``#version`` line. A compute program is a file with one
``#if defined COMPUTE_SHADER`` section and no other stage.

A line ``#include "_PART.glsl"`` is replaced by that part's text (a file of :mod:`viewer.shaders` whose name
starts with ``_``: code two programs share, e.g. ``_cull_record.glsl``; parts include nothing themselves).
``#line`` directives around it keep compiler messages pointing at the right lines: source string 0 is the
program's file, j its j-th include.
"""

from __future__ import annotations

import functools
import re

import moderngl

from viewer.shaders import shader_names, shader_path

from ..frame.instances import INSTANCE_WORDS, WORD

__all__ = ["CULL_BINDINGS", "ShaderLibrary", "stage_sources"]

_STAGES = {
    "vertex_shader": "VERTEX_SHADER",
    "fragment_shader": "FRAGMENT_SHADER",
    "geometry_shader": "GEOMETRY_SHADER",
}
_COMPUTE = "COMPUTE_SHADER"

#: Defined in every program: the instance record's layout (:data:`viewer.frame.instances.INSTANCE_DTYPE`) in
#: 32-bit words, ``INSTANCE_WORDS`` per record and ``WORD_<FIELD>`` the first word of each field, for the
#: shaders that write records themselves (``cull.glsl``).
LAYOUT_DEFINES: dict[str, int] = {"INSTANCE_WORDS": INSTANCE_WORDS, **{f"WORD_{k.upper()}": v for k, v in WORD.items()}}

#: The culling programs' shader storage binding points, each defined in every program as ``B_<NAME>``: the
#: buffers of ``shaders/_cull_buffers.glsl`` (which ``cull.glsl``'s passes and ``cull_visible.glsl``'s list
#: pass share), the objects' rows every culling program reads, and each pass's own (``KEPT``: the prefilter's
#: ids; ``LIST``, ``PAIRS``, ``GONE``: the coherent mode's list, its changed slots, the ids that left it). The
#: Python side binds each buffer by its name (``cull_move.glsl``'s and ``cull_many.glsl``'s other buffers are
#: numbered in their files, bound only for their own dispatch). At most 16: every desktop driver has that many.
CULL_BINDINGS: dict[str, int] = {
    "OBJECTS": 0, "APPROX": 1, "LOOKS": 2, "INSTANCES": 3, "DRAWN_IDS": 4, "COMMAND": 5, "VISIBLE_IDS": 6,
    "KEPT": 7, "RANGES": 8, "LODS": 9, "BAND_STATE": 10, "CHANGES": 11, "DRAWN_BANDS": 12,
    "LIST": 13, "PAIRS": 14, "GONE": 15,
}


@functools.lru_cache(maxsize=None)
def _read(name: str) -> str:
    path = shader_path(name)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"no shader {name!r}: {path} does not exist; have {', '.join(shader_names())}") from None


_INCLUDE = re.compile(r'^\s*#\s*include\s+"(_[A-Za-z0-9_]+)\.glsl"\s*$')


def _expanded(name: str, lines: list[str]) -> list[str]:
    """``lines`` of program ``name`` (its second line on) with each ``#include "_PART.glsl"`` replaced by the
    part's lines, between ``#line`` directives (source string j for the program's j-th include, then 0 and the
    file's next line)."""
    out = []
    j = 0
    for k, line in enumerate(lines):
        m = _INCLUDE.match(line)
        if m is None:
            out.append(line)
            continue
        part = _read(m.group(1))
        if any(_INCLUDE.match(x) for x in part.splitlines()):
            raise ValueError(f"{shader_path(m.group(1))}: a part includes nothing itself")
        j += 1
        out += [f"#line 1 {j}", *part.splitlines(), f"#line {k + 3} 0"]  # lines[k] is the file's line k + 2
    return out


def stage_sources(name: str, defines: dict[str, object] | None = None) -> dict[str, str]:
    """The per-stage sources of program ``name``: ``{"vertex_shader": ..., "fragment_shader": ...}``
    (and ``geometry_shader`` when the file has one), or ``{"compute_shader": ...}`` for a compute program."""
    text = _read(name)
    lines = text.splitlines()
    if not lines or not lines[0].startswith("#version"):
        raise ValueError(f"{shader_path(name)}: the first line must be a #version directive")
    version, body = lines[0], "\n".join(_expanded(name, lines[1:]))
    always = {**LAYOUT_DEFINES, **{f"B_{k}": v for k, v in CULL_BINDINGS.items()}}
    extra = "".join(f"#define {k} {v}\n" for k, v in {**always, **(defines or {})}.items())
    if f"defined {_COMPUTE}" in body:
        return {"compute_shader": f"{version}\n#define {_COMPUTE} 1\n{extra}#line 2\n{body}\n"}
    out = {}
    for kw, macro in _STAGES.items():
        if kw == "geometry_shader" and f"defined {macro}" not in body:
            continue
        # keep line numbers in compiler errors: the #line resets to the file's second line
        out[kw] = f"{version}\n#define {macro} 1\n{extra}#line 2\n{body}\n"
    return out


class ShaderLibrary:
    """Programs of one context, compiled once per (name, defines) and kept (a compute program is a
    :class:`moderngl.ComputeShader`)."""

    def __init__(self, ctx: moderngl.Context):
        self.ctx = ctx
        self._cache: dict[tuple, moderngl.Program] = {}

    def program(self, name: str, defines: dict[str, object] | None = None) -> moderngl.Program | moderngl.ComputeShader:
        key = (name, tuple(sorted((defines or {}).items())))
        prog = self._cache.get(key)
        if prog is None:
            try:
                src = stage_sources(name, defines)
                compute = src.get("compute_shader")
                prog = self.ctx.compute_shader(compute) if compute is not None else self.ctx.program(**src)
            except moderngl.Error as exc:
                raise RuntimeError(f"shader {shader_path(name)} failed to compile or link:\n{exc}") from None
            self._cache[key] = prog
        return prog
