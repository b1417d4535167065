"""The command-line face of a malformed command line, shared by both products' click CLIs.

Imported only by the CLIs: ``import mtcommon`` does not load click.
"""

from __future__ import annotations

import sys
from typing import IO, Any

import click

from mtcommon.errors import render_usage

__all__ = ["OneLineUsageGroup", "UsageLine"]


class UsageLine(click.UsageError):
    """A usage error as one line on stderr (``error: <message> (see '<command> --help')
    [<code>]``, code ``usage`` or a more precise one), exit 2; click's own form takes
    three lines."""

    def __init__(
        self, message: str, ctx: click.Context | None = None, *, code: str = "usage"
    ) -> None:
        super().__init__(message, ctx)
        self.code = code

    def show(self, file: IO[Any] | None = None) -> None:
        path = self.ctx.command_path if self.ctx is not None else None
        line = render_usage(self.format_message(), path, code=self.code)
        click.echo(line, file=file or sys.stderr)

    @classmethod
    def of(cls, error: click.UsageError) -> click.UsageError:
        """``error`` as a one-liner (the help screen of a bare command stays as it is)."""
        if isinstance(error, cls | click.exceptions.NoArgsIsHelpError):
            return error
        return cls(error.format_message(), error.ctx)


class OneLineUsageGroup(click.Group):
    """A click group whose usage errors (its own and its subcommands', while parsing or
    running) are shown as one :class:`UsageLine`."""

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
            raise UsageLine.of(exc) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            exc.ctx = exc.ctx or ctx  # a check in the command body names the command too
            raise UsageLine.of(exc) from None
