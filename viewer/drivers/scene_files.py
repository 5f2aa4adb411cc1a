"""``viewer scene generate`` and ``viewer scene import``: a recipe generated (with the command line's overrides)
or a file imported, and written as a ``.npz`` scene (atomically), the output checked before any work; and the
argparse types of the overrides that the scenes' own limits bound."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

__all__ = ["OVERRIDES", "generate", "import_file", "object_count", "radius_scale", "renamed_for_n"]


def object_count(text: str) -> int:
    """An argparse type: ``--n``, a whole number of objects 1 .. :data:`viewer.scenes.MAX_N` (``1e7`` accepted)."""
    from ..scenes import MAX_N

    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (np.isfinite(v) and v.is_integer() and 1 <= v <= MAX_N):
        raise argparse.ArgumentTypeError(f"must be a whole number 1..{MAX_N}, got {text!r}")
    return int(v)


def radius_scale(text: str) -> float:
    """An argparse type: ``--radius-scale``, a number > 0 and at most the recipe field's own ceiling."""
    from ..scenes import RECIPE_FIELDS

    hi = RECIPE_FIELDS["radius_scale"].hi
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 < v <= hi:
        raise argparse.ArgumentTypeError(f"must be a number > 0 and <= {hi:g}, got {text!r}")
    return v


def renamed_for_n(name: str, old_n, new_n: int) -> str | None:
    """The name of a scene whose recipe, named ``name`` for its ``old_n`` objects (``uniform-1m``: it ends in
    ``-`` and the count as bundled names spell it), is generated with ``new_n`` instead: the same name for
    the new count (``uniform-10m``); None when the name does not spell ``old_n`` or the count is unchanged
    (``mine`` stays ``mine``)."""
    from ..scenes.fmt import short_count

    if not isinstance(old_n, int) or isinstance(old_n, bool) or old_n == new_n or old_n < 1:
        return None
    suffix = f"-{short_count(old_n)}"
    if not name.endswith(suffix) or name == suffix:
        return None
    return name[: -len(suffix)] + f"-{short_count(new_n)}"


#: the flags of ``scene generate`` that override a recipe field: (flag, its argparse dest, the field it sets)
OVERRIDES = (("--n", "n", "n"), ("--seed", "seed", "seed"), ("--radius-scale", "radius_scale", "radius_scale"),
             ("--hlod", "hlod", "hlod.cell"))


def _overridden(args) -> dict[str, str]:
    """The recipe fields the command line sets, each with the flag and the value given
    (``{"hlod.cell": "--hlod 1e-300"}``): a refusal of such a field names the flag, not the recipe."""
    return {field: f"{flag} {getattr(args, dest)}" for flag, dest, field in OVERRIDES
            if getattr(args, dest, None) is not None}


def _generate_plan(args) -> tuple[Path, dict | None, str | None, object]:
    """What ``scene generate`` will do, decided before any work: the resolved path, the recipe with the
    --n / --seed / --radius-scale overrides (None without them), when --n changes the count a recipe's
    name spells (``uniform-1m --n 1e7``) the name it was renamed from (the recipe then carries the new
    name), and the recipe's own n."""
    from ..scenes import SceneError, read_recipe, resolve_scene_path

    path = resolve_scene_path(args.recipe)
    hlod = getattr(args, "hlod", None)
    if not _overridden(args):
        return path, None, None, None
    if path.suffix != ".toml":
        flags = [flag for flag, _, _ in OVERRIDES]
        raise SceneError(f"{', '.join(flags[:-1])} and {flags[-1]} apply only to a .toml recipe", source=str(path))
    recipe = read_recipe(path)
    was, old_n = None, recipe.get("n")
    if args.n is not None:
        new = renamed_for_n(str(recipe.get("name", path.stem)), recipe.get("n"), args.n)
        if new is not None:
            was, recipe["name"] = recipe["name"], new
        recipe["n"] = args.n
    if args.seed is not None:
        recipe["seed"] = args.seed
    if args.radius_scale is not None:
        recipe["radius_scale"] = args.radius_scale
    if hlod is not None:
        table = recipe.get("hlod")
        recipe["hlod"] = {**(table if isinstance(table, dict) else {}), "cell": hlod}
    return path, recipe, was, old_n


def _load_for_generate(args, progress, plan=None):
    from ..scenes import SceneError, generate_recipe, load_scene

    path, recipe, _, _ = plan if plan is not None else _generate_plan(args)
    if recipe is None:
        return load_scene(path, progress=progress)
    try:
        scene = generate_recipe(recipe, progress)
    except SceneError as exc:
        flag = _overridden(args).get(exc.field)
        if flag is not None:  # the value came from the command line, not from the recipe's file
            raise SceneError(f"{flag}: {exc.problem}") from None
        raise exc.at(path) from None
    scene.source = str(path)
    return scene


def _output(args, stem: str) -> Path:
    """The .npz file ``scene generate`` or ``scene import`` writes: ``-o`` (an empty name refused, not taken as
    the default), else ``stem.npz`` here; checked before any work (:func:`viewer.files.output.check_output_file`:
    a directory, a device or a FIFO, a name too long, a missing or unwritable directory)."""
    from ..files.output import check_output_file
    from ..scenes import SceneError

    text = args.output if args.output is not None else stem + ".npz"
    out = check_output_file(text, "-o/--output")
    if out.suffix != ".npz":
        raise SceneError(f"the output must be a .npz file, got {text!r}", field="-o/--output")
    return out


def generate(args) -> int:
    """``viewer scene generate``: the recipe ``args.recipe`` (with the ``n``, ``seed``, ``radius_scale``, ``hlod``
    overrides of ``args``, None when not given) generated and written to ``args.output`` (None: its stem + .npz
    here), checked before any work; ``args.quiet``: no progress. Prints what it wrote; returns 0."""
    from ..scenes import save_scene
    from ..scenes.fmt import span
    from ..scenes.loading import generation_progress

    plan = _generate_plan(args)
    was, old_n = plan[2], plan[3]
    stem = Path(args.recipe).stem
    if was is not None:  # uniform-1m --n 1e7 writes uniform-10m.npz, not a "1m" file of 10m objects
        stem = renamed_for_n(stem, old_n, args.n) or stem
    out = _output(args, stem)  # before generating: a minute of work must not end in "cannot write"
    t0 = time.perf_counter()
    scene = _load_for_generate(args, generation_progress(f"generating {Path(args.recipe).stem}", not args.quiet), plan)
    save_scene(scene, out)
    dt = time.perf_counter() - t0
    gen = scene.generator or "data"
    size = out.stat().st_size / 1e6
    name = f"{scene.name} (renamed from {was} for --n {args.n:,})" if was is not None else scene.name
    print(
        f"wrote {out}: {name}, {scene.n:,} objects ({gen}, seed {scene.seed}), "
        f"radii {span(scene.radii)}, {size:.1f} MB, {dt:.2f} s"
    )
    return 0


def import_file(args) -> int:
    """``viewer scene import``: the file ``args.file`` read (with ``args.columns``, ``args.view_distance``,
    ``args.name``) and written as a .npz scene to ``args.output`` (None: its stem + .npz here), checked first.
    Prints what it wrote; returns 0."""
    from ..scenes import import_line, save_scene
    from ..scenes.importers import import_scene
    from ..scenes.loading import generation_progress, loading_label

    out = _output(args, Path(args.file).stem)
    t0 = time.perf_counter()
    scene = import_scene(args.file, columns=args.columns, view_distance=args.view_distance, name=args.name,
                         progress=generation_progress(loading_label(args.file)))
    t1 = time.perf_counter()
    save_scene(scene, out)
    t2 = time.perf_counter()
    print(f"wrote {out}: {scene.name}, {import_line(scene)}; read {t1 - t0:.2f} s, written {t2 - t1:.2f} s")
    return 0


