"""Optional dependencies, checked where a command starts rather than where they are used.

A command that needs an extra calls :func:`require` first: every module it will import
later (``watchfiles`` only once the server runs, ``httpx`` only once a source is fetched)
is imported up front, so a partial install (starlette and hypercorn from another package,
no watchfiles) stops at once with ``tasktool.missing_extra`` naming what to install,
instead of failing half-way, or hanging with a bound port::

    require("web")                       # web start: starlette, hypercorn, watchfiles
    require("web", "starlette")          # web export renders pages, serves nothing
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from tasktool.model.errors import TaskToolError

__all__ = ["EXTRAS", "missing_extra", "require"]

#: Each extra (or ``core``: tasktool's own dependencies) and the modules it brings.
EXTRAS: Mapping[str, tuple[str, ...]] = {
    "web": ("starlette", "hypercorn", "watchfiles"),
    "mcp": ("mcp",),
    "sync": ("httpx",),
    "completion": ("click.shell_completion",),
}

#: The extra a user installs for each entry of :data:`EXTRAS` (``None``: tasktool itself).
_INSTALLED_BY: Mapping[str, str | None] = {
    "web": "web",
    "mcp": "mcp",
    "sync": None,
    "completion": None,
}


def missing_extra(extra: str, error: ImportError) -> TaskToolError:
    """The coded error for a command whose optional dependencies are not installed.

    The hint is the README's install line (a checkout's ``./packages/tasktool``), and the
    index name beside it for an installed release.
    """
    name = error.name or str(error)
    wanted = _INSTALLED_BY.get(extra, extra)
    if wanted is None:
        return TaskToolError(
            f"this command needs {name}, a dependency of tasktool that is not installed: "
            "pip install './packages/tasktool' (or 'tasktool')",
            code="tasktool.missing_extra",
        )
    return TaskToolError(
        f"this command needs the {wanted!r} extra ({name} is not installed): "
        f"pip install './packages/tasktool[{wanted}]' (or 'tasktool[{wanted}]')",
        code="tasktool.missing_extra",
    )


def require(extra: str, *modules: str) -> None:
    """Import ``modules`` (default: all of ``extra``'s), or raise ``tasktool.missing_extra``."""
    for module in modules or EXTRAS[extra]:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise missing_extra(extra, exc) from None
