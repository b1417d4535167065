"""The ``tasktool`` command line: global flags, error presentation, command registration.

Every ``CodedError`` (``TaskToolError``, ``YamlError``) and ``OSError`` raised by a
command becomes one line on stderr, ``error: <message> [<code>]``, and the exit status
the error catalogue gives its code (:data:`tasktool.model.errors.CATALOGUE`: 1, or 2
for ``filter.*``); usage errors are one line too (``... [usage]``) and exit 2.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from mtcommon import CodedError
from mtcommon.cli import OneLineUsageGroup, UsageLine
from tasktool import __version__
from tasktool.cli import oneshot
from tasktool.cli.commands import COMMANDS
from tasktool.cli.commands.base import CliError, GlobalOptions
from tasktool.cli.facts import facts_of
from tasktool.cli.pager import paging
from tasktool.model.errors import TaskToolError
from tasktool.present.render import FORMATS

__all__ = ["TaskToolGroup", "main", "run"]


def _discard_stdout() -> None:
    """Point stdout at /dev/null: what is still buffered for a closed pipe goes nowhere."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


class TaskToolGroup(OneLineUsageGroup):
    """Commands loaded on first use (:data:`tasktool.cli.commands.COMMANDS`); coded and OS
    errors become :class:`CliError`; a reader that closes the pipe early ends it quietly."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().main(*args, **kwargs)
        finally:
            try:
                sys.stdout.flush()
            except BrokenPipeError:  # `tasktool stats | head -1`: no error at exit
                _discard_stdout()

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return super().get_command(ctx, cmd_name)
        module_name, attribute = target.split(":")
        command = getattr(importlib.import_module(module_name), attribute)
        assert isinstance(command, click.Command)
        return command

    def aggregating(self, ctx: click.Context) -> list[str]:
        """The commands that take ``--all-projects`` (imports every command: for an error)."""
        return [
            name
            for name in self.list_commands(ctx)
            if facts_of(self._loadable(ctx, name)).all_projects
        ]

    def _loadable(self, ctx: click.Context, name: str) -> click.Command | None:
        try:
            return self.get_command(ctx, name)
        except ImportError:  # a front end without its extras aggregates nothing
            return None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)  # usage errors: one line (OneLineUsageGroup)
        except click.UsageError as exc:
            # OneLineUsageGroup made it one line; the option it was about is its context.
            cause = exc.__context__
            if isinstance(cause, click.NoSuchOption):
                raise _global_hint(cause, exc) from None
            raise
        except CodedError as exc:
            raise CliError(exc) from None
        except BrokenPipeError:
            # The reader went away (`| head -1`): quietly, and exit 0 as documented, not
            # Click's 1, which came or not depending on who was faster.
            _discard_stdout()
            raise click.exceptions.Exit(0) from None
        except OSError as exc:
            where = f" {exc.filename}" if exc.filename else ""
            error = TaskToolError(f"{exc.strerror or exc}:{where}", code="os.error")
            raise CliError(error) from None
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception as exc:
            if isinstance(ctx.obj, GlobalOptions) and ctx.obj.loud:
                raise
            # A bug must still end in one line, not a traceback (-v shows the traceback).
            error = TaskToolError(
                f"internal error: {type(exc).__name__}: {exc}", code="tasktool.internal"
            )
            raise CliError(error) from None


#: Global flags a user may type after the command (``tasktool list -q``), as git and gh
#: take them there: the error says where they go.
_GLOBAL_FLAGS = ("-q", "--quiet", "-v", "--verbose", "--no-color", "--no-pager")


def _global_hint(error: click.NoSuchOption, line: click.UsageError) -> click.UsageError:
    """A usage error that says where a global flag goes when it was given after the
    command; else ``line`` (the error as one line)."""
    if error.option_name not in _GLOBAL_FLAGS or error.ctx is None:
        return line
    command = error.ctx.info_name
    return UsageLine(
        f"{error.option_name} is a global option: put it before the command "
        f"(tasktool {error.option_name} {command} ...)",
        error.ctx,
    )


@click.group(
    cls=TaskToolGroup,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="tasktool")
@click.option("--config", "config", metavar="PATH", help="Use this config file; no search.")
@click.option("--task-dir", "-d", "task_dir", metavar="DIR", help="Task directory (always wins).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), help="Default output format.")
@click.option("-v", "--verbose", is_flag=True, default=None, help="Say more on stderr.")
@click.option("-q", "--quiet", is_flag=True, default=None, help="No warnings on stderr.")
@click.option("--no-color", is_flag=True, help="No colours in tables.")
@click.option("--no-pager", is_flag=True, help="Never page long output ($PAGER, less -R).")
@click.option(
    "--worktree-scope",
    "worktree_scope",
    type=click.Choice(("unified", "isolated")),
    help="unified: merge task statuses across git worktrees; isolated: this one only.",
)
@click.option("--project", "project", metavar="ID", help="Run in this registered project.")
@click.option(
    "--all-projects",
    is_flag=True,
    help="list, next, board, stats over every registered project (others refuse it).",
)
@click.pass_context
def main(
    ctx: click.Context,
    /,
    *,
    config: str | None,
    task_dir: str | None,
    fmt: str | None,
    verbose: bool | None,
    quiet: bool | None,
    no_color: bool,
    no_pager: bool,
    worktree_scope: str | None,
    project: str | None,
    all_projects: bool,
) -> None:
    """Manage tasks kept as Markdown files with YAML frontmatter."""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())
        ctx.exit(0)
    group = ctx.command
    assert isinstance(group, TaskToolGroup)
    # Loaded already: click resolves the command before it runs the group's callback.
    said = facts_of(group.get_command(ctx, ctx.invoked_subcommand))
    if all_projects and not said.all_projects and not ctx.resilient_parsing:
        raise UsageLine(
            f"--all-projects works with {', '.join(group.aggregating(ctx))}, "
            f"not {ctx.invoked_subcommand}",
            ctx,
        )
    # The entry point's process (click's ``obj``), else an in-process caller's.
    process = ctx.obj if isinstance(ctx.obj, oneshot.Process) else oneshot.Process()
    process.reading(said.reads)
    if said.paged and not ctx.resilient_parsing:
        ctx.with_resource(paging(not no_pager))
    ctx.obj = GlobalOptions(
        config=config,
        task_dir=task_dir,
        format=fmt,
        verbose=verbose,
        quiet=quiet,
        no_color=no_color,
        worktree_scope=worktree_scope,
        project=project,
        all_projects=all_projects,
        process=process,
    )


def run() -> None:
    """The process's entry point (the ``tasktool`` script, ``python -m tasktool``): the
    command line, in a process that ends with it (:mod:`tasktool.cli.oneshot`)."""
    process = oneshot.Process(one_shot=True)
    try:
        main(obj=process)
    except SystemExit as done:
        if done.code is None or isinstance(done.code, int):
            process.end(done.code or 0)
        raise


if __name__ == "__main__":
    run()
