"""Lazy public names for a package's ``__init__``: ``import matchmaker`` stays cheap.

A package lists its public names and the module each lives in; the module is
imported on first attribute access (PEP 562 module ``__getattr__``), so
``import matchmaker`` loads no server library until ``matchmaker.serve`` is used::

    __getattr__, __dir__ = lazy_exports(__name__, {"serve": ".running"})
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, whose ``exports`` maps each lazy
    public name to the module defining it (under the same name), relative to ``package``
    (``.running``), so the names read as modules, not as dotted error codes."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)  # the next access skips __getattr__
        return value

    def __dir__() -> list[str]:
        """The public API and the module's dunders (not its plumbing, nor loaded submodules)."""
        module = sys.modules[package]
        dunders = (name for name in vars(module) if name.startswith("__"))
        return sorted({*getattr(module, "__all__", exports), *dunders})

    return __getattr__, __dir__
