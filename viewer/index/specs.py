"""What an ``--index`` text means: which class it names and with which options, in every command alike.

**One spec** is one of

- a registered name, a key of :data:`viewer.index.INDEXES` (``octree``);
- an installed plugin's name: a package declaring, in its ``pyproject.toml``, an entry point in the group
  :data:`ENTRY_POINT_GROUP` (``[project.entry-points."viewdist_testbed.indexes"]`` ``myname =
  "mypackage.module:MyIndex"``);
- ``package.module:Class``, imported from the environment;
- ``path/to/file.py:Class``, a file loaded by its path. **Loading it runs that file's code**, as pytest runs a
  ``conftest.py``: name only files you trust.

each optionally followed by options ``:key=value,key=value`` (``octree:max_depth=8``,
``mypkg.mod:MyIndex:leaf=16``, ``./my_index.py:MyIndex:leaf=16``). An option is one of the constructor's
parameters after ``(centres, radii)``, typed from its annotation or its default's type: ``int`` (a whole number;
``1e3`` is 1000), ``float``, ``str``, and ``bool`` by :data:`TRUE` / :data:`FALSE` (``true``/``false``,
``yes``/``no``, ``on``/``off``, ``1``/``0``, any case; anything else is refused); ``none`` where the parameter
may be None. A parameter with neither annotation nor a typed default takes a number, else the text.

**A list** of specs (:func:`parse_index_list`, every command's ``--index`` and a sweep file's ``indexes``):
specs separated by ``;`` or ``,``, or given as separate words (``--index octree bvh``, ``--index octree --index
bvh``). A ``,`` followed by ``key=value`` continues the options of the spec before it, so
``octree,hashgrid:cell_size=20,max_span=4,bvh`` is three specs. (The spellings each command took before all
still mean what they meant: the bench's ``;``, the clients' ``,``, record's words.)

A class is checked when its spec is read: a :class:`viewer.index.SphereIndex` subclass implementing the hooks
of :data:`REQUIRED_HOOKS`, its constructor taking ``(centres, radii)`` then the options. Every mistake (a module
or file that does not import, a missing class, a class off the protocol, an option it does not take or of the
wrong type, a constructor that raises on a small world: :func:`check_index_spec`) is a
:class:`viewer.errors.UserError` naming the spec: one line, exit status 2, no traceback.

A spec crosses a process boundary (the bench's first-build subprocess, a sweep's Dask workers) as its text
(:attr:`IndexSpec.text`, a file's path made absolute), resolved again on the far side; pickling an
:class:`IndexSpec` does exactly that.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import re
import sys
import typing
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import UserError
from ._contract import SphereIndex
from .registry import INDEXES

__all__ = [
    "ENTRY_POINT_GROUP",
    "number_or_text",
    "FALSE",
    "REQUIRED_HOOKS",
    "TRUE",
    "IndexSpec",
    "check_index_spec",
    "index_options",
    "installed_plugins",
    "known_names",
    "label_stem",
    "make_index",
    "parse_bool",
    "parse_index_list",
    "parse_index_spec",
    "split_index_list",
    "usable_plugins",
]

#: the entry-point group a plugin package declares its index classes in (``name = "module:Class"``)
ENTRY_POINT_GROUP = "viewdist_testbed.indexes"

#: the hooks a :class:`SphereIndex` subclass must implement (the base class's own only raise)
REQUIRED_HOOKS: tuple[str, ...] = ("_query", "_insert", "_remove", "_move", "_id_state", "__len__")

#: the one boolean rule of every index option: these texts (any case) are True, those of :data:`FALSE` False
TRUE = frozenset({"true", "yes", "on", "1"})
FALSE = frozenset({"false", "no", "off", "0"})

# a ',' piece that starts with `key=` continues the options of the spec before it
_OPTION_PIECE = re.compile(r"\s*[A-Za-z_]\w*\s*=")
_FILE_MODULE_PREFIX = "_viewer_index_file_"


@dataclass(frozen=True)
class IndexSpec:
    """An index class and its options, as one ``--index`` text named them (:func:`parse_index_spec`).

    label : the text as given, stripped (the bench's row, a recording's index)
    name : a short display name: the registered or plugin name, or the class's name for a module or file spec
    cls : the :class:`SphereIndex` subclass (default: the registered index ``name``)
    options : the constructor's keyword options, typed (int, float, str, bool, None)
    """

    label: str
    name: str
    cls: type = None  # type: ignore[assignment]  # None: the registered index ``name`` (IndexSpec("octree", "octree"))
    options: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.cls is None:  # as the bench's own IndexSpec(label, name) was made
            object.__setattr__(self, "cls", INDEXES[self.name])

    def __hash__(self) -> int:
        return hash(self.label)

    @property
    def text(self) -> str:
        """The spec as a text another process resolves to the same class and options: the label, with a
        file spec's path made absolute (a worker may run elsewhere in the tree)."""
        path = _loaded_from(self.cls)
        if path is None:
            return self.label
        opts = ",".join(f"{k}={_option_text(v)}" for k, v in self.options.items())
        return f"{path}:{self.cls.__name__}" + (f":{opts}" if opts else "")

    def build(self, centres, radii) -> SphereIndex:
        """The index over ``centres`` (N, 3) and ``radii`` (N,) with these options (:func:`make_index`)."""
        return self.cls(centres, radii, **self.options)

    def __reduce__(self):
        # across processes as text, resolved on the far side (a file-loaded class cannot be pickled by name)
        return _from_text, (self.text, self.label)


def label_stem(label: str) -> str:
    """A spec's label as a file's stem (a recording's ``INDEX.csv``): a file spec's path separators as ``_``,
    without the leading dots of a relative path (``./my_index.py:MyIndex`` -> ``my_index.py:MyIndex``); a
    registered name unchanged."""
    return re.sub(r"[/\\]", "_", label).lstrip("._") or "index"


def _from_text(text: str, label: str) -> IndexSpec:
    spec = parse_index_spec(text)
    return IndexSpec(label, spec.name, spec.cls, spec.options)


# ------------------------------------------------------------------------------------------- lists


def parse_index_list(texts: str | list[str], flag: str = "--index") -> list[IndexSpec]:
    """Every spec of ``texts`` (one text or the words of a flag given several times), in order, each read by
    :func:`parse_index_spec` and checked by :func:`check_index_spec` (a constructor that raises is refused
    here, before any work). The list grammar is the module docstring's. :class:`UserError` naming ``flag`` for
    a list that names no index or a bad spec; duplicates are the caller's to refuse or merge."""
    words = [texts] if isinstance(texts, str) else list(texts)
    specs = [parse_index_spec(t, flag=flag) for t in split_index_list(words)]
    if not specs:
        shown = " ".join(words)
        raise UserError(f"{flag} {shown!r} names no index; choose from {', '.join(known_names())}, an installed "
                        "plugin, package.module:Class or path/to/file.py:Class")
    for s in specs:
        check_index_spec(s, flag=flag)
    return specs


def split_index_list(words: list[str]) -> list[str]:
    """The spec texts of ``words`` by the list grammar (module docstring): ``;`` and ``,`` separate specs, but
    a ``,`` followed by ``key=value`` continues the spec before it; blank pieces are dropped."""
    out: list[str] = []
    for word in words:
        for part in str(word).split(";"):
            current: str | None = None
            for piece in part.split(","):
                if current is not None and _OPTION_PIECE.match(piece):
                    current += "," + piece
                    continue
                if current is not None and current.strip():
                    out.append(current.strip())
                current = piece
            if current is not None and current.strip():
                out.append(current.strip())
    return out


# ------------------------------------------------------------------------------------------- one spec


def parse_index_spec(text: str, flag: str = "--index") -> IndexSpec:
    """Resolve one spec (module docstring) to its class and typed options. :class:`UserError` naming ``flag``
    and the spec for an unknown name, a module or file that does not import, a missing class, a class off
    the protocol (naming the missing hook), an option not written ``key=value``, given twice, not taken by
    the class or not of its type. The class is not built here (:func:`check_index_spec` does that)."""
    label = str(text).strip()
    where = f"{flag} {label!r}"
    parts = label.split(":")
    head = parts[0].strip()
    if not head:
        raise UserError(f"{where}: no index named; choose from {', '.join(known_names())}")
    if head.endswith(".py") or "/" in head or "\\" in head:
        if len(parts) < 2 or not parts[1].strip():
            raise UserError(f"{where}: a file spec names its class: path/to/file.py:Class")
        cls = _class_of(_load_file(head, where), parts[1].strip(), where)
        name, opts = cls.__name__, ":".join(parts[2:])
    elif head in _registered():
        cls, name, opts = _registered()[head], head, ":".join(parts[1:])
    elif head in (plugins := installed_plugins()):
        cls, name, opts = _load_plugin(head, plugins[head], where), head, ":".join(parts[1:])
    elif len(parts) >= 2 and parts[1].strip().isidentifier():
        cls = _class_of(_import_module(head, where), parts[1].strip(), where)
        name, opts = cls.__name__, ":".join(parts[2:])
    else:
        raise UserError(f"{flag}: unknown index {head!r}; choose from {', '.join(known_names())}, an installed "
                        "plugin's name, package.module:Class or path/to/file.py:Class")
    _check_protocol(cls, where)
    return IndexSpec(label, name, cls, _options(cls, name, opts, where))


def _registered():
    return INDEXES


def usable_plugins() -> list[str]:
    """The installed plugins' names that no registered name hides, whose class loads and whose libraries are
    installed, in entry-point order: what the lists of every index (the window's, ``viewer bench``'s default)
    add to the registry's. One that does not load is left out of them, not the end of the command
    (``viewer check-index NAME`` says why)."""
    names = []
    for k in installed_plugins():
        if k in _registered():
            continue
        try:
            if parse_index_spec(k).cls.unavailable() is None:
                names.append(k)
        except UserError:
            pass
    return names


def known_names() -> list[str]:
    """The registered index names, then the installed plugins' (sorted each): what an error offers."""
    return [*sorted(_registered()), *sorted(k for k in installed_plugins() if k not in _registered())]


def installed_plugins() -> dict[str, str]:
    """The installed plugins' indexes: entry-point name -> ``"module:Class"``, group :data:`ENTRY_POINT_GROUP`
    (a name the registry holds stays the registry's)."""
    from importlib.metadata import entry_points

    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}


def _load_plugin(name: str, value: str, where: str) -> type:
    module, _, attr = value.partition(":")
    return _class_of(_import_module(module.strip(), where, f"plugin {name!r} ({value})"), attr.strip(), where)


def _one_line(exc: BaseException) -> str:
    from ..terminal.text import clip

    text = " ".join(str(exc).split()) or "(no message)"
    if isinstance(exc, SyntaxError) and exc.lineno:
        text = f"{exc.msg} (line {exc.lineno})"
    return clip(f"{type(exc).__name__}: {text}", 300)


def _import_module(module: str, where: str, what: str | None = None):
    what = what or f"module {module!r}"
    if not module or not all(p.isidentifier() for p in module.split(".")):
        raise UserError(f"{where}: {module!r} is not a module name (package.module:Class)")
    try:
        return importlib.import_module(module)
    except Exception as exc:  # noqa: BLE001 - any failure of a user's module is a message naming the spec
        raise UserError(f"{where}: {what} does not import: {_one_line(exc)}") from None


def _load_file(path_text: str, where: str):
    """The module of a ``.py`` file loaded by its path (once a process: the same class on each read)."""
    path = Path(path_text).expanduser()
    if path.suffix != ".py":
        raise UserError(f"{where}: a file spec is path/to/file.py:Class; {path_text!r} is not a .py file")
    if not path.is_file():
        raise UserError(f"{where}: no such file {path_text!r}")
    path = path.resolve()
    module = _FILE_MODULE_PREFIX + hashlib.sha1(str(path).encode()).hexdigest()[:12] + "_" + \
        re.sub(r"\W", "_", path.stem)
    if module in sys.modules:
        return sys.modules[module]
    loader_spec = importlib.util.spec_from_file_location(module, path)
    mod = importlib.util.module_from_spec(loader_spec)
    sys.modules[module] = mod  # before running it: a dataclass or a pickle inside looks itself up
    try:
        loader_spec.loader.exec_module(mod)
    except Exception as exc:  # noqa: BLE001 - any failure of a user's file is a message naming the spec
        del sys.modules[module]
        raise UserError(f"{where}: file {path_text!r} does not import: {_one_line(exc)}") from None
    return mod


def _loaded_from(cls: type) -> str | None:
    """The path of the file ``cls`` was loaded from by a file spec, or None."""
    if not cls.__module__.startswith(_FILE_MODULE_PREFIX):
        return None
    return getattr(sys.modules.get(cls.__module__), "__file__", None)


def _class_of(mod, attr: str, where: str) -> type:
    shown = _loaded_from_module(mod)
    if not attr:
        raise UserError(f"{where}: no class named (module:Class)")
    cls = getattr(mod, attr, None)
    if cls is None:
        found = sorted(k for k, v in vars(mod).items() if inspect.isclass(v) and issubclass(v, SphereIndex)
                       and v.__module__ == mod.__name__)
        hint = f" (its index classes: {', '.join(found)})" if found else " (it defines no SphereIndex subclass)"
        raise UserError(f"{where}: {shown} has no class {attr!r}{hint}")
    if not inspect.isclass(cls):
        raise UserError(f"{where}: {attr!r} in {shown} is not a class but a {type(cls).__name__}")
    return cls


def _loaded_from_module(mod) -> str:
    name = getattr(mod, "__name__", "?")
    return f"file {getattr(mod, '__file__', '?')!r}" if name.startswith(_FILE_MODULE_PREFIX) else f"module {name!r}"


def _check_protocol(cls: type, where: str) -> None:
    """:class:`UserError` unless ``cls`` is a :class:`SphereIndex` subclass implementing every hook of
    :data:`REQUIRED_HOOKS` and taking ``(centres, radii)``."""
    hooks = ", ".join(REQUIRED_HOOKS)
    if not issubclass(cls, SphereIndex):
        raise UserError(f"{where}: {cls.__name__} does not follow the index protocol: derive it from "
                        f"viewer.index.SphereIndex and implement the hooks {hooks}")
    missing = [h for h in REQUIRED_HOOKS if getattr(cls, h) is getattr(SphereIndex, h)]
    if missing:
        raise UserError(f"{where}: {cls.__name__} does not implement the hook{'s' * (len(missing) > 1)} "
                        f"{', '.join(missing)} (every index implements {hooks})")
    if len(_parameters(cls)[0]) < 2:
        raise UserError(f"{where}: {cls.__name__}'s constructor must take (centres, radii), then its options")


# ------------------------------------------------------------------------------------------- options


def index_options(cls: type | str) -> tuple[str, ...]:
    """The options an index class (or a registered name) takes: its constructor's keyword parameters after
    the centres and the radii."""
    if isinstance(cls, str):
        cls = _registered()[cls]
    return tuple(_parameters(cls)[1])


def _parameters(cls: type) -> tuple[list[inspect.Parameter], dict[str, inspect.Parameter], bool]:
    """``cls``'s constructor: its positional parameters (after self), its options (the parameters after the
    first two positional ones, by name), and whether it takes ``**kwargs``."""
    try:
        params = list(inspect.signature(cls.__init__).parameters.values())[1:]  # self
    except (TypeError, ValueError):
        return [], {}, True
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    skip = {p.name for p in positional[:2]}
    options = {p.name: p for p in params if p.name not in skip
               and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return positional, options, any(p.kind is p.VAR_KEYWORD for p in params)


def _options(cls: type, name: str, text: str, where: str) -> dict:
    _, takes, any_key = _parameters(cls)
    hints = _hints(cls)
    options: dict = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, eq, value = (t.strip() for t in part.partition("="))
        if not eq or not key or not value:
            raise UserError(f"{where}: options are written name:key=value,key=value")
        if key not in takes and not any_key:
            listed = f"its options: {', '.join(takes)}" if takes else "it takes no options"
            raise UserError(f"{where}: {name} takes no option {key!r} ({listed})")
        if key in options:
            raise UserError(f"{where}: option {key!r} is given twice")
        param = takes.get(key)
        kinds = _kinds(hints.get(key, param.annotation if param else inspect.Parameter.empty),
                       param.default if param else inspect.Parameter.empty)
        options[key] = _typed(value, kinds, key, where)
    return options


def _hints(cls: type) -> dict:
    """The constructor's annotations, evaluated where they can be (else the raw texts)."""
    try:
        return typing.get_type_hints(cls.__init__)
    except Exception:  # noqa: BLE001 - a name the annotation uses may not import here: read the texts instead
        return {}


_NAMES = {"bool": "bool", "int": "int", "float": "float", "str": "str", "None": "none", "NoneType": "none"}


def _kinds(annotation, default) -> set[str]:
    """What an option's value may be: of ``{"bool", "int", "float", "str", "none", "any"}``."""
    if annotation is inspect.Parameter.empty or annotation is typing.Any:
        if default is None:
            return {"any", "none"}
        for t in (bool, int, float, str):  # bool before int: True is an int
            if isinstance(default, t):
                return {t.__name__}
        return {"any"}
    if isinstance(annotation, str):
        text = annotation.replace("typing.", "").replace(" ", "")
        if text.startswith("Optional[") and text.endswith("]"):
            text = text[len("Optional["):-1] + "|None"
        if text.startswith("Union[") and text.endswith("]"):
            text = text[len("Union["):-1].replace(",", "|")
        kinds = {_NAMES.get(t, "any") for t in text.split("|")}
    elif annotation is None or annotation is type(None):
        kinds = {"none"}
    elif isinstance(annotation, type) and annotation.__name__ in _NAMES:
        kinds = {_NAMES[annotation.__name__]}
    elif typing.get_args(annotation):
        kinds = set().union(*(_kinds(a, inspect.Parameter.empty) for a in typing.get_args(annotation)))
    else:
        kinds = {"any"}
    if default is None:
        kinds.add("none")
    return kinds


def parse_bool(value: str) -> bool | None:
    """``value`` by the one boolean rule (:data:`TRUE`, :data:`FALSE`, any case), None when it is neither."""
    v = value.strip().lower()
    return True if v in TRUE else False if v in FALSE else None


def _typed(value: str, kinds: set[str], key: str, where: str):
    """An option's text as its type (see :func:`_kinds`); :class:`UserError` naming the spec and the option."""
    if "none" in kinds and value.lower() == "none":
        return None
    if "bool" in kinds and (b := parse_bool(value)) is not None:
        return b
    if "int" in kinds and (n := _whole(value)) is not None:
        return n
    if "float" in kinds:
        try:
            return float(value)
        except ValueError:
            pass
    if "any" in kinds:
        if value.lower() in ("true", "false"):  # an untyped option is no switch: true would be taken as 1
            raise UserError(f"{where}: option {key} must be a number or a name, got {value!r} (no untyped "
                            "option is true/false)")
        return number_or_text(value)
    if "str" in kinds:
        return value
    if "bool" in kinds:
        raise UserError(f"{where}: option {key} is true or false (true/false, yes/no, on/off, 1/0, any case), "
                        f"got {value!r}")
    wanted = " or ".join(sorted({"int": "a whole number", "float": "a number", "none": "none"}.get(k, k)
                                for k in kinds))
    raise UserError(f"{where}: option {key} must be {wanted}, got {value!r}")


def _whole(value: str) -> int | None:
    try:
        return int(value.replace("_", ""))
    except ValueError:
        pass
    try:
        f = float(value)
    except ValueError:
        return None
    return int(f) if f.is_integer() else None


def number_or_text(v: str):
    """``v`` as an int, else a float, else the text: how an option's or a CSV cell's text reads."""
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    return v


def _option_text(v) -> str:
    return "true" if v is True else "false" if v is False else "none" if v is None else str(v)


# ------------------------------------------------------------------------------------------- building


def check_index_spec(spec: IndexSpec, flag: str = "--index") -> None:
    """Build ``spec``'s index over a handful of objects before anything is generated or measured, so an
    option out of range or a constructor that raises is refused up front (a bench or a sweep would otherwise
    meet it only at its first build, after generating its workload). Registered indexes without options are
    not built (nothing to check); an index whose library is missing here is only checked for its option
    names. :class:`UserError` naming ``flag`` and the spec."""
    from ..terminal.text import clip

    if not spec.options and _registered().get(spec.name) is spec.cls:
        return
    rng = np.random.default_rng(0)
    centres = rng.uniform(0.0, 100.0, (16, 3))
    radii = rng.uniform(1.0, 20.0, 16)
    ours = spec.cls.__module__.split(".")[0] == "viewer"
    try:
        if spec.cls.unavailable():
            inspect.signature(spec.cls).bind(centres, radii, **spec.options)
        else:
            spec.build(centres, radii)
    except (TypeError, ValueError, OverflowError, ArithmeticError) as exc:
        if ours:
            raise UserError(f"{flag} {spec.label}: {clip(str(exc), 300)}") from None
        raise UserError(f"{flag} {spec.label!r}: {spec.cls.__name__}(centres, radii"
                        f"{''.join(f', {k}={v!r}' for k, v in spec.options.items())}) raised "
                        f"{_one_line(exc)}") from None
    except Exception as exc:  # noqa: BLE001 - a plugin's constructor may raise anything: one line naming it
        if ours:
            raise
        raise UserError(f"{flag} {spec.label!r}: {spec.cls.__name__}(centres, radii) raised {_one_line(exc)}") \
            from None


def make_index(spec: IndexSpec | str, centres, radii, **options) -> SphereIndex:
    """Build the index ``spec`` names (an :class:`IndexSpec`, or any spec text: a registered name, a plugin,
    ``module:Class``, ``file.py:Class``, with options) over ``centres`` (N, 3) and ``radii`` (N,) float, world
    units; ``options`` add to (and override) the spec's own. ``KeyError`` for an unknown plain name (as the
    registry's lookup), :class:`UserError` for any other bad spec text."""
    if isinstance(spec, str):
        text = spec.strip()
        if text in _registered():
            return _registered()[text](centres, radii, **options)
        if ":" not in text and not text.endswith(".py") and text not in installed_plugins():
            raise KeyError(f"unknown index {text!r}; choose from {', '.join(known_names())}")
        spec = parse_index_spec(text)
    return spec.cls(centres, radii, **{**spec.options, **options})
