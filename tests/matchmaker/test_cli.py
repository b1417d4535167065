"""The ``matchmaker`` command's surface: a flag for every setting."""

from __future__ import annotations

import dataclasses

from click.testing import CliRunner

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
