"""The ``matchmaker`` command's surface: a flag for every setting."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

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
