"""The CLI run in-process for tests that work in the project folder (``in_project``)."""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner, Result

from tasktool.cli.main import main as cli


def run(*args: str, code: int = 0) -> Result:
    """``tasktool ARGS``; the exit status must be ``code``, and no traceback shown."""
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.stderr
    return result


def as_json(*args: str) -> Any:
    """``tasktool ARGS --format json``, decoded."""
    return json.loads(run(*args, "--format", "json").stdout)
