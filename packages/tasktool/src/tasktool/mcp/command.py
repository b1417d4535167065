"""``mcp``: the MCP server over stdio (needs the ``mcp`` extra).

The CLI loads this module by name, so it never imports the MCP front end; the SDK
loads inside the command (its import is slow: ``docs/benchmarks.md``).
"""

from __future__ import annotations

import click

from tasktool.model.extras import require
from tasktool.planning.repository import Invocation, serving_loader

__all__ = ["mcp_command"]


@click.command("mcp")
@click.pass_obj
def mcp_command(options: Invocation, /) -> None:
    """Serve the tasks to agents over MCP on stdin/stdout.

    Tools: list, get, next, set, add, validate, graph, tracks; each takes the
    options of the command of the same name and returns JSON. Refuses to start
    when the config's next section is malformed.
    """
    require("mcp")
    from tasktool.mcp.server import create_server
    from tasktool.mcp.stdin import cap_stdin

    load, _repo = serving_loader(options.overrides(), options.warn)
    server = create_server(load)
    cap_stdin(options.warn)
    server.run("stdio")
