"""``mcp``: the MCP server over stdio (needs the ``mcp`` extra).

The CLI loads this module by name, so it never imports the MCP front end; the SDK
loads inside the command (its import is slow: ``docs/benchmarks.md``).
"""

from __future__ import annotations

import logging
import sys

import click

from tasktool.model.extras import require
from tasktool.planning.repository import Invocation, serving_loader

__all__ = ["mcp_command"]


@click.command("mcp")
@click.pass_obj
def mcp_command(options: Invocation, /) -> None:
    """Serve the tasks to agents over MCP on stdin/stdout.

    Tools: list, get, next, set, add, validate, graph, tracks, search, worklog,
    archive, complete, board, stats; each takes the options of the command of the
    same name and returns JSON. Refuses to start when the config's next section is
    malformed. A failed tool call is one line on stderr (none with -q).
    """
    require("mcp")
    from tasktool.mcp.server import create_server
    from tasktool.mcp.stdin import cap_stdin

    load, repo = serving_loader(options.overrides(), options.warn)
    _one_line_logs(quiet=repo.config.quiet)
    server = create_server(load)
    cap_stdin(options.warn)
    server.run("stdio")


def _one_line_logs(*, quiet: bool) -> None:
    """The SDK's log records as one plain line each on stderr (its own set-up, a rich
    handler, wraps a failed tool call over several lines), and none below a warning when
    quiet. Set before the SDK's, which then leaves the root logger as it is."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("tasktool mcp: %(levelname)s %(message)s"))
    logging.basicConfig(level=logging.WARNING if quiet else logging.INFO, handlers=[handler])
