"""The ``matchmaker`` command line.

``matchmaker [OPTIONS]`` runs the server; ``matchmaker config show`` prints the
effective config and ``matchmaker admin ...`` talks to a running server's
management port. The server options come from the option table
(:mod:`matchmaker.configure`), which also reads the environment and the config file.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, TypeVar

import click
from click.core import ParameterSource

from matchmaker import __version__
from matchmaker.adminclient.commands import admin
from matchmaker.config import Limits
from matchmaker.configure import (
    CONFIG_OPTION,
    GROUPS,
    OPTIONS,
    PROCESS,
    Effective,
    Kind,
    Option,
    effective_rows,
    resolve,
)
from mtcommon import CodedError, render_line
from mtcommon.cli import OneLineUsageGroup

F = TypeVar("F", bound=Callable[..., Any])

log = logging.getLogger("matchmaker")


class CommandError(click.ClickException):
    """A coded error shown as one line on stderr (``error: <message> [<code>]``), exit 1."""

    def __init__(self, error: CodedError) -> None:
        super().__init__(error.message)
        self.error = error

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(render_line(self.error), file=file or sys.stderr)


class SettingsFailure(CommandError):
    """A setting that cannot be used (flag, environment or file): exit status 2, like Click's."""

    exit_code = 2


if TYPE_CHECKING:
    _ParamType = click.ParamType[Any, Any]  # generic in click's stubs since 8.2
else:
    _ParamType = click.ParamType


class _KindType(_ParamType):
    """A Click type that parses with the option table's :class:`Kind` (one parser for all)."""

    def __init__(self, kind: Kind) -> None:
        self.kind = kind
        self.name = kind.name

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return self.kind.parse(value)
        except ValueError as exc:
            self.fail(f"must be {exc}, not {value!r}", param, ctx)


def _click_option(option: Option, param: str) -> Callable[[F], F]:
    envs = ", ".join(option.envs)
    help_text = f"{option.help} [env: {envs}; default: {option.shown_default()}]"
    if option.kind.name == "boolean":
        return click.option(option.flag, *option.flag_aliases, param, is_flag=True, help=help_text)
    return click.option(
        option.flag,
        *option.flag_aliases,
        param,
        type=_KindType(option.kind),
        default=None,
        help=help_text,
    )


def _config_options(command: F) -> F:
    for option in reversed(OPTIONS):
        command = _click_option(option, option.param)(command)
    return _click_option(CONFIG_OPTION, "config_file")(command)


_GROUP_OF = {option.param: option.group for option in OPTIONS} | {"config_file": PROCESS}


class _ServerGroup(OneLineUsageGroup):
    """A group whose options are listed under the option table's groups in ``--help``, and
    whose usage errors are one line."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        sections: dict[str, list[tuple[str, str]]] = {group: [] for group in GROUPS}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is not None:
                sections[_GROUP_OF.get(param.name or "", PROCESS)].append(record)
        for group, records in sections.items():
            if records:
                with formatter.section(group):
                    formatter.write_dl(records)
        self.format_commands(ctx, formatter)


@dataclass(frozen=True, slots=True)
class Invocation:
    """What the command line said; resolved into a config only by the commands that need it."""

    flags: dict[str, Any]
    config_file: str | None

    def effective(self) -> Effective:
        try:
            return resolve(self.flags, os.environ, self.config_file)
        except CodedError as exc:
            raise SettingsFailure(exc) from None


@click.group(
    cls=_ServerGroup,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, prog_name="matchmaker")
@_config_options
@click.pass_context
def main(ctx: click.Context, /, config_file: str | None, **values: Any) -> None:
    """Run the realtime matchmaking service, or one of the commands below.

    Serves the WebSocket data plane on --port and, when a management key is
    given, the /admin control plane on --management-port. Settings come from
    flags, then MATCHMAKER_* environment variables, then the --config YAML
    file, then the defaults; `matchmaker config show` prints the result.
    Stops gracefully on SIGTERM or SIGINT.
    """
    flags = {
        option.field: values[option.param]
        for option in OPTIONS
        if ctx.get_parameter_source(option.param) is ParameterSource.COMMANDLINE
    }
    ctx.obj = Invocation(flags, config_file)
    if ctx.invoked_subcommand is None:
        _serve(ctx.obj.effective())


def _serve(effective: Effective) -> None:
    from matchmaker.running import serve_until_signalled
    from matchmaker.server import configure_logging
    from matchmaker.servers import event_loop_factory

    configure_logging(effective.config)
    for warning in effective.warnings:
        log.warning("%s", warning)
    if effective.config_file is not None:
        log.info("settings read from %s", effective.config_file)
    try:
        with asyncio.Runner(loop_factory=event_loop_factory(effective.config.server)) as runner:
            runner.run(serve_until_signalled(effective.config))
    except CodedError as exc:
        raise CommandError(exc) from None
    else:
        # Closing the loop put back the default SIGINT/SIGTERM actions, yet the process
        # still has its teardown to do (closing the store, the loop's own): a supervisor's
        # repeated SIGTERM must not kill it there and turn a clean stop into -15.
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, signal.SIG_IGN)


def _format_option(choices: list[str], help_text: str) -> Callable[[F], F]:
    """``--format`` (the parameter ``output``): one of ``choices``, the first by default."""
    return click.option(
        "--format",
        "output",
        type=click.Choice(choices),
        default=choices[0],
        show_default=True,
        help=help_text,
    )


@main.group()
def config() -> None:
    """Inspect the settings the server would run with."""


@config.command()
@_format_option(["text", "json"], "Aligned text, or JSON for programs.")
@click.pass_obj
def show(invocation: Invocation, output: str) -> None:
    """Print every effective setting and where it came from (flag, env, file:line, default).

    The management key is shown as *** and store passwords are hidden; for
    server auto, the server it picks here is named.
    Unknown MATCHMAKER_* variables are reported on stderr.
    """
    effective = invocation.effective()
    for warning in effective.warnings:
        click.echo(f"warning: {warning}", err=True)
    rows = effective_rows(effective)
    _name_the_chosen_server(rows)
    if output == "json":
        click.echo(json.dumps({"config_file": effective.config_file, "settings": rows}, indent=2))
        return
    width = max(len(row["key"]) for row in rows)
    values = [
        _text(row["value"]) + (f" ({row['chosen']})" if "chosen" in row else "") for row in rows
    ]
    value_width = max(len(value) for value in values)
    for row, value in zip(rows, values, strict=True):
        click.echo(f"{row['key']:<{width}}  {value:<{value_width}}  {row['source']}")


def _text(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


@main.command()
@click.option(
    "--policy",
    "policy_file",
    metavar="FILE",
    required=True,
    help="The policy to try: one policy object as /admin takes it (JSON or YAML).",
)
@click.option(
    "--arrivals",
    "arrivals_file",
    metavar="FILE",
    required=True,
    help="JSON Lines of arrivals in time order (what --record-arrivals writes).",
)
@click.option(
    "--compare", "compare_file", metavar="FILE", help="A second policy run over the same arrivals."
)
@_format_option(["json", "table"], "JSON for programs, or a table side by side.")
@click.option(
    "--report",
    "report_file",
    metavar="FILE.html",
    help="Also write a self-contained HTML page of charts.",
)
@click.option(
    "--pool", metavar="NAME", help="Replay only the arrivals recorded under this policy name."
)
@click.option(
    "--entry-ttl-ms",
    type=click.IntRange(min=1),
    default=Limits().entry_ttl_ms,
    show_default=True,
    help="The server's --entry-ttl-ms: an entry waiting longer expires.",
)
def simulate(
    *,
    policy_file: str,
    arrivals_file: str,
    compare_file: str | None,
    output: str,
    report_file: str | None,
    pool: str | None,
    entry_ttl_ms: int,
) -> None:
    """Replay recorded or generated arrivals through the real matching core.

    The same code the server runs (windows, fill timeouts, TTLs, tie-breaks) on a
    simulated clock, no sockets: how long entries wait and how close their groups
    are under a policy (and --compare another) before players see it. Same inputs,
    same output, byte for byte. See docs/modes.md, Tuning a policy.
    """
    from matchmaker.simulate.main import simulate_files

    files = [policy_file] if compare_file is None else [policy_file, compare_file]
    try:
        simulate_files(
            files,
            arrivals_file,
            output=output,
            report_file=report_file,
            pool=pool,
            limits=Limits(entry_ttl_ms=entry_ttl_ms),
        )
    except CodedError as exc:
        raise CommandError(exc) from None


main.add_command(admin)


if __name__ == "__main__":
    main()


def _name_the_chosen_server(rows: list[dict[str, Any]]) -> None:
    """``server: auto`` names what it resolves to on this machine (``auto (picows)``;
    ``chosen`` in JSON), which depends on what is installed, not on the config."""
    from matchmaker.servers.choice import resolve_server

    for row in rows:
        if row["key"] == "server" and row["value"] == "auto":
            row["chosen"] = resolve_server("auto")
