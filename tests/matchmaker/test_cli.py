"""The ``matchmaker`` command's surface in-process (Click's ``CliRunner``): a flag for every
setting, and bad arguments refused before the server starts (``tests/e2e`` runs the
process)."""

from __future__ import annotations

import ast
import dataclasses
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

import matchmaker
from matchmaker.cli import LIMIT_HELP, main
from matchmaker.config import Limits, ServerConfig


def test_every_setting_has_a_flag() -> None:
    helped = CliRunner().invoke(main, ["--help"], terminal_width=200)
    assert helped.exit_code == 0
    renamed = {"management_key": "--mgmt-key", "store_url": "--store"}
    renamed |= {"shutdown_grace_s": "--shutdown-grace", "limits": "--max-frame-bytes"}
    for field in dataclasses.fields(ServerConfig):
        flag = renamed.get(field.name, "--" + field.name.replace("_", "-"))
        assert flag in helped.output, field.name
    for field in dataclasses.fields(Limits):
        assert "--" + field.name.replace("_", "-") in helped.output, field.name
    assert set(LIMIT_HELP) == {field.name for field in dataclasses.fields(Limits)}
    assert "REALTIME_MGMT_KEY" in helped.output


def test_every_setting_is_read_somewhere() -> None:
    """No dead flags: each setting is read (as an attribute) outside config.py and cli.py."""
    read: set[str] = set()
    for path in Path(matchmaker.__file__).parent.rglob("*.py"):
        if path.name not in ("config.py", "cli.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            read |= {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    settings = {f.name for f in dataclasses.fields(ServerConfig)}
    settings |= {f.name for f in dataclasses.fields(Limits)}
    assert sorted(settings - read) == []


def test_invalid_limit_is_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["--max-session-members", "0"])
    assert result.exit_code == 2
    assert "--max-session-members" in result.output


def test_usage_errors_are_one_line_with_exit_2() -> None:
    result = CliRunner().invoke(main, ["--no-such-flag"], prog_name="matchmaker")
    assert result.exit_code == 2
    assert result.output.startswith("error: No such option")
    assert "--no-such-flag" in result.output
    assert result.output.endswith(" (see 'matchmaker --help') [usage]\n")
    assert result.output.count("\n") == 1
    empty_key = CliRunner().invoke(main, ["--management-key", ""])
    assert empty_key.exit_code == 2
    assert empty_key.output.startswith("error: Invalid value for --management-key: must not")
    assert empty_key.output.endswith("[usage]\n")
    assert empty_key.output.count("\n") == 1


def test_a_setting_that_cannot_work_is_one_coded_line_with_exit_1() -> None:
    result = CliRunner().invoke(main, ["--management-key", "k", "--store", "redis://x"])
    assert result.exit_code == 1
    assert result.output.startswith("error: unsupported store URL 'redis://x'")
    assert result.output.endswith(" [store.bad_url]\n")
    assert result.output.count("\n") == 1


@pytest.mark.parametrize(
    ("args", "env", "named"),
    [
        (["--port", "70000"], {}, "--port"),
        (["--port", "http"], {}, "--port"),
        (["--management-port", "-1"], {}, "--management-port"),
        (["--log-level", "loud"], {}, "--log-level"),
        (["--shutdown-grace", "-1"], {}, "--shutdown-grace"),
        (["--max-frame-bytes", "big"], {}, "--max-frame-bytes"),
        (["--management-key", ""], {}, "--management-key"),
        (["--no-such-flag"], {}, "--no-such-flag"),
        ([], {"MATCHMAKER_PORT": "http"}, "--port"),
        ([], {"MATCHMAKER_MAX_SESSION_MEMBERS": "0"}, "--max-session-members"),
    ],
)
def test_bad_arguments_and_environment_are_usage_errors(
    args: list[str], env: dict[str, str], named: str
) -> None:
    """Refused before anything is bound or opened: exit 2, the option named, no traceback."""
    clean: dict[str, str | None] = {n: None for n in os.environ if n.startswith("MATCHMAKER_")}
    # Should a case be accepted by mistake, the server it starts binds free ports only.
    clean |= {"REALTIME_MGMT_KEY": None, "MATCHMAKER_PORT": "0", "MATCHMAKER_MANAGEMENT_PORT": "0"}
    result = CliRunner().invoke(main, args, env={**clean, **env}, prog_name="matchmaker")
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()  # one coded line, no traceback
    assert line.startswith("error: ")
    assert named in line
    assert line.endswith("[usage]")


def test_version() -> None:
    result = CliRunner().invoke(main, ["--version"], prog_name="matchmaker")
    assert result.exit_code == 0
    assert result.stdout == f"matchmaker, version {matchmaker.__version__}\n"
