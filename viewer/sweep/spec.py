"""Sweep files: the axes of a benchmark grid, and the tasks their product makes.

A sweep file is TOML::

    format = "viewer-sweep"
    version = 1
    name = "tiny"                                # default: the file's stem
    indexes = ["octree", "hashgrid:cell_size=64", "brute"]   # measured together in every task

    [axes]                                       # every key a list; the product is the set of tasks
    scene = ["uniform", "clustered"]             # generator names (viewer scene --help)
    n = [1e5, 1e6]
    radius = ["default", "constant:value=20"]    # view-radius models, as in viewer bench --radius
    queries = [300]
    dynamic = ["0.01,0.1", "none"]               # shares moving per frame, as in viewer bench --dynamic
    frames = [10]
    updates = [10000]
    seed = [0]

A task is one workload (scene x n x radius model x ...) with *all* the sweep's indexes, measured interleaved in
one process exactly as ``viewer bench`` does, so every ratio in a task is a same-machine, same-run ratio. A task
carries only names and numbers: the worker generates its scene from the generator and seed (bit-identical on any
machine), so no array travels. Pure: no dask here.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path

from viewer.errors import UserError
from viewer.terminal.text import clip

__all__ = ["AXES", "FORMAT", "Sweep", "Task", "bundled_sweeps", "load_sweep", "resolve_sweep_path"]

FORMAT = "viewer-sweep"
VERSION = 1
# axis -> default (a bench default when the file leaves the axis out)
AXES: dict[str, object] = {
    "scene": None,  # required
    "n": None,  # required
    "radius": "default",
    "queries": 300,
    "dynamic": "0.01,0.1",
    "frames": 10,
    "updates": 10_000,
    "seed": 0,
}
_TOP = {"format", "version", "name", "description", "indexes", "axes"}
MAX_TASKS = 100_000


@dataclass(frozen=True)
class Task:
    """One workload of a sweep with all its indexes. ``key`` names it in the results (for resuming)."""

    scene: str
    n: int
    radius: str
    queries: int
    dynamic: str
    frames: int
    updates: int
    seed: int
    indexes: tuple[str, ...]

    @property
    def key(self) -> str:
        """12 hex digits identifying the task by every field (what a resumed sweep matches rows on)."""
        blob = json.dumps(asdict(self), sort_keys=True).encode()
        return hashlib.sha1(blob).hexdigest()[:12]

    @property
    def label(self) -> str:
        """A short name for logs: scene, N (``100k``, ``1M``) and the radius model unless the default."""
        parts = [self.scene, _short(self.n)]
        if self.radius != "default":
            parts.append(self.radius)
        return " ".join(parts)

    def params(self) -> dict:
        """The task's axis values (the indexes excluded), as CSV cells."""
        d = asdict(self)
        d.pop("indexes")
        return d


@dataclass(frozen=True)
class Sweep:
    """A checked sweep file: the indexes measured in every task, and the values of each axis (keys of
    :data:`AXES`, each a list); its tasks are every combination."""

    name: str
    source: str
    indexes: tuple[str, ...]
    axes: dict[str, list]
    description: str = ""

    def tasks(self) -> list[Task]:
        """Every combination of the axes' values, one :class:`Task` each, the last axis varying fastest."""
        names = list(AXES)
        return [Task(**dict(zip(names, combo)), indexes=self.indexes)
                for combo in itertools.product(*(self.axes[a] for a in names))]


def _short(n: int) -> str:
    for unit, div in (("M", 1_000_000), ("k", 1_000)):
        if n >= div and n % div == 0:
            return f"{n // div}{unit}"
    return str(n)


def bundled_sweeps() -> dict[str, Path]:
    """The example sweep files shipped in this package: stem -> path."""
    here = Path(__file__).parent
    return {p.stem: p for p in sorted(here.glob("*sweep*.toml"))}


def resolve_sweep_path(text: str) -> Path:
    """``text`` as a sweep file: an existing file, else a bundled sweep's name (:func:`bundled_sweeps`).
    :class:`UserError` naming ``text`` otherwise."""
    p = Path(text)
    if p.is_file():
        return p
    if text in bundled_sweeps():
        return bundled_sweeps()[text]
    if p.exists():
        raise UserError(f"{text}: not a regular file")
    raise UserError(f"{text}: no such sweep file or bundled sweep (bundled: {', '.join(bundled_sweeps())})")


def load_sweep(text: str) -> Sweep:
    """Read and check a sweep file (a path or a bundled sweep's name); every mistake names the file and field."""
    path = resolve_sweep_path(text)
    src = str(path)
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8-sig"))  # a byte-order mark is not TOML
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{src}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{src}: not valid TOML: {exc}") from None
    except RecursionError:
        raise UserError(f"{src}: not a sweep file: arrays or tables nested too deeply to read as TOML") from None
    except ValueError as exc:  # an integer literal of more than 4300 digits
        raise UserError(f"{src}: not valid TOML ({clip(str(exc), 200)})") from None
    try:
        return _check_doc(doc, path, src)
    except RecursionError:  # nested just shallowly enough to parse
        raise UserError(f"{src}: not a sweep file: values nested too deeply") from None


def _show(v) -> str:
    """``repr(v)``, cut to 60 characters (a value in a message, however large or deep)."""
    try:
        text = repr(v)
    except (RecursionError, ValueError):
        text = f"<a {type(v).__name__} nested too deeply>"
    return clip(text, 60)


def _name(key: str) -> str:
    """A field's name as written, cut to 60 characters."""
    return clip(key, 60)


def _check_doc(doc: dict, path: Path, src: str) -> Sweep:
    def bad(field: str, problem: str) -> UserError:
        return UserError(f"{src}: {field}: {problem}")

    for key in doc:
        if key not in _TOP:
            raise bad(_name(key), f"unknown field (fields: {', '.join(sorted(_TOP))})")
    if doc.get("format", FORMAT) != FORMAT:
        raise bad("format", f"expected {FORMAT!r}, got {_show(doc['format'])}")
    if doc.get("version", VERSION) != VERSION:
        raise bad("version", f"this viewer reads version {VERSION}, got {_show(doc['version'])}")
    name = doc.get("name", path.stem)
    if not isinstance(name, str) or not name:
        raise bad("name", "must be a non-empty string")
    if "/" in name or "\\" in name or not name.isprintable():
        raise bad("name", f"must be a plain name, without '/', '\\' or control characters (it names the default "
                          f"results directory runs/sweep-NAME), got {_show(name)}")
    description = doc.get("description", "")
    if not isinstance(description, str):
        raise bad("description", f"must be a string, got {_show(description)}")
    indexes = doc.get("indexes")
    if not isinstance(indexes, list) or not indexes or not all(isinstance(s, str) and s.strip() for s in indexes):
        raise bad("indexes", "must be a non-empty list of index specs, e.g. [\"octree\", \"hashgrid:cell_size=64\"]")
    from viewer.index.specs import parse_index_list, split_index_list

    try:  # every command's grammar: an entry may hold several specs; each checked here, resolved again by a worker
        parse_index_list(indexes, flag="index")
    except UserError as exc:
        raise bad("indexes", str(exc)) from None
    indexes = split_index_list(indexes)
    if len(set(indexes)) != len(indexes):  # as written, spaces aside (viewer bench's labels)
        raise bad("indexes", "an index spec is listed twice")
    raw = doc.get("axes")
    if not isinstance(raw, dict):
        raise bad("axes", "a table of lists is required, with at least scene and n")
    axes: dict[str, list] = {}
    for key in raw:
        if key not in AXES:
            raise bad(f"axes.{_name(key)}", f"unknown axis (axes: {', '.join(AXES)})")
    for key, default in AXES.items():
        values = raw.get(key, None if default is None else [default])
        if values is None:
            raise bad(f"axes.{key}", "required")
        if not isinstance(values, list) or not values:
            raise bad(f"axes.{key}", "must be a non-empty list")
        axes[key] = [_check_value(key, v, bad) for v in values]
        if len(set(axes[key])) != len(axes[key]):
            raise bad(f"axes.{key}", "a value is listed twice")
    count = 1
    for v in axes.values():
        count *= len(v)
    if count > MAX_TASKS:
        raise bad("axes", f"{count:,} tasks; at most {MAX_TASKS:,}")
    return Sweep(name, src, tuple(s.strip() for s in indexes), axes, description)


def _check_value(axis: str, v, bad):
    from viewer.bench.run import parse_radius_spec

    where = f"axes.{axis}"
    if axis == "scene":
        from viewer.scenes import GENERATORS

        if not isinstance(v, str) or v not in GENERATORS:
            raise bad(where, f"unknown scene generator {_show(v)}; choose from {', '.join(GENERATORS)}")
        return v
    if axis == "radius":
        if not isinstance(v, str):
            raise bad(where, f"a radius model is a string such as 'constant:value=20', got {_show(v)}")
        try:
            parse_radius_spec(v)
        except UserError as exc:
            raise bad(where, str(exc)) from None
        return v.strip()
    if axis == "dynamic":
        try:
            shares = _shares(v)
        except ValueError as exc:
            raise bad(where, str(exc)) from None
        return ",".join(repr(s) for s in shares) if shares else "none"
    # whole numbers: n, queries, frames, updates, seed
    from viewer.scenes import MAX_N

    lo, hi = {"n": (1, MAX_N), "queries": (1, 10**6), "frames": (0, 10**6), "updates": (0, 10**8),
              "seed": (0, 2**63 - 1)}[axis]
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v in (float("inf"), float("-inf")):
        raise bad(where, f"must be a whole number in {lo}..{hi:g}, got {_show(v)}")
    if int(v) != v or not lo <= v <= hi:
        raise bad(where, f"must be a whole number in {lo}..{hi:g}, got {_show(v)}")
    return int(v)


def _shares(v) -> list[float]:
    """``"0.01,0.1"``, ``[0.01, 0.1]``, ``0.1`` or ``"none"`` -> the shares moving per frame."""
    if isinstance(v, str):
        if v.strip().lower() == "none":
            return []
        try:
            vals = [float(p) for p in v.split(",")]
        except ValueError:
            raise ValueError(f"shares are fractions such as \"0.01,0.1\" or \"none\", got {_show(v)}") from None
    elif isinstance(v, list):
        vals = v
    elif isinstance(v, (int, float)) and not isinstance(v, bool):
        vals = [v]
    else:
        raise ValueError(f"shares are fractions such as \"0.01,0.1\" or \"none\", got {_show(v)}")
    if not all(isinstance(s, (int, float)) and not isinstance(s, bool) and 0 < s <= 1 for s in vals):
        raise ValueError(f"shares must be in (0, 1] (\"none\" skips the dynamic workload), got {_show(v)}")
    return [float(s) for s in vals]


def dynamic_shares(task: Task) -> list[float]:
    """The shares of objects moving per frame that ``task`` measures, each in (0, 1]; empty for none."""
    return _shares(task.dynamic)


def sweep_shares(sweep: Sweep) -> list[float]:
    """Every share any task of ``sweep`` measures, ascending: the dynamic columns of its CSV."""
    return sorted({s for v in sweep.axes.get("dynamic", [AXES["dynamic"]]) for s in _shares(v)})
