"""No concrete class in the matchmaker's core/ or cluster/ exists only to be extended by
one other: composition, not class chains (issue 41).

A class that one other class extends and nobody else uses is one object split over two
files: a reader must hold the whole chain to know what ``self.x`` is. Hand the state to
collaborators instead (``core.engine.Matchmaker`` holds a ``Tables`` and a ``Sessions``
on it, as ``cluster.routing.Router`` holds ``Routes`` and its collaborators).

Kinds that are bases by nature are allowed: Protocols, exceptions, msgspec Structs
(the wire's and the notes' value types) and Enums; a value base beyond those is named in
:data:`ALLOWED` with the reason."""

from __future__ import annotations

import enum
import importlib
import inspect
import pkgutil
from types import ModuleType

import msgspec

import matchmaker

CHECKED = ("matchmaker.core.", "matchmaker.cluster.")

#: ``module.Class`` -> why one subclass is fine for it (none today).
ALLOWED: dict[str, str] = {}


def _modules() -> list[ModuleType]:
    names = [m.name for m in pkgutil.walk_packages(matchmaker.__path__, "matchmaker.")]
    return [importlib.import_module(name) for name in names if not name.endswith("__main__")]


def _exempt(cls: type) -> bool:
    return (
        bool(getattr(cls, "_is_protocol", False))
        or issubclass(cls, (BaseException, msgspec.Struct, enum.Enum))
        or f"{cls.__module__}.{cls.__qualname__}" in ALLOWED
    )


def _chains() -> list[str]:
    """``base -> its only subclass`` for each concrete class of core/ or cluster/ that
    exactly one class of the product extends."""
    found = []
    for module in _modules():
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__ or not cls.__module__.startswith(CHECKED):
                continue
            subclasses = [s for s in cls.__subclasses__() if s.__module__.startswith("matchmaker.")]
            if len(subclasses) == 1 and not _exempt(cls):
                only = subclasses[0]
                found.append(
                    f"{cls.__module__}.{cls.__qualname__} -> {only.__module__}.{only.__qualname__}"
                )
    return found


def test_no_concrete_class_is_extended_by_exactly_one_other() -> None:
    assert _chains() == []


def test_the_walk_reaches_core_and_cluster() -> None:
    """The walk finds classes defined in core/ (else the check above passes vacuously)."""
    seen = {
        cls.__qualname__
        for module in _modules()
        if module.__name__.startswith(CHECKED)
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if cls.__module__ == module.__name__
    }
    assert {"Matchmaker", "Sessions", "Tables", "Router", "Routes"} <= seen
