"""The ``sync.sources`` entries: kind inference and the errors of a bad entry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tasktool.cli.main import main
from tasktool.config import load_config
from tasktool.config.sync import infer_kind, parse_sources, read_credentials
from tasktool.model.errors import TaskToolError


def entry(**fields: Any) -> dict[str, Any]:
    return {"output_dir": "tasks/x", "project": "acme/widgets", **fields}


JIRA = {"project": "PROJ", "user_env": "U", "token_env": "T", "output_dir": "tasks/j"}


@pytest.mark.parametrize(
    ("fields", "kind"),
    [
        ({"name": "github"}, "github"),
        ({"name": "GitHub-main"}, "github"),
        ({"name": "jira"}, "jira"),
        ({"name": "work-jira"}, "jira"),
        ({"name": "tickets", "base_url": "https://acme.atlassian.net"}, "jira"),
        ({"name": "issues", "base_url": "https://api.github.com"}, "github"),
        ({"name": "upstream", "base_url": "https://github.acme.com/api/v3"}, "github"),
        ({"name": "jira", "type": "github"}, "github"),  # the explicit type wins
        ({"name": "github-to-jira", "base_url": "https://acme.atlassian.net"}, "jira"),
    ],
)
def test_kind(fields: dict[str, Any], kind: str) -> None:
    assert infer_kind(fields, "label") == kind


def test_unclassifiable_entry_names_it() -> None:
    with pytest.raises(TaskToolError) as caught:
        parse_sources({"sources": [entry(name="tracker", base_url="https://t.example")]}, "/r")
    assert caught.value.code == "sync.config.type"
    assert "sync source 'tracker': cannot tell whether it is a github or a jira source" in (
        caught.value.message
    )


def test_paths_and_defaults() -> None:
    (source,) = parse_sources({"sources": [entry(name="github")]}, "/repo")
    assert source.output_dir == "/repo/tasks/x"
    assert source.base_url == "https://api.github.com"
    assert source.token_env is None


@pytest.mark.parametrize(
    ("sources", "code", "words"),
    [
        ([entry(name="x", type="gitlab")], "sync.config.type", "type must be github or jira"),
        ([{"name": "github", "project": "a/b"}], "sync.config.missing", "output_dir is required"),
        ([entry()], "sync.config.missing", "name is required"),
        ([entry(name="github", project="widgets")], "sync.config.project", "owner/repository"),
        (
            [{"name": "jira", "project": "PROJ", "output_dir": "t"}],
            "sync.config.missing",
            "a jira source needs base_url, user_env, token_env",
        ),
        (
            [{**JIRA, "name": "jira", "base_url": "http://jira.example"}],
            "sync.config.base_url",
            "plain http",
        ),
        ([entry(name="github", token_env="not a name")], "sync.config.value", "environment"),
        ([entry(name="github", fitlers={})], "sync.config.unknown_key", "'fitlers'"),
        ([entry(name="github", filters={"jql": "x"})], "sync.config.unknown_key", "'jql'"),
        ([entry(name="github", filters={"state": "merged"})], "sync.config.filters", "state"),
        (
            [entry(name="github", field_map={"status": {"open": "todo"}})],
            "sync.config.field_map",
            "expected one of: pending, blocked",
        ),
        (
            [entry(name="github", field_map={"labels_to_tags": "yes"})],
            "sync.config.field_map",
            "true or false",
        ),
        ([entry(name="github"), entry(name="github")], "sync.config.duplicate", "more than once"),
        ("github", "sync.config.type", "must be a list"),
    ],
)
def test_bad_entries(sources: Any, code: str, words: str) -> None:
    with pytest.raises(TaskToolError) as caught:
        parse_sources({"sources": sources}, "/r")
    assert caught.value.code == code
    assert words in caught.value.message


def test_credentials_name_the_variable_never_the_value() -> None:
    (source,) = parse_sources(
        {"sources": [{**JIRA, "name": "jira", "base_url": "https://acme.atlassian.net"}]}, "/r"
    )
    assert read_credentials(source, {"U": "me@x", "T": " secret "}) == ("me@x", "secret")
    with pytest.raises(TaskToolError) as caught:
        read_credentials(source, {"U": "me@x", "T": "  "})
    assert caught.value.code == "sync.env_missing"
    assert "T is not set" in caught.value.message


def test_validate_reports_sync_errors_and_other_commands_still_run(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "tasks").mkdir()
    (root / ".tasktool.yaml").write_text(
        "dir: tasks\nsync:\n  sources:\n"
        "    - {name: tracker, project: a/b, output_dir: tasks/t}\n"
        "    - {name: github, project: a/b, output_dir: tasks/g}\n"
        "    - {name: github, project: c/d, output_dir: tasks/h}\n"
    )
    env = {"HOME": str(tmp_path)}
    loaded = load_config(cwd=root, env=env, home=tmp_path)
    assert [(d.severity, d.code) for d in loaded.diagnostics] == [
        ("error", "sync.config.type"),
        ("error", "sync.config.duplicate"),
    ]
    assert loaded.diagnostics[0].file == str(root / ".tasktool.yaml")
    runner = CliRunner()
    at = ["--config", str(root / ".tasktool.yaml")]
    validated = runner.invoke(main, [*at, "validate"], env=env, catch_exceptions=False)
    assert validated.exit_code == 1
    assert "sync.config.type" in validated.output
    assert "sync source 'tracker': cannot tell" in validated.output
    listed = runner.invoke(main, [*at, "list"], env=env, catch_exceptions=False)
    assert listed.exit_code == 0, listed.output


def test_credentials_that_cannot_be_sent_are_refused_unseen() -> None:
    (source,) = parse_sources(
        {"sources": [{**JIRA, "name": "jira", "base_url": "https://acme.atlassian.net"}]}, "/r"
    )
    for user, token in (("zq@x", "qv zk"), ("zq@x", "qv\nzk"), ("zq\x00@x", "qvzk")):
        with pytest.raises(TaskToolError) as caught:
            read_credentials(source, {"U": user, "T": token})
        assert caught.value.code == "sync.env_invalid"
        assert "qv" not in caught.value.message
        assert "zq" not in caught.value.message
