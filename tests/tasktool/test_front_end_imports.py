"""The web and MCP front ends load their libraries only inside their commands."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
from click.testing import CliRunner
from tasktool.cli.main import main
result = CliRunner().invoke(main, ["--help"])
assert result.exit_code == 0, result.output
assert "web" in result.output and "mcp" in result.output, result.output
for name in ("web", "mcp"):
    assert CliRunner().invoke(main, [name, "--help"]).exit_code == 0
heavy = {"mcp", "starlette", "hypercorn", "watchfiles", "pydantic", "uvicorn"}
print(sorted(heavy & set(sys.modules)))
"""


def test_help_of_every_command_loads_no_server_library() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"
