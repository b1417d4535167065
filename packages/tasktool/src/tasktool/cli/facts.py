"""What the command line needs to know about a command before running it, kept on the
command: ``@facts(paged=True)`` above ``@click.command`` writes it there, and
:func:`facts_of` reads it. Adding a command is one place to say it, not a set of names to
remember in each module that asks (the pager, ``--all-projects``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click
import msgspec

__all__ = ["CommandFacts", "facts", "facts_of"]

C = TypeVar("C", bound=click.Command)

_ATTRIBUTE = "tasktool_facts"


class CommandFacts(msgspec.Struct, frozen=True, kw_only=True):
    """A command's facts; a command without ``@facts`` has none of them."""

    #: Output may be long: on a terminal it goes through the pager (:mod:`tasktool.cli.pager`).
    paged: bool = False
    #: Aggregates every registered project under ``--all-projects``; any other command
    #: refuses the flag rather than ignore it (``add`` would write here).
    all_projects: bool = False
    #: Only reads and prints: after it nothing is left to do but exit, so a one-shot
    #: process may end at once (:meth:`tasktool.cli.oneshot.Process.end`).
    reads: bool = False


def facts(
    *, paged: bool = False, all_projects: bool = False, reads: bool = False
) -> Callable[[C], C]:
    """Say these facts of the command below (a ``click.Command`` or group)."""

    def attach(command: C) -> C:
        setattr(
            command, _ATTRIBUTE, CommandFacts(paged=paged, all_projects=all_projects, reads=reads)
        )
        return command

    return attach


def facts_of(command: click.Command | None) -> CommandFacts:
    """The facts said of ``command`` (none for ``None`` or a command without any)."""
    found = getattr(command, _ATTRIBUTE, None)
    return found if isinstance(found, CommandFacts) else CommandFacts()
