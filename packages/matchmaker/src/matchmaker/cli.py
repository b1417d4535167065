"""The ``matchmaker`` command line."""

from __future__ import annotations

import click

from matchmaker import __version__


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="matchmaker")
def main() -> None:
    """Run the realtime matchmaking service."""
    click.echo("matchmaker: the server is not built yet", err=True)


if __name__ == "__main__":
    main()
