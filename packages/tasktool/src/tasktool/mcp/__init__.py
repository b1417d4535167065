"""The MCP server: tasktool's commands as tools for agents, over stdio (``tasktool mcp``).

Needs the ``mcp`` extra (the official SDK, version 2); it is imported only by
:mod:`tasktool.mcp.server`, which only ``tasktool mcp`` loads.
"""

__all__ = []
