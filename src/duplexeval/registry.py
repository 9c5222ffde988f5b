"""One registry for everything a user names: systems, timing variants, peer scorers, corpus
recipes, TTS engines, suites (and benchmarks).

A :class:`Registry` maps a name to a factory or object.  Its entries come from three places, in
this order (the first of a name wins):

1. the built-ins, given as ``"module:attribute"`` targets (imported only when asked for) or as
   the objects themselves (a table of suites);
2. objects added at run time (:meth:`Registry.add`, e.g. a test or a notebook);
3. the entry points of the registry's group, ``duplexeval.<kind>``, which is how a third-party
   package adds one from its ``pyproject.toml``, as lm-eval's tasks and inspect_ai's providers
   do::

       [project.entry-points."duplexeval.systems"]
       mymodel = "mypackage.adapter:MyModelSystem"

An unknown name is a one-line :class:`~duplexeval.errors.DuplexevalError` that lists the known
ones; a target that cannot be imported, or that is not of the registry's kind, is one too.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar

from duplexeval.errors import DuplexevalError

__all__ = ["ENTRY_POINT_PREFIX", "Entry", "Registry", "import_target", "instance_of",
           "subclass_of"]

T = TypeVar("T")

ENTRY_POINT_PREFIX = "duplexeval."
"""Every registry's entry-point group is this prefix and its group name (``duplexeval.systems``)."""


@dataclass(frozen=True)
class Entry:
    """One named entry of a registry, before it is loaded."""

    name: str
    target: str
    """``module:attribute`` (``""`` for an object added at run time)."""
    origin: str
    """``builtin``, ``added``, or the distribution whose entry point names it."""


def _import(module_name: str) -> Any:
    """``module_name`` imported; a top-level module that is not on the path is looked for in
    the current folder too (``--system mybot:Bot`` beside ``mybot.py``, as ``python -m`` and
    uvicorn find it)."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        top = module_name.partition(".")[0]
        here = os.getcwd()
        if exc.name != top or here in sys.path or "" in sys.path:
            raise
        sys.path.append(here)
        return importlib.import_module(module_name)


def import_target(target: str, what: str) -> Any:
    """The object a ``module:attribute`` target names (the attribute may be dotted; the module
    may be a file of the current folder); ``what`` names it in the one-line error when it
    cannot be imported."""
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise DuplexevalError(f"{what}: {target!r} is not module:attribute")
    try:
        found: Any = _import(module_name)
    except ImportError as exc:
        raise DuplexevalError(f"{what}: cannot import {module_name} ({exc})") from None
    for part in attribute.split("."):
        if not hasattr(found, part):
            raise DuplexevalError(f"{what}: {module_name} has no {attribute}")
        found = getattr(found, part)
    return found


def instance_of(cls: type[T]) -> Callable[[Any, str], T]:
    """A registry check: the loaded object is an instance of ``cls`` ("... is not a Suite")."""
    def check(found: object, what: str) -> T:
        if not isinstance(found, cls):
            raise DuplexevalError(f"{what}: {found!r} is not a {cls.__name__}")
        return found

    return check


def subclass_of(cls: type[Any], label: str | None = None,
                error: type[DuplexevalError] = DuplexevalError) -> Callable[[Any, str], type[Any]]:
    """A registry check: the loaded object is a subclass of ``cls`` (which may be abstract;
    "... is not a LABEL class", ``label`` defaulting to the class name), else ``error``."""
    def check(found: object, what: str) -> type[Any]:
        if not (isinstance(found, type) and issubclass(found, cls)):
            raise error(f"{what}: {getattr(found, '__name__', found)!r} is not a "
                        f"{label or cls.__name__} class")
        return found

    return check


class Registry(Generic[T]):
    """Names to objects of one kind (see the module docstring).

    ``kind`` names an item in messages (``"system"``); ``group`` is the entry-point group's
    suffix (``"systems"`` for ``duplexeval.systems``); ``check`` turns a loaded object into a
    ``T`` or raises :class:`~duplexeval.errors.DuplexevalError` (e.g. "not a System class");
    ``error`` is the error class of an unknown name (a subclass of ``DuplexevalError``);
    ``sort`` lists the entries by name, else in the order of the built-ins, then the others.
    """

    def __init__(self, kind: str, group: str, builtins: Mapping[str, str | T] | None = None,
                 check: Callable[[Any, str], T] | None = None,
                 error: type[DuplexevalError] = DuplexevalError, sort: bool = True) -> None:
        self.kind = kind
        self.group = ENTRY_POINT_PREFIX + group
        self._builtins: dict[str, str] = {}
        self._loaded: dict[str, T] = {}
        for name, item in (builtins or {}).items():
            if isinstance(item, str):
                self._builtins[name] = item
            else:
                self._builtins[name] = ""
                self._loaded[name] = item
        self._added: dict[str, T] = {}
        self._check = check
        self._error = error
        self._sort = sort

    def add(self, name: str, item: T) -> T:
        """Register ``item`` under ``name`` for this process (a built-in of the same name
        stays first); returns ``item``, so it also serves as a decorator's body."""
        self._added[name] = item
        if name not in self._builtins:
            self._loaded.pop(name, None)
        return item

    def remove(self, name: str) -> None:
        """Forget an object added at run time (a built-in or an entry point stays)."""
        self._added.pop(name, None)
        if name not in self._builtins:
            self._loaded.pop(name, None)

    def entries(self) -> dict[str, Entry]:
        """Every entry by name: built-ins, added, then entry points (sorted by name unless the
        registry keeps the built-ins' order)."""
        found = {name: Entry(name, target, "builtin") for name, target in self._builtins.items()}
        for name in self._added:
            found.setdefault(name, Entry(name, "", "added"))
        for ep in entry_points(group=self.group):
            origin = ep.dist.name if ep.dist is not None else "entry point"
            found.setdefault(ep.name, Entry(ep.name, ep.value, origin))
        return dict(sorted(found.items())) if self._sort else found

    def names(self) -> list[str]:
        """The known names, in :meth:`entries` order."""
        return list(self.entries())

    def __contains__(self, name: object) -> bool:
        # a built-in or added name answers without reading every installed distribution's
        # entry points (~10 ms; the tables ask once per cell and row)
        if not isinstance(name, str):
            return False
        return name in self._builtins or name in self._added or name in self.entries()

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __getitem__(self, name: str) -> T:
        return self.get(name)

    def find(self, name: str) -> T | None:
        """:meth:`get`, or ``None`` for an unknown name."""
        return self.get(name) if name in self else None

    def get(self, name: str) -> T:
        """The object registered as ``name`` (imported on first use); an unknown name is a
        one-line error listing the known ones."""
        if name in self._loaded:
            return self._loaded[name]
        if name in self._added and name not in self._builtins:
            return self._added[name]
        entry = self.entries().get(name)
        if entry is None:
            known = ", ".join(self.names()) or "none"
            raise self._error(f"unknown {self.kind} {name!r}; known: {known}")
        item = self.load_target(entry.target, f"{self.kind} {name!r}")
        self._loaded[name] = item
        return item

    def load_target(self, target: str, what: str) -> T:
        """The object at ``target`` (``module:attribute``), checked to be of this kind."""
        found = import_target(target, what)
        return self._check(found, what) if self._check is not None else found

    def all(self) -> dict[str, T]:
        """Every entry loaded, by name (imports them all)."""
        return {name: self.get(name) for name in self.names()}
