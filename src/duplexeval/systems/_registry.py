"""Finding systems: built-ins, the ``duplexeval.systems`` entry-point group, ``module:Class``.

A third-party package registers a system in its ``pyproject.toml``::

    [project.entry-points."duplexeval.systems"]
    mymodel = "mypackage.adapter:MyModelSystem"

and ``duplexeval run --system mymodel`` finds it; ``--system mypackage.adapter:MyModelSystem``
works without registration.
"""

from __future__ import annotations

from dataclasses import dataclass

from duplexeval._fileio import safe_name
from duplexeval.errors import DuplexevalError
from duplexeval.registry import Registry, subclass_of
from duplexeval.systems._base import System

__all__ = ["ENTRY_POINT_GROUP", "SYSTEMS", "SystemInfo", "available_systems", "load_system",
           "resolve_system_class"]

ENTRY_POINT_GROUP = "duplexeval.systems"
"""The entry-point group of systems (:data:`SYSTEMS`)."""

BUILTIN: dict[str, str] = {
    "silence": "duplexeval.systems.builtin._replay:SilenceSystem",
    "reference": "duplexeval.systems.builtin._replay:ReferenceSystem",
    "scripted": "duplexeval.systems.builtin._scripted:ScriptedSystem",
    "cascade": "duplexeval.systems.builtin.cascade:CascadeSystem",
    "moshi-ws": "duplexeval.systems.adapters.moshi_ws:MoshiWsSystem",
    "moshi": "duplexeval.systems.adapters.moshi_inproc:MoshiSystem",
    "personaplex": "duplexeval.systems.adapters.personaplex_inproc:PersonaPlexSystem",
    "command": "duplexeval.systems.adapters._command:CommandSystem",
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


SYSTEMS: Registry[type[System]] = Registry(
    "system", "systems", BUILTIN, subclass_of(System, "duplexeval System"))
"""The system registry (:class:`~duplexeval.registry.Registry`, entry-point group
``duplexeval.systems``)."""


def available_systems() -> dict[str, SystemInfo]:
    """Built-ins plus every entry point of the ``duplexeval.systems`` group (by name)."""
    return {e.name: SystemInfo(e.name, e.target, e.origin) for e in SYSTEMS.entries().values()}


def resolve_system_class(name: str) -> type[System]:
    """The class for a system name or ``module:Class``; unknown names list the valid ones."""
    if ":" in name:
        return SYSTEMS.load_target(name, f"--system {name!r}")
    return SYSTEMS.get(name)


def load_system(name: str, args: dict[str, str] | None = None) -> System:
    """Instantiate a system with its ``--system-arg`` values; a system whose ``name`` is not a
    safe file name (:func:`~duplexeval._fileio.safe_name`) is refused."""
    cls = resolve_system_class(name)
    try:
        system = cls(**(args or {}))
    except (TypeError, ValueError) as exc:
        raise DuplexevalError(f"system {name!r}: {exc}") from None
    # the system's name names run folders (runs/NAME-PROTOCOL) and appears in their files
    safe_name(system.name, f"--system {name!r}: system name")
    return system
