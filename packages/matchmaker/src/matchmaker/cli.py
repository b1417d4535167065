"""The ``matchmaker`` command line: flags and ``MATCHMAKER_*`` variables to a ``ServerConfig``."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import sys
from collections.abc import Callable
from typing import IO, Any, TypeVar

import click

from matchmaker import __version__
from matchmaker.config import Limits, ServerConfig
from matchmaker.errors import MatchmakerError
from mtcommon import render_line, render_usage

F = TypeVar("F", bound=Callable[..., Any])

ENV_PREFIX = "MATCHMAKER"
KEY_ENV_VARS = ["MATCHMAKER_MANAGEMENT_KEY", "REALTIME_MGMT_KEY"]

# One help line per data-plane limit; a test checks every Limits field is here.
LIMIT_HELP = {
    "max_frame_bytes": "Largest inbound WebSocket frame, in bytes.",
    "max_send_bytes": "Largest session.send payload (and public profile), in bytes.",
    "max_attributes": "Most attributes a client may declare.",
    "max_attribute_value_chars": "Longest attribute string value.",
    "max_pools_per_client": "Pools one client may wait in at once.",
    "max_sessions_per_client": "Sessions one client may be a member of at once.",
    "max_session_members": "Largest session (and largest policy groupSize).",
    "outbound_queue": "Messages queued per connection before it is closed as slow.",
    "handshake_timeout_s": "Seconds a new connection has to send hello.",
    "entry_ttl_ms": "Milliseconds a pool entry waits before it expires.",
    "heartbeat_interval_ms": "Milliseconds between server pings.",
    "heartbeat_timeout_ms": "Milliseconds of silence before a connection is dropped.",
    "control_rate_per_s": "Sustained control messages per second per connection.",
    "control_burst": "Burst of control messages per connection.",
    "send_rate_per_s": "Sustained session.send messages per second per connection.",
    "send_burst": "Burst of session.send messages per connection.",
    "proposal_ttl_ms": "Default and longest life of a proposal, in milliseconds.",
    "max_open_proposals": "Open proposals one client may have made at once.",
    "max_pending_proposals": "Unanswered proposals one client may be named in at once.",
    "delegate_grace_ms": "Milliseconds a delegated-pool entry waits for a delegate "
    "before it is told pool.no_delegate.",
    "resume_grace_ms": "Milliseconds a dropped client may resume before it is removed.",
    "resume_buffer": "Recent events kept per client for replay on resume.",
}


class CommandError(click.ClickException):
    """A coded error shown as one line on stderr (``error: <message> [<code>]``), exit 1."""

    def __init__(self, error: MatchmakerError) -> None:
        super().__init__(error.message)
        self.error = error

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(render_line(self.error), file=file or sys.stderr)


class UsageLine(click.UsageError):
    """A usage error as one line on stderr (``error: <message> (see '<command> --help')
    [usage]``, ``mtcommon.render_usage`` as tasktool prints it), exit 2; click's own form
    takes three lines."""

    def show(self, file: IO[Any] | None = None) -> None:
        path = self.ctx.command_path if self.ctx is not None else None
        line = render_usage(self.format_message(), path, code="usage")
        click.echo(line, file=file or sys.stderr)


class _Command(click.Command):
    """``click.Command`` whose usage errors, while parsing or running, are one line."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as exc:
            raise UsageLine(exc.format_message(), exc.ctx) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            raise UsageLine(exc.format_message(), exc.ctx or ctx) from None


def _limit_options(command: F) -> F:
    for field in reversed(dataclasses.fields(Limits)):
        default = field.default
        command = click.option(
            f"--{field.name.replace('_', '-')}",
            field.name,
            type=(
                click.FloatRange(min=0, min_open=True)
                if isinstance(default, float)
                else click.IntRange(min=1)
            ),
            default=default,
            show_default=True,
            help=LIMIT_HELP[field.name],
        )(command)
    return command


@click.command(
    cls=_Command,
    context_settings={
        "help_option_names": ["-h", "--help"],
        "auto_envvar_prefix": ENV_PREFIX,
        "show_default": True,
    },
)
@click.version_option(__version__, prog_name="matchmaker")
@click.option("--host", default="127.0.0.1", help="Address of the data plane (WebSocket).")
@click.option("--port", type=click.IntRange(0, 65535), default=8080, help="Data-plane port.")
@click.option(
    "--management-host",
    default=None,
    help="Address of the control plane (default: --host).",
    show_default=False,
)
@click.option(
    "--management-port", type=click.IntRange(0, 65535), default=8081, help="Control-plane port."
)
@click.option(
    "--management-key",
    "--mgmt-key",
    "management_key",
    envvar=KEY_ENV_VARS,
    default=None,
    show_envvar=True,
    help="Key that /admin requires as 'Authorization: Bearer <key>'. Without one there is no "
    "control plane and every Project is implicit.",
)
@click.option(
    "--store",
    "store_url",
    default=None,
    help="Project store: memory://, sqlite:///path.db or postgresql://... "
    "[default with a key: sqlite:///matchmaker.db]",
    show_default=False,
)
@click.option(
    "--require-declared-projects",
    is_flag=True,
    default=False,
    help="Refuse clients whose Project was not declared through the control plane.",
)
@click.option(
    "--shutdown-grace",
    "shutdown_grace_s",
    type=click.FloatRange(min=0),
    default=5.0,
    help="Seconds open connections get to finish on SIGTERM/SIGINT.",
)
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"], case_sensitive=False),
    default="info",
    help="Lowest level of log lines written to stderr.",
)
@_limit_options
def main(log_level: str, **values: Any) -> None:
    """Run the realtime matchmaking service.

    Serves the WebSocket data plane on --port and, when a management key is
    given, the /admin control plane on --management-port. Every option can
    also be set from the environment as MATCHMAKER_<OPTION> (for example
    MATCHMAKER_STORE); the key also from REALTIME_MGMT_KEY. Stops gracefully
    on SIGTERM or SIGINT.
    """
    limit_names = {field.name for field in dataclasses.fields(Limits)}
    limits = Limits(**{name: values.pop(name) for name in limit_names})
    if values["management_key"] == "":
        raise click.BadParameter("must not be empty", param_hint="--management-key")
    config = ServerConfig(limits=limits, **values)
    logging.basicConfig(
        level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    from matchmaker.server import serve_until_signalled

    try:
        asyncio.run(serve_until_signalled(config))
    except MatchmakerError as exc:
        raise CommandError(exc) from None


if __name__ == "__main__":
    main()
