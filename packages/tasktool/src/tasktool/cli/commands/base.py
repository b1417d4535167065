"""What every command shares: the global options, loading, output and the CLI error.

A command gets the global flags with ``@click.pass_obj``, loads the
repository with :func:`load_repository` (which warns about broken task files
on stderr) and prints with :func:`output`::

    @click.command("stats")
    @format_option
    @click.pass_obj
    def stats(options: GlobalOptions, /, *, fmt: str | None) -> None:
        repo = load_repository(options)
        output(options, fmt, data, rows=..., columns=...)
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click
import msgspec

from mtcommon import CodedError, render_line
from mtcommon.cli import UsageLine
from tasktool.cli import oneshot
from tasktool.config import Overrides, taskmd_notice
from tasktool.model.errors import TaskToolError, exit_status
from tasktool.planning.repository import Repository, load_context
from tasktool.present.render import FORMATS, emit_data, emit_table, for_terminal, is_terminal

__all__ = [
    "CliError",
    "F",
    "GlobalOptions",
    "data_format",
    "format_option",
    "kept_when_piped",
    "load_repository",
    "output",
    "output_format",
    "repositories",
    "split_values",
    "tagged",
    "usage_errors",
]

F = TypeVar("F", bound=Callable[..., Any])


class CliError(click.ClickException):
    """A ``CodedError`` shown as one line on stderr (``error: <message> [<code>]``, the
    shared ``mtcommon.render_line``); the exit status is the catalogue's (1 for most)."""

    def __init__(self, error: CodedError) -> None:
        super().__init__(error.message)
        self.error = error

    @property
    def exit_code(self) -> int:  # type: ignore[override]  # click reads it per instance
        return exit_status(self.error.code)

    def show(self, file: Any = None) -> None:
        out = file or sys.stderr
        click.echo(for_terminal(render_line(self.error), out), file=out)


class GlobalOptions(msgspec.Struct, kw_only=True):
    """The global flags of one invocation (``None``: not given).

    A ``msgspec.Struct`` rather than a dataclass: msgspec is loaded anyway, while
    ``dataclasses`` and the methods it generates cost every command a millisecond at start.
    """

    config: str | None = None
    task_dir: str | None = None
    format: str | None = None
    verbose: bool | None = None
    quiet: bool | None = None
    no_color: bool = False
    worktree_scope: str | None = None
    project: str | None = None
    all_projects: bool = False
    #: Effective verbosity once the config is loaded (flags > env > file).
    loud: bool = False
    silent: bool = False
    #: Whether :meth:`note_config` has spoken in this invocation.
    noted: bool = False
    #: A repository :func:`kept_when_piped` loaded, handed to the command's first
    #: :func:`load_repository` (loaded once, its warnings said once).
    preloaded: Any = None
    #: The process running this invocation (:mod:`tasktool.cli.oneshot`): what a load
    #: may skip in it.
    process: oneshot.Process = msgspec.field(default_factory=oneshot.Process)

    def overrides(self) -> Overrides:
        return Overrides(
            config=self.config,
            task_dir=self.task_dir,
            verbose=self.verbose,
            quiet=self.quiet,
            worktree_scope=self.worktree_scope,
            project=self.project,
        )

    def warn(self, message: str) -> None:
        """A warning on stderr unless quiet."""
        if not self.silent:
            click.echo(for_terminal(f"warning: {message}", sys.stderr), err=True)

    def note_config(self, file: str | None) -> None:
        """Say on stderr, once per invocation and unless quiet, that the config loaded is
        taskmd's ``.taskmd.yaml``: a user who meant to write a ``.tasktool.yaml`` learns
        which file counts."""
        notice = taskmd_notice(file)
        if notice is not None and not self.noted and not self.silent:
            self.noted = True
            click.echo(f"note: {notice}", err=True)

    def info(self, message: str) -> None:
        """A detail on stderr when verbose."""
        if self.loud and not self.silent:
            click.echo(for_terminal(message, sys.stderr), err=True)

    def repository(self) -> Repository:
        """:func:`load_repository` for a front end's command, which gets these options as
        ``ctx.obj`` and must not import the CLI (see :data:`tasktool.cli.commands.COMMANDS`)."""
        return load_repository(self)


def format_option(function: F) -> F:
    """``--format table|json|yaml`` on a command (overrides the global ``--format``)."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(FORMATS),
        default=None,
        help="Output format (default: the global --format, else table).",
    )(function)


def output_format(options: GlobalOptions, fmt: str | None) -> str:
    return fmt or options.format or "table"


def data_format(options: GlobalOptions, fmt: str | None) -> str | None:
    """``json`` or ``yaml`` when the output is data, ``None`` when it is a table."""
    chosen = output_format(options, fmt)
    return None if chosen == "table" else chosen


def load_repository(
    options: GlobalOptions, *, tolerant: bool = False, creating: bool = False
) -> Repository:
    """Load config and tasks; broken task files are warned about on stderr, and so is a
    task directory that does not exist yet, unless the command is ``creating`` it."""
    if options.preloaded is not None and not (tolerant or creating):
        repo: Repository = options.preloaded
        options.preloaded = None
        return repo
    repo = options.process.load(lambda: load_context(options.overrides(), tolerant=tolerant))
    config = repo.config
    options.loud, options.silent = config.verbose, config.quiet
    options.note_config(repo.loaded.file)
    if options.loud:  # only then: counting the tasks decodes them
        options.info(
            f"config: {repo.loaded.file or '(none)'}; task dir: {repo.task_dir}; "
            f"{len(repo.tasks)} tasks, {len(repo.archived)} archived"
        )
    note = None if creating else repo.absent_note()
    notes = (*repo.notes, *(() if tolerant else repo.broken), *([note] if note else []))
    for problem in notes:
        options.warn(f"{problem.message} [{problem.code}]")
    return repo


def repositories(options: GlobalOptions) -> list[tuple[str | None, Repository]]:
    """``[(None, repo)]``, or under ``--all-projects`` each registered project's repository
    with its id, in registry order; the worktrees of one repository count once."""
    if not options.all_projects:
        return [(None, load_repository(options))]
    from tasktool.config.registry import project_home, read_registry

    found: list[tuple[str | None, Repository]] = []
    seen: set[Path] = set()
    for project in read_registry().projects:
        home = project_home(Path(project.path))
        if home in seen:
            continue
        seen.add(home)
        scoped = msgspec.structs.replace(options, project=project.id)
        found.append((project.id, load_repository(scoped)))
    return found


def tagged(project: str | None, item: dict[str, Any]) -> dict[str, Any]:
    """``item`` with ``"project": id`` first under ``--all-projects`` (as it is otherwise)."""
    return item if project is None else {"project": project, **item}


def output(
    options: GlobalOptions,
    fmt: str | None,
    data: Any,
    *,
    rows: Sequence[Mapping[str, Any]] | None = None,
    columns: Sequence[str] = (),
    title: str | None = None,
) -> None:
    """JSON/YAML of ``data``, or a table of ``rows`` (``data`` itself when it is a list)."""
    chosen = output_format(options, fmt)
    if chosen in {"json", "yaml"}:
        emit_data(data, chosen)
        return
    emit_table(rows if rows is not None else data, columns, title=title, no_color=options.no_color)


@contextmanager
def usage_errors(param: str) -> Iterator[None]:
    """A ``TaskToolError`` raised inside (a bad filter, sort or field) becomes a usage error
    on ``param`` that keeps its code: exit 2."""
    try:
        yield
    except TaskToolError as exc:
        raise UsageLine(f"Invalid value for {param}: {exc.message}", code=exc.code) from None


def split_values(values: Sequence[str]) -> tuple[str, ...]:
    """Repeated and comma-separated option values as one tuple, blanks dropped."""
    return tuple(item.strip() for value in values for item in value.split(",") if item.strip())


def kept_when_piped(
    unless: Callable[[GlobalOptions, dict[str, Any]], bool] | None = None,
    *,
    notes: bool = False,
) -> Callable[[F], F]:
    """A read command's whole output to a pipe kept from one run to the next and replayed
    while the tasks, the config and the command's arguments are the same
    (:func:`tasktool.present.output_memo.recording_streams`): at 100,000 tasks a repeated
    ``list``, ``board`` or ``graph`` copies a file instead of decoding every task and
    laying them out. Not on a terminal (width, colour and the pager are live), not with
    ``--all-projects``, nor when ``unless(options, arguments)`` says the command keeps its
    output itself. With ``notes`` what the command writes to stderr is kept and replayed
    with its output (``graph``'s note on the part it draws)."""

    def decorate(command: F) -> F:
        @functools.wraps(command)
        def run(options: GlobalOptions, /, **arguments: Any) -> None:
            if (
                options.all_projects
                or is_terminal(sys.stdout)
                or (unless is not None and unless(options, arguments))
            ):
                command(options, **arguments)
                return
            from tasktool.present.output_memo import recording_streams, replay

            repo = load_repository(options)
            name = click.get_current_context().info_name or command.__name__
            key = (options.format, sorted(arguments.items()))
            if replay(repo, name, key, notes=notes):
                return
            options.preloaded = repo
            with recording_streams(repo, name, key, notes=notes):
                command(options, **arguments)

        return run  # type: ignore[return-value]

    return decorate
