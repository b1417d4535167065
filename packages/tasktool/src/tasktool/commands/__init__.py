"""Click commands, one module per family, loaded only when invoked.

``COMMANDS`` maps each command name to ``"module:attribute"``; the group in
:mod:`tasktool.cli` imports a command's module the first time it is asked for
it, so ``tasktool list`` never imports the writers, ruamel or rich.
"""

from __future__ import annotations

COMMANDS: dict[str, str] = {
    "list": "tasktool.commands.listing:list_command",
    "get": "tasktool.commands.listing:get_command",
    "add": "tasktool.commands.edit:add_command",
    "set": "tasktool.commands.edit:set_command",
    "rm": "tasktool.commands.manage:rm_command",
    "archive": "tasktool.commands.manage:archive_command",
    "next-id": "tasktool.commands.manage:next_id_command",
    "deduplicate": "tasktool.commands.manage:deduplicate_command",
    "init": "tasktool.commands.config:init_command",
    "config": "tasktool.commands.config:config_group",
    "next": "tasktool.commands.planning:next_command",
    "tracks": "tasktool.commands.planning:tracks_command",
    "board": "tasktool.commands.planning:board_command",
    "stats": "tasktool.commands.planning:stats_command",
    "graph": "tasktool.commands.planning:graph_command",
    "todos": "tasktool.commands.upkeep:todos_command",
    "validate": "tasktool.commands.upkeep:validate_command",
    "worklog": "tasktool.commands.upkeep:worklog_command",
    "web": "tasktool.commands.web:web_group",
    "mcp": "tasktool.commands.mcp:mcp_command",
}

__all__ = ["COMMANDS"]
