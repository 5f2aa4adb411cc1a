"""What ``viewer bench`` and ``viewer clients`` are asked to run, checked before anything is compiled or
generated: the workloads (scene generators or scene files, each once; import options only for a file), the
object counts, the seed, the drift of the dynamic workload. Each refusal names its flag."""

from __future__ import annotations

import argparse

from ..errors import UserError, once
from ..terminal.text import count_text

__all__ = ["check_drift", "check_indexes", "check_workloads", "default_indexes", "parse_seed", "parse_sizes",
           "workload"]


def default_indexes() -> str:
    """What ``viewer bench --index`` measures when not given: every registered index, then every installed
    plugin that loads (:func:`viewer.index.specs.usable_plugins`), by name."""
    from ..index import INDEXES
    from ..index.specs import usable_plugins

    return ",".join([*sorted(INDEXES), *usable_plugins()])


def check_indexes(text: str) -> list:
    """The index specs ``--index`` lists (:func:`viewer.index.parse_index_list`: each loaded and built small),
    each once by its label."""
    from ..index import parse_index_list

    specs = parse_index_list(text)
    once(specs, "--index", key=lambda s: s.label, show=lambda s: s.label)
    return specs


def parse_sizes(text: str) -> list[int]:
    """An argparse type: ``1e5,1e6`` -> object counts, each a whole number 1 .. :data:`viewer.scenes.MAX_N`
    (what one scene may hold: a larger one would be refused only when its workload is generated, after the
    work before it)."""
    from ..scenes import MAX_N

    out = []
    for part in text.split(","):
        try:
            v = float(part)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a size: {part!r} (write e.g. 1e5,1e6)") from None
        if not (1 <= v <= MAX_N) or v != int(v):
            raise argparse.ArgumentTypeError(f"sizes must be whole numbers in 1..{count_text(MAX_N)} "
                                             f"(the most objects a scene holds), got {part!r}")
        out.append(int(v))
    return out


def workload(text: str):
    """What a ``--scene`` entry of ``viewer bench`` or ``viewer clients`` runs: a scene generator's name, or
    the resolved :class:`Path` of a scene file (a bundled recipe's name too); a :class:`UserError` naming
    --scene for neither."""
    from ..scenes import GENERATORS, SceneError, resolve_scene_path

    if text in GENERATORS:
        return text
    try:
        return resolve_scene_path(text).resolve()
    except SceneError as exc:
        raise UserError(f"--scene {text!r} is neither a scene generator ({', '.join(GENERATORS)}) nor a scene "
                        f"file: {exc}") from None


def check_workloads(scenes: list[str], sizes: list[int], import_options: dict | None = None) -> None:
    """Refuse an empty ``--scene`` list, a workload or size listed twice, and import options (``--view-distance``,
    ``--columns``: ``import_options``, None when not given) for anything but a file imported on the fly."""
    from ..scenes import GENERATORS, check_import_options

    if not scenes:
        raise UserError("--scene names no workload")
    once(scenes, "--scene", key=workload)
    once(sizes, "--n", show=count_text)
    if import_options is None:
        return
    for s in scenes:
        if s not in GENERATORS:
            check_import_options(workload(s), import_options, shown=s)  # refused, naming the flag, for a recipe or .npz
        elif any(v is not None for v in import_options.values()):
            flag = "--view-distance" if import_options.get("view_distance") is not None else "--columns"
            raise UserError(f"{flag} applies only to a scene file imported on the fly (.gltf, .glb, .ply, .csv, "
                            f".tsv, .parquet); --scene {s} is a generator, whose view distances come from --radius")


def check_drift(drift: float, frames: int) -> None:
    """A :class:`UserError` naming --drift when ``frames`` frames of it could carry a mover out of the numeric
    domain (a mover's velocity is normal: 10 standard deviations are never reached; half the domain is left to
    the world's own coordinates)."""
    from ..domain import COORD_LIMIT

    most = COORD_LIMIT / 2 / 10 / frames
    if drift > most:
        raise UserError(f"--drift {drift:g}: {frames} frames of it can carry a mover out of the numeric domain "
                        f"(|coordinate| <= 2**100); at most {most:.3g} with --frames {frames}")


def parse_seed(text: str) -> int:
    """An argparse type: a seed, a whole number 0..2**63-1, the range a scene recipe's ``seed``, ``viewer scene
    generate --seed`` and a sweep's seed axis take (:data:`viewer.scenes.limits.SEED_LIMIT`): the workloads' seed
    of ``viewer bench`` and ``viewer clients``, and the kit's of ``viewer check-index``."""
    from ..scenes.limits import SEED_LIMIT

    try:
        v = int(text)
    except ValueError:
        v = -1
    if not 0 <= v < SEED_LIMIT:
        raise argparse.ArgumentTypeError(
            f"a seed is a whole number 0..2**63-1 (= {SEED_LIMIT - 1}), as a scene recipe's seed and "
            f"'viewer scene generate --seed' take; got {text!r}")
    return v
