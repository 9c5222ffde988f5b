"""Finding systems: built-ins, the ``duplexeval.systems`` entry-point group, ``module:Class``.

A third-party package registers a system in its ``pyproject.toml``::

    [project.entry-points."duplexeval.systems"]
    mymodel = "mypackage.adapter:MyModelSystem"

and ``duplexeval run --system mymodel`` finds it; ``--system mypackage.adapter:MyModelSystem``
works without registration.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from importlib.metadata import entry_points

from duplexeval.errors import DuplexevalError
from duplexeval.fileio import safe_name
from duplexeval.systems.base import System

__all__ = ["ENTRY_POINT_GROUP", "SystemInfo", "available_systems", "load_system",
           "resolve_system_class"]

ENTRY_POINT_GROUP = "duplexeval.systems"

BUILTIN: dict[str, str] = {
    "silence": "duplexeval.systems.builtin.replay:SilenceSystem",
    "reference": "duplexeval.systems.builtin.replay:ReferenceSystem",
    "scripted": "duplexeval.systems.builtin.scripted:ScriptedSystem",
    "cascade": "duplexeval.systems.builtin.cascade:CascadeSystem",
    "moshi-ws": "duplexeval.systems.adapters.moshi_ws:MoshiWsSystem",
    "moshi": "duplexeval.systems.adapters.moshi_inproc:MoshiSystem",
    "personaplex": "duplexeval.systems.adapters.personaplex_inproc:PersonaPlexSystem",
    "command": "duplexeval.systems.adapters.command:CommandSystem",
    "openai-realtime": "duplexeval.systems.adapters.openai_realtime:OpenAIRealtimeSystem",
    "duplexcascade": "duplexeval.systems.adapters.duplexcascade:DuplexCascadeSystem",
    "freeze-omni": "duplexeval.systems.adapters.freeze_omni:FreezeOmniSystem",
    "bayling-duplex": "duplexeval.systems.adapters.bayling:BayLingDuplexSystem",
    "vllm-omni-duplex": "duplexeval.systems.adapters.vllm_omni:VllmOmniDuplexSystem",
    "gemini-live": "duplexeval.systems.adapters.gemini_live:GeminiLiveSystem",
}


@dataclass(frozen=True)
class SystemInfo:
    """A system that can be named on the command line."""

    name: str
    target: str
    """``module:Class``."""
    origin: str
    """``builtin`` or the distribution that registered it."""


def available_systems() -> dict[str, SystemInfo]:
    """Built-ins plus every entry point of the ``duplexeval.systems`` group (by name)."""
    found = {name: SystemInfo(name, target, "builtin") for name, target in BUILTIN.items()}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in found:
            continue
        origin = ep.dist.name if ep.dist is not None else "entry point"
        found[ep.name] = SystemInfo(ep.name, ep.value, origin)
    return dict(sorted(found.items()))


def _import(target: str) -> type[System]:
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise DuplexevalError(f"--system {target!r}: expected NAME or module:Class")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise DuplexevalError(f"--system {target!r}: cannot import {module_name} ({exc})") \
            from None
    cls = getattr(module, attr, None)
    if not (isinstance(cls, type) and issubclass(cls, System)):
        raise DuplexevalError(f"--system {target!r}: {attr} is not a duplexeval System class")
    return cls


def resolve_system_class(name: str) -> type[System]:
    """The class for a system name or ``module:Class``; unknown names list the valid ones."""
    if ":" in name:
        return _import(name)
    systems = available_systems()
    if name not in systems:
        raise DuplexevalError(f"unknown system {name!r}; available: {', '.join(systems)}")
    return _import(systems[name].target)


def load_system(name: str, args: dict[str, str] | None = None) -> System:
    """Instantiate a system with its ``--system-arg`` values; a system whose ``name`` is not a
    safe file name (:func:`~duplexeval.fileio.safe_name`) is refused."""
    cls = resolve_system_class(name)
    try:
        system = cls(**(args or {}))
    except (TypeError, ValueError) as exc:
        raise DuplexevalError(f"system {name!r}: {exc}") from None
    # the system's name names run folders (runs/NAME-PROTOCOL) and appears in their files
    safe_name(system.name, f"--system {name!r}: system name")
    return system
