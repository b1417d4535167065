"""docs/operations.md: its environment table is the option table, and every variable works."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from matchmaker.cli import main
from matchmaker.configure import ADMIN_OPTIONS, CONFIG_OPTION, OPTIONS, Option, environment_table
from matchmaker.configure import resolve as resolve_config

DOC = Path(__file__).resolve().parents[3] / "docs" / "operations.md"


def documented_table() -> str:
    section = DOC.read_text().split("\n## Environment variables\n", 1)[1]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    return "\n".join(lines)


def documented_variables() -> list[str]:
    rows = documented_table().splitlines()[2:]
    return [row.split("|")[1].strip().strip("`") for row in rows]


def test_the_docs_table_is_the_option_table() -> None:
    assert documented_table() == environment_table(), (
        "docs/operations.md's environment table is stale: paste "
        "matchmaker.configure.environment_table() into it"
    )


def sample(option: Option) -> tuple[str, Any]:
    """A valid value other than the default, as text and as parsed."""
    kind = option.kind
    if kind.name == "integer":
        value: Any = (option.default or 0) + 1
    elif kind.name == "number":
        value = option.default + 1.5
    elif kind.name == "boolean":
        return "true", not option.default
    elif kind.name == "choice":
        value = next(choice for choice in kind.choices if choice != option.default)
    else:
        value = f"sample-{option.key}"
    return str(value), value


def setting(config: object, field: str) -> Any:
    for part in field.split("."):
        config = getattr(config, part)
    return config


@pytest.mark.parametrize("variable", documented_variables())
def test_every_documented_variable_has_its_effect(variable: str, tmp_path: Path) -> None:
    server = [option for option in OPTIONS if variable in option.envs]
    if server:
        (option,) = server
        text, value = sample(option)
        assert value != option.default
        effective = resolve_config({}, {variable: text})
        assert setting(effective.config, option.field) == value
        assert effective.origins[option.field] == f"env {variable}"
        assert effective.warnings == ()
    elif variable == CONFIG_OPTION.env:
        path = tmp_path / "mm.yaml"
        path.write_text("management_port: 9191\n")
        assert resolve_config({}, {variable: str(path)}).config.management_port == 9191
    else:
        assert variable == ADMIN_OPTIONS[0].env
        env = {variable: "http://127.0.0.1:1", "MATCHMAKER_MANAGEMENT_KEY": "k"}
        result = CliRunner().invoke(main, ["admin", "projects", "list"], env=env)
        assert "http://127.0.0.1:1" in result.stderr  # the CLI went where the variable said


def yaml_blocks() -> list[str]:
    return [block.split("```", 1)[0] for block in DOC.read_text().split("```yaml\n")[1:]]


def test_the_documented_config_file_is_valid(tmp_path: Path) -> None:
    path = tmp_path / "matchmaker.yaml"
    path.write_text(yaml_blocks()[0])
    config = resolve_config({}, {}, str(path)).config
    assert config.store_url == "postgresql://matchmaker@db.internal:5432/matchmaker"
    assert config.control.body_timeout_s == 5


def test_the_documented_apply_file_is_valid() -> None:
    from matchmaker.adminclient.plan import desired_projects
    from mtcommon import load_safe

    block = next(block for block in yaml_blocks() if block.startswith("# projects.yaml"))
    projects = desired_projects(load_safe(block), "projects.yaml")
    assert [project["id"] for project in projects] == ["chess", "go"]
