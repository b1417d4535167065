"""The ``tasktool`` command line."""

from __future__ import annotations

import click

from tasktool import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tasktool")
def main() -> None:
    """Manage tasks kept as Markdown files with YAML frontmatter."""


if __name__ == "__main__":
    main()
