"""The ``matchmaker`` command's surface: a flag for every setting, subcommands beside the server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from matchmaker.cli import main
from matchmaker.settings import GROUPS, OPTIONS


def test_every_option_has_a_flag_in_its_help_group() -> None:
    helped = CliRunner().invoke(main, ["--help"], terminal_width=200)
    assert helped.exit_code == 0
    sections = {group: helped.output.index(f"\n{group}:\n") for group in GROUPS}
    assert list(sections.values()) == sorted(sections.values())
    for option in OPTIONS:
        at = helped.output.index(f"  {option.flag}")
        following = [i for i in sections.values() if i > sections[option.group]]
        assert sections[option.group] < at < min(following, default=len(helped.output))
        assert option.env in helped.output
    assert "REALTIME_MGMT_KEY" in helped.output
    assert "Commands:\n  admin" in helped.output


def test_invalid_limit_is_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["--max-session-members", "0"])
    assert result.exit_code == 2
    assert "--max-session-members" in result.output


def test_config_show_names_each_source_and_redacts_secrets(tmp_path: Path) -> None:
    path = tmp_path / "mm.yaml"
    path.write_text("port: 9000\nstore: postgresql://mm:hunter2@db.example/mm\n")
    env = {
        "MATCHMAKER_CONFIG": str(path),
        "MATCHMAKER_MANAGEMENT_KEY": "the-key-itself",
        "MATCHMAKER_PORTT": "1",
    }
    result = CliRunner().invoke(main, ["--entry-ttl-ms", "5", "config", "show"], env=env)
    assert result.exit_code == 0, result.output
    lines = {line.split()[0]: line for line in result.stdout.splitlines()}
    assert lines["port"].split()[1:] == ["9000", "file", f"{path}:1"]
    assert lines["management_key"].split()[1:] == ["***", "env", "MATCHMAKER_MANAGEMENT_KEY"]
    assert "mm:***@db.example/mm" in lines["store"]
    assert lines["entry_ttl_ms"].split()[1:] == ["5", "flag", "--entry-ttl-ms"]
    assert lines["host"].split()[1:] == ["127.0.0.1", "default"]
    assert "the-key-itself" not in result.output
    assert "hunter2" not in result.output
    assert "did you mean MATCHMAKER_PORT?" in result.stderr
    as_json = CliRunner().invoke(main, ["config", "show", "--format", "json"], env=env)
    rows = {row["key"]: row for row in json.loads(as_json.stdout)["settings"]}
    assert rows["port"] == {"key": "port", "value": 9000, "source": f"file {path}:1"}


def test_a_bad_config_file_stops_with_the_key_and_line(tmp_path: Path) -> None:
    path = tmp_path / "mm.yaml"
    path.write_text("port: 1\nstroe: memory://\n")
    for args in (["--config", str(path)], ["--config", str(path), "config", "show"]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 2
        assert f"{path}:2: unknown setting 'stroe' (did you mean store?)" in result.stderr
        assert "[config.unknown_key]" in result.stderr


@pytest.mark.parametrize("args", [["config"], ["admin"], ["admin", "projects"]])
def test_command_groups_list_their_commands(args: list[str]) -> None:
    result = CliRunner().invoke(main, [*args, "--help"])
    assert result.exit_code == 0
    assert "Commands:" in result.output
