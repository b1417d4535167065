"""``projects``, ``projects register`` and ``projects unregister``: the project registry."""

from __future__ import annotations

from pathlib import Path

import click

from mtcommon import CodedError
from tasktool.cli.commands.base import GlobalOptions, format_option, load_repository, output
from tasktool.config.registry import read_registry, register, unregister

__all__ = ["projects_group", "register_command", "unregister_command"]


def _task_count(options: GlobalOptions, project_id: str) -> int | str:
    """Active tasks of a project for the table; the error code when it does not load."""
    try:
        repo = load_repository(GlobalOptions(project=project_id, quiet=True))
    except CodedError as exc:
        return f"[{exc.code}]"
    except OSError:
        return "[os.error]"
    options.info(f"{project_id}: {repo.task_dir}")
    return len(repo.tasks)


@click.group("projects", invoke_without_command=True)
@format_option
@click.pass_context
def projects_group(ctx: click.Context, /, *, fmt: str | None) -> None:
    """List the registered projects (~/.tasktool.yaml, or $TASKTOOL_HOME_CONFIG).

    JSON: [{"id", "name", "path"}]; the table adds each project's task count.
    """
    if ctx.invoked_subcommand is not None:
        return
    options: GlobalOptions = ctx.obj
    projects = read_registry().projects
    data = [{"id": p.id, "name": p.name, "path": p.path} for p in projects]
    rows = [{**item, "tasks": _task_count(options, item["id"])} for item in data]
    if not data and (fmt or options.format or "table") == "table":
        click.echo("no registered projects (tasktool projects register [PATH])")
        return
    output(options, fmt, data, rows=rows, columns=("id", "name", "path", "tasks"))


@projects_group.command("register")
@click.argument("path", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--id", "project_id", metavar="ID", help="Project id (default: folder name).")
@click.option("--name", metavar="NAME", help="Display name (default: the id).")
def register_command(path: Path | None, project_id: str | None, name: str | None) -> None:
    """Register PATH (default: the current directory), which must hold .tasktool.yaml.

    A folder in a linked git worktree registers the same folder of the main
    worktree, once: all worktrees of a repository are one project.
    """
    project, added = register(path or Path.cwd(), project_id=project_id, name=name)
    verb = "registered" if added else "already registered"
    click.echo(f"{verb} {project.id}: {project.path}")


@projects_group.command("unregister")
@click.argument("project_id", metavar="ID")
def unregister_command(project_id: str) -> None:
    """Remove project ID from the registry (its files are not touched)."""
    project = unregister(project_id)
    click.echo(f"unregistered {project.id}: {project.path}")
