"""Precedence flag > environment > file > default, and errors that name the culprit."""

from __future__ import annotations

from pathlib import Path

import pytest

from matchmaker.config import Limits, ServerConfig
from matchmaker.configure import ConfigError, resolve
from matchmaker.configure.resolve import liveness_warnings


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "matchmaker.yaml"
    path.write_text(text)
    return str(path)


def test_nothing_given_is_the_defaults() -> None:
    effective = resolve({}, {})
    assert effective.config == ServerConfig()
    assert set(effective.origins.values()) == {"default"}
    assert effective.warnings == ()


def test_flag_beats_environment_beats_file_beats_default(tmp_path: Path) -> None:
    path = write(tmp_path, "port: 1001\nmanagement-port: 1002\nhost: ::1\nentry_ttl_ms: 5\n")
    env = {"MATCHMAKER_PORT": "2001", "MATCHMAKER_MANAGEMENT_PORT": "2002"}
    effective = resolve({"port": 3001}, env, path)
    config = effective.config
    assert (config.port, config.management_port, config.host) == (3001, 2002, "::1")
    assert config.limits.entry_ttl_ms == 5
    assert config.shutdown_grace_s == ServerConfig().shutdown_grace_s
    assert effective.origins["port"] == "flag --port"
    assert effective.origins["management_port"] == "env MATCHMAKER_MANAGEMENT_PORT"
    assert effective.origins["host"] == f"file {path}:3"
    assert effective.origins["limits.entry_ttl_ms"] == f"file {path}:4"
    assert effective.origins["shutdown_grace_s"] == "default"


def test_the_documented_store_variable_is_read() -> None:
    effective = resolve({}, {"MATCHMAKER_STORE": "memory://"})
    assert effective.config.store_url == "memory://"


def test_the_config_file_may_come_from_the_environment(tmp_path: Path) -> None:
    path = write(tmp_path, "store: memory://\nmax_policies_per_project: 3\n")
    config = resolve({}, {"MATCHMAKER_CONFIG": path}).config
    assert config.store_url == "memory://"
    assert config.control.max_policies_per_project == 3


def test_unknown_variables_are_warned_about_with_the_closest_name() -> None:
    effective = resolve({}, {"MATCHMAKER_STORE_URL": "memory://", "OTHER": "x"})
    assert effective.config.store_url is None
    assert effective.warnings == (
        "unknown environment variable MATCHMAKER_STORE_URL is ignored "
        "(did you mean MATCHMAKER_STORE?)",
    )


@pytest.mark.parametrize(
    ("text", "code", "words"),
    [
        (
            "port: 1\nmanagment_port: 2\n",
            "config.unknown_key",
            [":2:", "'managment_port'", "did you mean management_port"],
        ),
        ("port: 1\nport: 2\n", "yaml.duplicate_key", [":2:"]),
        ("port: 1\n\nmax_frame_bytes: 0\n", "config.invalid", [":3:", "max_frame_bytes", ">= 1"]),
        ("port: eighty\n", "config.invalid", [":1:", "port", "'eighty'"]),
        ("port: true\n", "config.invalid", [":1:", "port"]),
        ("port: 1\nmanagement-port: 2\nmanagement_port: 3\n", "config.invalid", [":3:", "line 2"]),
        ("- port\n", "config.invalid", ["mapping"]),
        ("port: [1\n", "yaml.syntax", [":2:"]),
        ("management_key: 12\n", "config.invalid", [":1:", "***"]),
    ],
)
def test_bad_files_name_the_key_and_line(
    tmp_path: Path, text: str, code: str, words: list[str]
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        resolve({}, {}, path)
    assert caught.value.code == code
    for word in words:
        assert word in caught.value.message


def test_a_missing_file_is_unreadable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        resolve({}, {}, str(tmp_path / "absent.yaml"))
    assert caught.value.code == "config.unreadable"


def test_bad_environment_values_name_the_variable_and_hide_secrets() -> None:
    with pytest.raises(ConfigError) as caught:
        resolve({}, {"MATCHMAKER_SHUTDOWN_GRACE": "-1"})
    assert "MATCHMAKER_SHUTDOWN_GRACE" in caught.value.message
    with pytest.raises(ConfigError) as caught:
        resolve({}, {"REALTIME_MGMT_KEY": ""})
    assert "REALTIME_MGMT_KEY" in caught.value.message


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('port: "8080"\n', "port"),
        ("host: ::1\nrequire_declared_projects: 'yes'\n", "require_declared_projects"),
        ('body_timeout_s: "5"\n', "body_timeout_s"),
        ("max_session_members: '16'\n", "max_session_members"),
        ("require_declared_projects: 1\n", "require_declared_projects"),
        ("shutdown_grace: false\n", "shutdown_grace"),
    ],
)
def test_config_file_values_are_typed_yaml(tmp_path: Path, text: str, key: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        resolve({}, {}, path)
    assert caught.value.code == "config.invalid"
    line = text.count("\n")
    assert caught.value.message.startswith(f"{path}:{line}: {key} must be ")


def test_typed_values_and_text_from_the_environment_still_parse(tmp_path: Path) -> None:
    path = write(tmp_path, "port: 8080\nrequire_declared_projects: true\nbody_timeout_s: 5\n")
    config = resolve({}, {"MATCHMAKER_MANAGEMENT_PORT": "9000"}, path).config
    assert (config.port, config.require_declared_projects) == (8080, True)
    assert config.control.body_timeout_s == 5.0
    assert config.management_port == 9000


@pytest.mark.parametrize(
    ("text", "env", "words"),
    [
        (
            "heartbeat_timeout_ms: 4000\n",
            {},
            [":1: heartbeat_timeout_ms (4000", "(5000, default)"],
        ),
        (
            "port: 1\nheartbeat_interval_ms: 20000\n",
            {},
            ["heartbeat_timeout_ms (15000, default)", "(20000, file ", ":2)"],
        ),
        ("", {"MATCHMAKER_HEARTBEAT_TIMEOUT_MS": "5000"}, ["env MATCHMAKER_HEARTBEAT_TIMEOUT_MS"]),
    ],
)
def test_a_heartbeat_timeout_not_above_the_interval_is_refused(
    tmp_path: Path, text: str, env: dict[str, str], words: list[str]
) -> None:
    with pytest.raises(ConfigError) as caught:
        resolve({}, env, write(tmp_path, text))
    assert caught.value.code == "config.invalid"
    for word in words:
        assert word in caught.value.message


def test_by_default_a_half_open_connection_is_noticed_well_inside_the_resume_grace() -> None:
    """The heartbeat finds a silently dead connection (timeout, checked every quarter
    interval) within half the grace: its peers see it away early, and it has most of the
    grace left to come back (docs/operations.md, "Tuning for realtime games")."""
    limits = Limits()
    noticed_ms = limits.heartbeat_timeout_ms + limits.heartbeat_interval_ms / 4
    assert noticed_ms <= limits.resume_grace_ms * 0.6
    assert liveness_warnings(ServerConfig()) == []


def test_a_heartbeat_timeout_not_below_the_grace_is_warned_about() -> None:
    effective = resolve({"limits.resume_grace_ms": 15_000}, {})
    (warning,) = effective.warnings
    assert "heartbeat_timeout_ms (15000) is not below resume_grace_ms (15000)" in warning
    assert resolve({"limits.resume_grace_ms": 15_001}, {}).warnings == ()
