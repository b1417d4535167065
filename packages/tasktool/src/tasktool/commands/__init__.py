"""Click commands, one module per family, registered on the ``tasktool`` group."""

from __future__ import annotations

import click


def register(group: click.Group) -> None:
    """Add every command of this package to ``group``."""
    from tasktool.commands import config, edit, listing, manage, planning

    for module in (listing, edit, manage, config, planning):
        for command in module.COMMANDS:
            group.add_command(command)


__all__ = ["register"]
