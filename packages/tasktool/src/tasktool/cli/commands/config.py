"""``config show`` and ``init``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from tasktool.cli.commands.base import GlobalOptions, format_option, output, output_format
from tasktool.cli.facts import facts
from tasktool.config import CONFIG_NAME, LoadedConfig, load_config
from tasktool.files.storage import atomic_write_text
from tasktool.model.errors import TaskToolError
from tasktool.present.documents import config_document
from tasktool.present.render import cell

__all__ = ["STARTER", "config_group", "init_command", "show_command"]


@facts(paged=True)
@click.group("config")
def config_group() -> None:
    """Inspect the configuration."""


@config_group.command("show")
@format_option
@click.pass_obj
def show_command(options: GlobalOptions, /, *, fmt: str | None) -> None:
    """Show the loaded file and every effective setting with its source.

    Sources: default, file, env or flag. JSON: {"file": path|null, "settings":
    {"<key>": {"value": ..., "source": ...}}}.
    """
    loaded = load_config(options.overrides())
    options.loud, options.silent = loaded.config.verbose, loaded.config.quiet
    options.note_config(loaded.file)
    data = config_document(loaded)
    # A rejected environment value is an error (validate reports the file's problems).
    rejected = tuple(d for d in loaded.rejections if d.code.startswith("config.env."))
    for problem in loaded.diagnostics:
        if problem in rejected:  # an error whatever --quiet says, and the exit status
            click.echo(f"error: {problem.message} [{problem.code}]", err=True)
        else:
            options.warn(f"{problem.message} [{problem.code}]")
    _show(options, fmt, loaded, data)
    if rejected:
        raise click.exceptions.Exit(1)


def _show(
    options: GlobalOptions, fmt: str | None, loaded: LoadedConfig, data: dict[str, Any]
) -> None:
    if output_format(options, fmt) != "table":
        output(options, fmt, data)
        return
    rows = [
        {
            "key": key,
            "value": cell(item["value"])
            if not isinstance(item["value"], dict | list) or key == "effort"
            else _compact(item["value"]),
            "source": item["source"],
        }
        for key, item in data["settings"].items()
    ]
    output(
        options,
        fmt,
        data,
        rows=rows,
        columns=("key", "source", "value"),
        title=f"file: {loaded.file or '(none)'}",
    )


def _compact(value: Any) -> str:
    from tasktool.present.render import to_json

    return " ".join(to_json(value).split())


STARTER = """\
# tasktool configuration (see docs/tasktool.md for every option).
dir: {dir}
# ignore: []              # extra directories to skip when scanning
# worklogs: false         # allow `worklog <id> --add`
# workflow: solo          # solo | pr-review
# worktree_scope: unified # unified | isolated
# effort: [small, medium, large]
# id:
#   strategy: sequential  # sequential | prefixed | random | ulid
#   prefix: ""
#   length: 6
#   padding: 3
# phases:
#   - id: mvp
#     name: MVP
#     due: 2030-01-31
# next:
#   unphased: current     # current | last
# web:
#   host: 127.0.0.1
#   port: 8080
"""


@click.command("init")
@click.option(
    "--dir",
    "task_dir",
    default="tasks",
    show_default=True,
    help="Task directory to create, relative to the current directory.",
)
@click.option("--force", is_flag=True, help="Overwrite an existing .tasktool.yaml.")
@click.pass_obj
def init_command(options: GlobalOptions, /, *, task_dir: str, force: bool) -> None:
    """Write a starter .tasktool.yaml here and create the task directory."""
    path = Path.cwd() / CONFIG_NAME
    if path.is_dir():  # --force cannot replace a directory with a file
        raise TaskToolError(f"{path} is a directory", code="config.exists")
    if path.exists() and not force:
        raise TaskToolError(
            f"{path} already exists; use --force to overwrite", code="config.exists"
        )
    parent = _parent_config(Path.cwd())
    atomic_write_text(path, STARTER.format(dir=task_dir))
    if parent is not None:
        code = "config.shadowed"
        options.warn(
            f"{path} shadows {parent}: commands run below {path.parent} now read only the "
            f"new file (config files are never merged) [{code}]"
        )
    folder = Path.cwd() / task_dir
    folder.mkdir(parents=True, exist_ok=True)
    if not any(folder.iterdir()):  # git keeps no empty directory
        (folder / ".gitkeep").touch()
    click.echo(f"wrote {path}; tasks go in {folder}")


def _parent_config(directory: Path) -> Path | None:
    """A ``.tasktool.yaml`` above ``directory`` within the same repository, if any."""
    if (directory / ".git").exists():
        return None
    for above in directory.parents:
        if (above / CONFIG_NAME).is_file():
            return above / CONFIG_NAME
        if (above / ".git").exists():
            return None
    return None
