"""``matchmaker admin``: the management port from the command line, like an operator's kubectl.

httpx and rich are imported by the commands that use them, so ``matchmaker
--help`` and the server start without them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

import click

from matchmaker.configure.options import ADMIN_OPTIONS, OPTIONS
from matchmaker.errors import MatchmakerError
from mtcommon import CodedError, render_line

if TYPE_CHECKING:
    from matchmaker.adminclient.client import AdminClient
    from matchmaker.adminclient.plan import PlanStep

F = TypeVar("F", bound=Callable[..., Any])

__all__ = ["HINTS", "admin"]

_URL = ADMIN_OPTIONS[0]
_KEY = next(option for option in OPTIONS if option.field == "management_key")
_STORE = next(option for option in OPTIONS if option.field == "store_url")

HINTS = {
    "admin.unreachable": "is the server running with a management key, and is --url right?",
    "admin.bad_response": "--url must point at the management port, not the data port",
    "admin.invalid_file": "fix the file; nothing was sent",
    "auth.unauthorized": f"check --key / {_KEY.env}",
    "request.malformed_json": "the body is not valid JSON",
    "request.invalid": "the server refused a field; see the message",
    "request.duplicate_key": "write each key once per object in the file",
    "request.unsupported_media_type": "the request was not sent as JSON",
    "request.too_large": "the body is over the server's --max-body-bytes",
    "request.timeout": "the body did not arrive within the server's --body-timeout-s",
    "request.aborted": "the connection was cut while sending the body; retry",
    "project.reserved_id": "the id 'default' cannot be declared",
    "project.exists": "use 'projects patch' or 'apply' to change an existing Project",
    "project.secret_in_use": "each key secret may be bound to one Project only",
    "project.conflict": "the Project changed since it was read; read it again and retry",
    "project.not_found": "'projects list' shows the ids that exist",
    "project.limit": "the server's per-Project limits refused it",
    "route.not_found": "--url must be the management port's base URL",
    "method.not_allowed": "the server does not support this call (version mismatch?)",
    "store.corrupt": "a stored Project no longer decodes; the server log names it",
    "store.unavailable": "the server's Project store is down; retry when /readyz is 200",
    "store.key_mismatch": "the store was sealed under another store key (--store-key-file)",
    "server.internal": "the server failed; its log has the details",
    "server.shutting_down": "the server is stopping; retry against another node",
    "cluster.unavailable": "the node cannot reach the cluster's Redis; retry when /readyz is 200",
}
"""A next step for every error code the management port answers (a test checks each has one)."""


class AdminFailure(click.ClickException):
    """An /admin error as one line, ``error: <message> (<hint>) [<code>]``; exit 1."""

    def __init__(self, error: CodedError) -> None:
        super().__init__(error.message)
        self.error = error

    def show(self, file: IO[Any] | None = None) -> None:
        hint = HINTS.get(self.error.code)
        message = self.error.message + (f" ({hint})" if hint else "")
        click.echo(render_line(CodedError(message, code=self.error.code)), file=file or sys.stderr)


def _connection_options(command: F) -> F:
    command = click.option(
        "--format",
        "output",
        type=click.Choice(["table", "json"]),
        default="table",
        show_default=True,
        help="A table for people (rich on a terminal), or JSON for programs.",
    )(command)
    command = click.option(
        "--key",
        envvar=list(_KEY.envs),
        show_envvar=True,
        required=True,
        help="The management key.",
    )(command)
    return click.option(
        _URL.flag,
        envvar=_URL.env,
        show_envvar=True,
        default=_URL.default,
        show_default=True,
        help=_URL.help,
    )(command)


@contextmanager
def _client(url: str, key: str) -> Iterator[AdminClient]:
    from matchmaker.adminclient.client import AdminClient

    try:
        with AdminClient(url, key) as client:
            yield client
    except CodedError as exc:
        raise AdminFailure(exc) from None


@click.group()
def admin() -> None:
    """Manage the Projects of a running server through its management port."""


@admin.group()
def projects() -> None:
    """List, read, create, patch and delete Projects."""


@projects.command("list")
@_connection_options
def list_projects(url: str, key: str, output: str) -> None:
    """List every Project (all pages)."""
    with _client(url, key) as client:
        found = client.list_projects()
    if output == "json":
        _print_json(found)
        return
    from matchmaker.adminclient.present import print_projects

    print_projects(found)


@projects.command()
@click.argument("project_id", metavar="ID")
@_connection_options
def get(project_id: str, url: str, key: str, output: str) -> None:
    """Show one Project."""
    with _client(url, key) as client:
        project = client.get(project_id)
    if output == "json":
        _print_json(project)
        return
    from matchmaker.adminclient.present import print_project

    print_project(project, client.etags.get(project_id))


@projects.command()
@click.option("-f", "--file", "path", required=True, help="YAML or JSON Project ('-': stdin).")
@_connection_options
def create(path: str, url: str, key: str, output: str) -> None:
    """Declare a Project from a file in the POST /admin/projects body shape."""
    body = _read_mapping(path)
    with _client(url, key) as client:
        project = client.create(body)
    _done(f"created {project['id']}", project, output)


_IF_MATCH = click.option(
    "--if-match",
    metavar="ETAG",
    help="Change the Project only if it is still at this ETag ('projects get' shows it); "
    "else it fails with project.conflict.",
)


@projects.command()
@click.argument("project_id", metavar="ID")
@click.option("-f", "--file", "path", required=True, help="YAML or JSON merge patch ('-': stdin).")
@_IF_MATCH
@_connection_options
def patch(
    project_id: str, path: str, *, if_match: str | None, url: str, key: str, output: str
) -> None:
    """Merge-patch a Project (displayName, lockdown, keys, policies) from a file."""
    body = _read_mapping(path)
    with _client(url, key) as client:
        project = client.patch(project_id, body, if_match=if_match)
    _done(f"patched {project_id}", project, output)


@projects.command()
@click.argument("project_id", metavar="ID")
@_IF_MATCH
@_connection_options
def delete(project_id: str, if_match: str | None, url: str, key: str, output: str) -> None:
    """Delete a Project's config (its live sessions and pools drain)."""
    with _client(url, key) as client:
        client.delete(project_id, if_match=if_match)
    _done(f"deleted {project_id}", {"deleted": project_id}, output)


@admin.command()
@click.option("-f", "--file", "path", required=True, help="YAML file with a 'projects:' list.")
@click.option("--prune", is_flag=True, help="Also delete Projects the file does not list.")
@click.option(
    "--dry-run", is_flag=True, help="Check every change with the server without making it."
)
@_connection_options
def apply(*, path: str, prune: bool, dry_run: bool, url: str, key: str, output: str) -> None:
    """Make the server's Projects match a file: create, patch (and with --prune delete).

    All or nothing for a bad file: the server checks every change first (its
    dry run), so a file with one invalid Project changes nothing; --dry-run
    stops after that check. Idempotent: applying the same file again changes
    nothing. Each line of the report is '+' created, '~' patched (with the
    fields), '-' deleted or '=' unchanged; key secrets are never printed. A
    secret may move between Projects of the file: it is released first.
    Patches and deletes carry the ETag each Project had when the plan was made
    (If-Match): a Project changed by someone else in the meantime stops the run
    with project.conflict.
    """
    from matchmaker.adminclient.apply import carry_out, check
    from matchmaker.adminclient.plan import desired_projects, plan

    try:
        desired = desired_projects(_read_yaml(path), path)
    except MatchmakerError as exc:
        raise AdminFailure(exc) from None
    where = {project["id"]: f"projects[{i}]" for i, project in enumerate(desired)}
    with _client(url, key) as client:
        current = client.list_projects()
        steps = plan(current, desired, prune=prune)
        check(client, steps, where)
        outcome = None if dry_run else carry_out(client, steps, where)
    before = {project["id"]: project for project in current}
    done = steps.changes if outcome is None else outcome.applied
    if output == "json":
        report: dict[str, Any] = {"dry_run": dry_run, "changes": [_step(c) for c in done]}
        if outcome is not None and outcome.failed is not None and outcome.error is not None:
            report["failed"] = {**_step(outcome.failed), **outcome.error.to_payload()}
            report["not_applied"] = [_step(c) for c in outcome.not_applied]
        _print_json(report)
    else:
        for change in done:
            for line in change.describe(before.get(change.project_id)):
                click.echo(line)
    if outcome is not None and outcome.error is not None:
        if output != "json":
            click.echo("not applied: " + ", ".join(_step_line(c) for c in outcome.not_applied))
        raise AdminFailure(outcome.error)
    if output != "json":
        counts = {action: sum(c.action == action for c in done) for action in _ACTIONS}
        summary = ", ".join(f"{n} {_ACTIONS[a]}" for a, n in counts.items())
        click.echo(("dry run, nothing changed: " if dry_run else "") + summary)


def _step(change: PlanStep) -> dict[str, Any]:
    return {"action": change.action, "id": change.project_id, "fields": list(change.fields)}


def _step_line(change: PlanStep) -> str:
    return f"{change.sign} {change.project_id}"


@admin.command("rotate-store-key")
@click.option(
    "--store",
    "store_url",
    envvar=_STORE.env,
    show_envvar=True,
    required=True,
    help="The store whose secrets to re-seal: sqlite:///path.db or postgresql://...",
)
@click.option(
    "--old-key-file",
    "old_key_files",
    multiple=True,
    help="A store key the secrets are sealed under now (repeatable); none for a store "
    "run without --store-key-file (secrets in clear).",
)
@click.option(
    "--new-key-file",
    required=True,
    help="The store key to seal them under (32 random bytes in base64: openssl rand -base64 32).",
)
def rotate_store_key(store_url: str, old_key_files: tuple[str, ...], new_key_file: str) -> None:
    """Re-seal every client secret of a store under a new store key, in one transaction.

    Works on the store directly (not through a server): stop the servers first,
    then start them with --store-key-file naming the new key. Each Project is
    opened with the old key its row names (rows in clear need none), sealed
    under the new key, and the secret index is rebuilt. If a row was sealed
    under a key not given, nothing is changed (store.key_mismatch).
    """
    import asyncio

    from matchmaker.adminclient.rekey import rotate

    try:
        count, key_id = asyncio.run(rotate(store_url, old_key_files, new_key_file))
    except CodedError as exc:
        raise AdminFailure(exc) from None
    click.echo(f"re-sealed the secrets of {count} Project(s) under store key {key_id}")


_ACTIONS = {"create": "created", "patch": "patched", "delete": "deleted", "unchanged": "unchanged"}


def _read_yaml(path: str) -> Any:
    from mtcommon import load_safe

    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
        return load_safe(text, source=path)
    except (OSError, UnicodeDecodeError) as exc:
        raise AdminFailure(
            MatchmakerError(f"cannot read {path}: {exc}", code="admin.invalid_file")
        ) from None
    except CodedError as exc:
        raise AdminFailure(exc) from None


def _read_mapping(path: str) -> dict[str, Any]:
    data = _read_yaml(path)
    if not isinstance(data, dict):
        raise AdminFailure(
            MatchmakerError(
                f"{path}: expected a mapping (a JSON object)", code="admin.invalid_file"
            )
        )
    return data


def _done(message: str, value: Any, output: str) -> None:
    if output == "json":
        _print_json(value)
    else:
        click.echo(message)


def _print_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False))
