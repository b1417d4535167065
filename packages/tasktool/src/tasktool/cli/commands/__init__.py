"""Click commands, one module per family, loaded only when invoked.

``COMMANDS`` maps each command name to ``"module:attribute"``; the group in
:mod:`tasktool.cli.main` imports a command's module the first time it is asked for
it, so ``tasktool list`` never imports the writers.
"""

from __future__ import annotations

COMMANDS: dict[str, str] = {
    "list": "tasktool.cli.commands.listing:list_command",
    "get": "tasktool.cli.commands.listing:get_command",
    "add": "tasktool.cli.commands.edit:add_command",
    "set": "tasktool.cli.commands.edit:set_command",
    "rm": "tasktool.cli.commands.manage:rm_command",
    "archive": "tasktool.cli.commands.manage:archive_command",
    "next-id": "tasktool.cli.commands.manage:next_id_command",
    "deduplicate": "tasktool.cli.commands.manage:deduplicate_command",
    "init": "tasktool.cli.commands.config:init_command",
    "config": "tasktool.cli.commands.config:config_group",
    "next": "tasktool.cli.commands.planning:next_command",
    "tracks": "tasktool.cli.commands.planning:tracks_command",
    "board": "tasktool.cli.commands.overview:board_command",
    "stats": "tasktool.cli.commands.overview:stats_command",
    "graph": "tasktool.cli.commands.graph:graph_command",
    "todos": "tasktool.cli.commands.upkeep:todos_command",
    "validate": "tasktool.cli.commands.upkeep:validate_command",
    "worklog": "tasktool.cli.commands.upkeep:worklog_command",
    "completion": "tasktool.cli.commands.shell:completion_command",
    "search": "tasktool.cli.commands.browse:search_command",
    "tags": "tasktool.cli.commands.browse:tags_command",
    "restore": "tasktool.cli.commands.manage:restore_command",
    "edit": "tasktool.cli.commands.edit:edit_command",
    "projects": "tasktool.cli.commands.projects:projects_group",
    # Front ends own their commands; named here, never imported (front ends are independent).
    "sync": "tasktool.sync.command:sync_command",
    # Front ends beside the CLI: named, never imported here (they need extras).
    "web": "tasktool.web.command:web_group",
    "mcp": "tasktool.mcp.command:mcp_command",
}

__all__ = ["COMMANDS"]
