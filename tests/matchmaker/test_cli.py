"""The ``matchmaker`` command's surface in-process (Click's ``CliRunner``): a flag for every
setting, and bad arguments refused before the server starts (``tests/e2e`` runs the
process)."""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

import matchmaker
from matchmaker.cli import main
from matchmaker.config import ControlLimits, Limits, ServerConfig
from matchmaker.configure import GROUPS, OPTIONS


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


def test_every_config_field_is_read_somewhere() -> None:
    """No dead flags: each config field is read (as an attribute) outside config.py and cli.py."""
    read: set[str] = set()
    for path in Path(matchmaker.__file__).parent.rglob("*.py"):
        if path.name not in ("config.py", "cli.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            read |= {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    fields = {f.name for f in dataclasses.fields(ServerConfig)}
    fields |= {f.name for f in dataclasses.fields(Limits)}
    fields |= {f.name for f in dataclasses.fields(ControlLimits)}
    assert sorted(fields - read) == []


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
    assert empty_key.output.startswith("error: Invalid value for '--management-key'")
    assert "must be a non-empty string" in empty_key.output
    assert empty_key.output.endswith("[usage]\n")
    assert empty_key.output.count("\n") == 1
    in_subcommand = CliRunner().invoke(main, ["config", "show", "--format", "xml"])
    assert in_subcommand.exit_code == 2
    assert in_subcommand.output.count("\n") == 1


def test_a_setting_that_cannot_work_is_one_coded_line_with_exit_1() -> None:
    result = CliRunner().invoke(main, ["--management-key", "k", "--store", "redis://x"])
    assert result.exit_code == 1
    assert result.output.startswith("error: unsupported store URL 'redis://x'")
    assert result.output.endswith(" [store.bad_url]\n")
    assert result.output.count("\n") == 1


@pytest.mark.parametrize(
    ("args", "env", "named", "code"),
    [
        (["--port", "70000"], {}, "--port", "usage"),
        (["--port", "http"], {}, "--port", "usage"),
        (["--management-port", "-1"], {}, "--management-port", "usage"),
        (["--log-level", "loud"], {}, "--log-level", "usage"),
        (["--shutdown-grace", "-1"], {}, "--shutdown-grace", "usage"),
        (["--max-frame-bytes", "big"], {}, "--max-frame-bytes", "usage"),
        (["--management-key", ""], {}, "--management-key", "usage"),
        (["--no-such-flag"], {}, "--no-such-flag", "usage"),
        ([], {"MATCHMAKER_PORT": "http"}, "MATCHMAKER_PORT", "config.invalid"),
        (
            [],
            {"MATCHMAKER_MAX_SESSION_MEMBERS": "0"},
            "MATCHMAKER_MAX_SESSION_MEMBERS",
            "config.invalid",
        ),
    ],
)
def test_bad_arguments_and_environment_are_usage_errors(
    args: list[str], env: dict[str, str], named: str, code: str
) -> None:
    """Refused before anything is bound or opened: exit 2, the option or variable named."""
    clean: dict[str, str | None] = {n: None for n in os.environ if n.startswith("MATCHMAKER_")}
    # Should a case be accepted by mistake, the server it starts binds free ports only.
    clean |= {"REALTIME_MGMT_KEY": None, "MATCHMAKER_PORT": "0", "MATCHMAKER_MANAGEMENT_PORT": "0"}
    result = CliRunner().invoke(main, args, env={**clean, **env}, prog_name="matchmaker")
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()  # one coded line, no traceback
    assert line.startswith("error: ")
    assert named in line
    assert line.endswith(f"[{code}]")


def test_version() -> None:
    result = CliRunner().invoke(main, ["--version"], prog_name="matchmaker")
    assert result.exit_code == 0
    assert result.stdout == f"matchmaker, version {matchmaker.__version__}\n"


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


def test_config_show_names_the_server_auto_picks() -> None:
    picked = "picows" if importlib.util.find_spec("picows") is not None else "hypercorn"
    result = CliRunner().invoke(main, ["config", "show"], env={"MATCHMAKER_CONFIG": ""})
    line = next(line for line in result.stdout.splitlines() if line.startswith("server "))
    assert line.split()[1:3] == ["auto", f"({picked})"]
    as_json = CliRunner().invoke(main, ["config", "show", "--format", "json"])
    rows = {row["key"]: row for row in json.loads(as_json.stdout)["settings"]}
    assert rows["server"]["chosen"] == picked
    named = CliRunner().invoke(main, ["--server", "hypercorn", "config", "show"])
    assert "(" not in next(line for line in named.stdout.splitlines() if line.startswith("server "))
