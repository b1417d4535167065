"""``mcp``: the MCP server over stdio (needs the ``mcp`` extra)."""

from __future__ import annotations

import click

from tasktool.commands.base import GlobalOptions, load_repository
from tasktool.errors import missing_extra
from tasktool.repository import loader


@click.command("mcp")
@click.pass_obj
def mcp_command(options: GlobalOptions, /) -> None:
    """Serve the tasks to agents over MCP on stdin/stdout.

    Tools: list, get, next, set, add, validate, graph, tracks; each takes the
    options of the command of the same name and returns JSON. Refuses to start
    when the config's next section is malformed.
    """
    try:
        from tasktool.mcp.server import create_server
    except ImportError as exc:
        raise missing_extra("mcp", exc) from None
    repo = load_repository(options)
    repo.config.require_next_config()
    create_server(loader(options.overrides())).run("stdio")
