"""The ``matchmaker`` command's surface in-process (Click's ``CliRunner``): a flag for every
setting, and bad arguments refused before the server starts (``tests/e2e`` runs the
process)."""

from __future__ import annotations

import dataclasses
import os

import pytest
from click.testing import CliRunner

from matchmaker import __version__
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


def test_invalid_limit_is_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["--max-session-members", "0"])
    assert result.exit_code == 2
    assert "--max-session-members" in result.output


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
    assert named in result.stderr
    assert "Traceback" not in result.output
    assert result.stderr.startswith("Usage: matchmaker [OPTIONS]")


def test_version() -> None:
    result = CliRunner().invoke(main, ["--version"], prog_name="matchmaker")
    assert result.exit_code == 0
    assert result.stdout == f"matchmaker, version {__version__}\n"
