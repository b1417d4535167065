"""Each configuration rule of the seed, one test per rule."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tasktool.config import Overrides, load_config
from tasktool.model.errors import TaskToolError

if TYPE_CHECKING:
    from tests.tasktool.conftest import Project


def load(project: Project, cwd: Path | None = None, **flags: object):  # type: ignore[no-untyped-def]
    return load_config(
        Overrides(**flags),  # type: ignore[arg-type]
        cwd=cwd or project.root,
        env=project.env,
        home=project.home,
    )


def codes(loaded: object) -> list[str]:
    return [d.code for d in loaded.diagnostics]  # type: ignore[attr-defined]


def test_defaults_without_any_file(project: Project) -> None:
    loaded = load(project)
    assert loaded.file is None
    config = loaded.config
    assert (config.web_port, config.web_host, config.id_strategy) == (
        8080,
        "127.0.0.1",
        "sequential",
    )
    assert (config.id_length, config.id_padding) == (6, 3)
    assert config.effort == ("small", "medium", "large")
    assert config.worktree_scope == "unified"
    assert config.next_unphased == "current"
    assert config.task_dir == str(project.root)
    assert set(loaded.sources.values()) == {"default"}


def test_file_in_current_directory_is_loaded(project: Project) -> None:
    path = project.config("web:\n  port: 9000\n")
    loaded = load(project)
    assert loaded.file == str(path)
    assert loaded.config.web_port == 9000
    assert loaded.sources["web.port"] == "file"


def test_subdirectory_finds_project_file(project: Project) -> None:
    project.config("workflow: pr-review\n")
    deep = project.root / "src" / "pkg"
    deep.mkdir(parents=True)
    loaded = load(project, cwd=deep)
    assert loaded.file == str(project.root / ".tasktool.yaml")
    assert loaded.config.workflow == "pr-review"


def test_search_stops_at_repository_root(project: Project) -> None:
    # A file above the repository root is not part of this project.
    (project.root.parent / ".tasktool.yaml").write_text("workflow: pr-review\n")
    loaded = load(project, cwd=project.root)
    assert loaded.file is None
    assert loaded.config.workflow == "solo"


def test_home_file_is_the_fallback(project: Project) -> None:
    home_file = project.home / ".tasktool.yaml"
    home_file.write_text("web:\n  port: 7000\n")
    loaded = load(project)
    assert loaded.file == str(home_file)
    assert loaded.config.web_port == 7000


def test_home_file_ignored_when_project_file_exists(project: Project) -> None:
    (project.home / ".tasktool.yaml").write_text("web:\n  port: 7000\n  host: 0.0.0.0\n")
    project.config("web:\n  port: 9000\n")
    loaded = load(project)
    assert loaded.config.web_port == 9000
    assert loaded.config.web_host == "127.0.0.1"  # not merged from home
    assert loaded.sources["web.host"] == "default"


def test_config_flag_replaces_the_search(project: Project) -> None:
    project.config("web:\n  port: 9000\n")
    other = project.write("conf/alt.yaml", "web:\n  port: 9100\n")
    loaded = load(project, config="conf/alt.yaml")
    assert loaded.file == str(other)
    assert loaded.config.web_port == 9100


def test_missing_config_flag_file_is_an_error(project: Project) -> None:
    with pytest.raises(TaskToolError) as info:
        load(project, config="nope.yaml")
    assert info.value.code == "config.unreadable"
    assert "nope.yaml" in info.value.message


def test_environment_overrides_the_file(project: Project) -> None:
    project.config("web:\n  port: 9000\n  readonly: false\n")
    project.env.update(TASKTOOL_WEB_PORT="9200", TASKTOOL_WEB_READONLY="true")
    loaded = load(project)
    assert loaded.config.web_port == 9200
    assert loaded.config.web_readonly is True
    assert loaded.sources["web.port"] == "env"


def test_every_scalar_key_is_settable_from_the_environment(project: Project) -> None:
    project.env.update(
        TASKTOOL_WORKLOGS="yes",
        TASKTOOL_WORKFLOW="pr-review",
        TASKTOOL_WEB_HOST="0.0.0.0",
        TASKTOOL_WEB_AUTO_OPEN_BROWSER="1",
        TASKTOOL_ID_STRATEGY="prefixed",
        TASKTOOL_ID_PREFIX="T-",
        TASKTOOL_ID_LENGTH="8",
        TASKTOOL_ID_PADDING="4",
        TASKTOOL_NEXT_UNPHASED="last",
        TASKTOOL_WORKTREE_SCOPE="isolated",
        TASKTOOL_VERBOSE="true",
        TASKTOOL_QUIET="false",
    )
    s = load(project).config
    assert s.worklogs
    assert s.web_auto_open_browser
    assert s.verbose
    assert not s.quiet
    assert (s.workflow, s.web_host, s.id_strategy, s.id_prefix) == (
        "pr-review",
        "0.0.0.0",
        "prefixed",
        "T-",
    )
    assert (s.id_length, s.id_padding, s.next_unphased, s.worktree_scope) == (
        8,
        4,
        "last",
        "isolated",
    )


def test_flag_overrides_the_environment(project: Project) -> None:
    project.env["TASKTOOL_VERBOSE"] = "0"
    loaded = load(project, verbose=True)
    assert loaded.config.verbose is True
    assert loaded.sources["verbose"] == "flag"


def test_task_dir_variable_needs_a_task_dir_key(project: Project) -> None:
    project.env["TASKTOOL_TASK_DIR"] = "/elsewhere"
    assert load(project).config.task_dir == str(project.root)  # no file: ignored
    project.config("dir: tasks\n")
    assert load(project).config.task_dir == str(project.root / "tasks")  # no task-dir key
    project.config("task-dir: tasks\n")
    loaded = load(project)
    assert loaded.config.task_dir == "/elsewhere"
    assert loaded.sources["dir"] == "env"


def test_dir_variable_needs_a_dir_key(project: Project) -> None:
    project.env["TASKTOOL_DIR"] = "/elsewhere"
    project.config("task-dir: tasks\n")
    assert load(project).config.task_dir == str(project.root / "tasks")
    project.config("dir: tasks\n")
    assert load(project).config.task_dir == "/elsewhere"


@pytest.mark.parametrize(
    ("variable", "key"), [("TASKTOOL_DIR", "dir"), ("TASKTOOL_TASK_DIR", "task-dir")]
)
def test_a_task_dir_variable_is_reported_exactly_as_it_is_applied(
    project: Project, variable: str, key: str
) -> None:
    """One rule: a variable that takes effect draws no warning; one ignored says so."""
    project.env[variable] = "/elsewhere"
    project.config(f"{key}: tasks\n")
    applied = load(project)
    assert (applied.config.task_dir, applied.sources["dir"]) == ("/elsewhere", "env")
    assert codes(applied) == []
    other = "task-dir" if key == "dir" else "dir"
    project.config(f"{other}: tasks\n")
    ignored = load(project)
    assert ignored.config.task_dir == str(project.root / "tasks")
    assert codes(ignored) == ["config.ignored_env"]


def test_task_dir_flag_always_works(project: Project) -> None:
    project.env["TASKTOOL_TASK_DIR"] = "/elsewhere"
    project.config("task-dir: tasks\n")
    loaded = load(project, task_dir="mine")
    assert loaded.config.task_dir == str(project.root / "mine")
    assert loaded.sources["dir"] == "flag"
    assert load(project, task_dir="/abs").config.task_dir == "/abs"


def test_relative_paths_resolve_against_the_file(project: Project) -> None:
    project.config("dir: tasks\n")
    sub = project.root / "a" / "b"
    sub.mkdir(parents=True)
    assert load(project, cwd=sub).config.task_dir == str(project.root / "tasks")


def test_verbose_and_quiet_are_honoured_and_reported_unknown(project: Project) -> None:
    project.config("verbose: true\nquiet: true\n")
    loaded = load(project)
    assert loaded.config.verbose
    assert loaded.config.quiet
    unknown = [d.message for d in loaded.diagnostics if d.code == "config.unknown_key"]
    assert unknown == ["unknown config key 'verbose'", "unknown config key 'quiet'"]
    assert all(d.severity == "warning" for d in loaded.diagnostics)


@pytest.mark.parametrize("key", ["projects: []", "default_project: x", "format: json", "colour: 1"])
def test_other_unknown_keys_are_reported(project: Project, key: str) -> None:
    project.config(key + "\nweb:\n  tls: true\n")
    loaded = load(project)
    assert codes(loaded) == ["config.unknown_key", "config.unknown_key"]
    assert "web.tls" in loaded.diagnostics[1].message
    assert not loaded.rejections


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("effort: large\n", "config.effort.not_list"),
        ("effort: {a: 1}\n", "config.effort.not_list"),
        ("effort: []\n", "config.effort.empty"),
        ("effort: [small, '  ']\n", "config.effort.blank"),
        ("effort: [small, small]\n", "config.effort.duplicate"),
        ("effort: [small, 3]\n", "config.effort.non_string"),
        ("effort: [small, {name: big}]\n", "config.effort.non_string"),
    ],
)
def test_each_effort_rejection(project: Project, text: str, code: str) -> None:
    project.config(text)
    loaded = load(project)
    assert codes(loaded) == [code]
    assert loaded.rejections[0].file == str(project.root / ".tasktool.yaml")
    assert loaded.config.effort == ("small", "medium", "large")
    with pytest.raises(TaskToolError) as info:
        loaded.require_valid()
    assert info.value.code == code


def test_effort_replaces_the_default_list(project: Project) -> None:
    project.config("effort: [xs, s, m, l, xl]\n")
    assert load(project).config.effort == ("xs", "s", "m", "l", "xl")


def test_bare_effort_means_the_default(project: Project) -> None:
    project.config("effort:\n")
    loaded = load(project)
    assert loaded.config.effort == ("small", "medium", "large")
    assert not loaded.diagnostics


def test_duplicate_id_blocks_fall_back_to_sequential(project: Project) -> None:
    project.config("id:\n  strategy: ulid\n  length: 10\nid:\n  strategy: random\n")
    loaded = load(project)
    assert loaded.config.id_strategy == "sequential"
    assert loaded.config.id_length == 6
    assert loaded.sources["id.strategy"] == "default"
    assert not loaded.diagnostics  # no error, silently ignored


def test_single_id_block_is_used(project: Project) -> None:
    project.config("id:\n  strategy: prefixed\n  prefix: T-\n  padding: 4\n")
    s = load(project).config
    assert (s.id_strategy, s.id_prefix, s.id_padding) == ("prefixed", "T-", 4)


def test_phase_without_name_is_an_error(project: Project) -> None:
    project.config("phases:\n  - id: p1\n  - id: p2\n    name: Two\n")
    loaded = load(project)
    assert codes(loaded) == ["config.phases.name_missing"]
    assert loaded.diagnostics[0].severity == "error"
    assert not loaded.rejections


def test_phase_without_id_warns_and_uses_name(project: Project) -> None:
    project.config("phases:\n  - name: Alpha\n    due: 2025-01-31\n")
    loaded = load(project)
    assert codes(loaded) == ["config.phases.id_missing"]
    assert loaded.diagnostics[0].severity == "warning"
    assert loaded.config.phases[0].id == "Alpha"
    assert loaded.config.phases[0].due == "2025-01-31"


def test_phase_rules_for_due_and_repeated_ids(project: Project) -> None:
    project.config(
        "phases:\n  - {id: a, name: A, due: soon}\n  - {id: a, name: B}\n"
        "  - {id: c, name: C, due: 2030-02-30}\n  - {id: d, name: D, due: 2030-02-28}\n"
    )
    assert codes(load(project)) == [
        "config.phases.due",
        "config.phases.duplicate_id",
        "config.phases.due",
    ]


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("next: last\n", "config.next.type"),
        ("next:\n  unphased: first\n", "config.next.unphased"),
        ("next:\n  unphased: last\n  mode: x\n", "config.next.unknown_key"),
    ],
)
def test_next_section_rules(project: Project, text: str, code: str) -> None:
    project.config(text)
    loaded = load(project)
    assert codes(loaded) == [code]
    assert loaded.diagnostics[0].severity == "error"
    loaded.require_valid()  # other commands still run
    with pytest.raises(TaskToolError) as info:
        loaded.require_next_config()
    assert info.value.code == code


def test_bare_next_section_is_empty(project: Project) -> None:
    project.config("next:\n")
    loaded = load(project)
    assert not loaded.diagnostics
    assert loaded.config.next_unphased == "current"


def test_next_unphased_last_is_accepted(project: Project) -> None:
    project.config("next:\n  unphased: last\n")
    loaded = load(project)
    assert loaded.config.next_unphased == "last"
    loaded.require_next_config()


def test_bad_next_unphased_from_the_environment(project: Project) -> None:
    project.env["TASKTOOL_NEXT_UNPHASED"] = "sideways"
    with pytest.raises(TaskToolError, match="TASKTOOL_NEXT_UNPHASED"):
        load(project).require_next_config()


@pytest.mark.parametrize(
    ("text", "env", "code"),
    [
        ("web:\n  port: high\n", {}, "config.type"),
        ("workflow: kanban\n", {}, "config.type"),
        ("worklogs: maybe\n", {}, "config.type"),
        ("ignore: vendor2\n", {}, "config.type"),
        ("web: 8080\n", {}, "config.type"),
        ("", {"TASKTOOL_WEB_PORT": "eighty"}, "config.env.invalid"),
        ("", {"TASKTOOL_WEB_READONLY": "perhaps"}, "config.env.invalid"),
        ("", {"TASKTOOL_ID_LENGTH": "0"}, "config.env.invalid"),
    ],
)
def test_wrong_types_reject_the_config(
    project: Project, text: str, env: dict[str, str], code: str
) -> None:
    project.config(text)
    project.env.update(env)
    loaded = load(project)
    assert codes(loaded) == [code]
    with pytest.raises(TaskToolError):
        loaded.require_valid()


def test_scopes_and_lists(project: Project) -> None:
    project.config(
        "ignore: [generated]\ntodos:\n  exclude: ['*.min.js']\n"
        "scopes:\n  api:\n    description: The API\n    paths: [src/api]\n  ui:\n"
    )
    s = load(project).config
    assert s.ignore == ("generated",)
    assert s.todos_exclude == ("*.min.js",)
    assert s.scopes is not None
    assert s.scopes["api"].paths == ("src/api",)
    assert s.scopes["ui"].description is None


def test_broken_yaml_names_file_line_and_column(project: Project) -> None:
    project.config("web:\n  port: [1\n  host: x\n")
    with pytest.raises(TaskToolError) as info:
        load(project)
    assert info.value.code == "config.syntax"
    assert info.value.message.startswith(str(project.root / ".tasktool.yaml") + ":3:")
    assert "\n" not in info.value.message


def test_non_mapping_file_is_an_error(project: Project) -> None:
    project.config("- a\n- b\n")
    with pytest.raises(TaskToolError, match="mapping"):
        load(project)


def test_values_are_json_ready(project: Project) -> None:
    project.config("phases:\n  - {id: p1, name: One}\nscopes:\n  api: {paths: [a]}\n")
    values = load(project).values
    assert values["phases"] == [{"id": "p1", "name": "One", "description": None, "due": None}]
    assert values["scopes"] == {"api": {"description": None, "paths": ["a"]}}
    assert values["effort"] == ["small", "medium", "large"]


def test_parsed_config_is_cached_and_revalidated(project: Project) -> None:
    project.config("web:\n  port: 9000\n")
    assert load(project).config.web_port == 9000
    cached = project.root / ".tasktool" / "cache" / "config-.tasktool.yaml.msgpack"
    assert cached.exists()
    cached.write_bytes(b"junk")
    assert load(project).config.web_port == 9000
    project.config("web:\n  port: 9001\n")
    assert load(project).config.web_port == 9001
