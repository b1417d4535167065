"""``web start`` and ``web export``: the dashboard (needs the ``web`` extra).

The CLI loads this module by name (``tasktool.cli.commands.COMMANDS``) so it never
imports the web front end; starlette and hypercorn load inside the commands.
"""

from __future__ import annotations

import webbrowser
from pathlib import Path

import click

from tasktool.model.extras import missing_extra, require
from tasktool.planning.repository import Invocation, serving_loader

__all__ = ["export_command", "start_command", "web_group"]


@click.group("web")
def web_group() -> None:
    """The web dashboard: serve it, or export it as a static site."""


@web_group.command("start")
@click.option("--host", metavar="ADDR", help="Bind address (web.host; default 127.0.0.1).")
@click.option(
    "--port", type=click.IntRange(0, 65535), help="Port (web.port; default 8080; 0: any free)."
)
@click.option(
    "--readonly/--no-readonly", default=None, help="Serve without editing (web.readonly)."
)
@click.option(
    "--open/--no-open",
    "open_browser",
    default=None,
    help="Open a browser at the dashboard (web.auto_open_browser).",
)
@click.pass_obj
def start_command(
    options: Invocation,
    /,
    *,
    host: str | None,
    port: int | None,
    readonly: bool | None,
    open_browser: bool | None,
) -> None:
    """Serve the dashboard and its JSON API until interrupted (Ctrl+C).

    Binds 127.0.0.1:8080 unless web.host/web.port, TASKTOOL_WEB_HOST/PORT or
    --host/--port say otherwise. There is no authentication: a bind that is not
    loopback prints a warning naming what it exposes; pair it with --readonly
    for remote viewing. Refuses to start when the config's next section is
    malformed.
    """
    require("web")  # watchfiles too, which only the running server imports
    from tasktool.web.app import WebConfig
    from tasktool.web.server import Bound, exposure_banner, listen, serve_until_signalled

    load, repo = serving_loader(options.overrides(), options.warn)
    config = repo.config
    bind_host = config.web_host if host is None else host
    bind_port = config.web_port if port is None else port
    read_only = config.web_readonly if readonly is None else readonly
    browse = config.web_auto_open_browser if open_browser is None else open_browser
    banner = exposure_banner(bind_host, readonly=read_only)
    if banner:
        click.echo(banner, err=True)
    sock = listen(bind_host, bind_port)
    web_config = WebConfig.serving(load, repo, readonly=read_only)

    def ready(bound: Bound) -> None:
        mode = " (read-only)" if read_only else ""
        click.echo(f"tasktool dashboard on {bound.url}{mode}; Ctrl+C stops it", err=True)
        if browse:
            webbrowser.open(bound.url)

    serve_until_signalled(web_config, sock, ready, bind_host)


@web_group.command("export")
@click.option(
    "-o",
    "--output",
    "output",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIR",
    help="Directory to write the site into (created; nothing in it is deleted).",
)
@click.pass_obj
def export_command(options: Invocation, /, *, output: Path) -> None:
    """Write the dashboard as a static site: pages plus the API's JSON under api/.

    Works from any static file host and from file:// (filtering and sorting
    included; editing and live reload need web start). Refuses when the
    config's next section is malformed.
    """
    try:  # the pages are rendered without any library of the extra today
        from tasktool.web.export import export_site
    except ImportError as exc:
        raise missing_extra("web", exc) from None
    load, _repo = serving_loader(options.overrides(), options.warn)
    count = export_site(load, output)
    click.echo(f"wrote {count} files to {output}", err=True)
