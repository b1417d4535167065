"""Tables for ``matchmaker admin`` (rich: colour on a terminal, plain text otherwise)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

__all__ = ["print_project", "print_projects"]


def print_projects(projects: Sequence[Mapping[str, Any]]) -> None:
    """One row per Project: id, label, lockdown, how many keys, the policies."""
    table = Table("id", "displayName", "lockdown", "keys", "policies")
    for project in projects:
        table.add_row(
            str(project["id"]),
            str(project.get("displayName") or ""),
            "yes" if project.get("lockdown") else "no",
            str(len(project.get("keys") or ())),
            ", ".join(_policy(p) for p in project.get("policies") or ()),
        )
    Console(soft_wrap=True).print(table)


def print_project(project: Mapping[str, Any], etag: str | None = None) -> None:
    """A Project's fields (and its ETag), then one row per policy; key secrets are not shown."""
    console = Console(soft_wrap=True)
    fields = Table("field", "value", show_header=False)
    fields.add_row("id", str(project["id"]))
    if etag is not None:
        fields.add_row("etag", etag)
    fields.add_row("displayName", str(project.get("displayName") or ""))
    fields.add_row("lockdown", "yes" if project.get("lockdown") else "no")
    fields.add_row("keys", f"{len(project.get('keys') or ())} (secrets not shown)")
    console.print(fields)
    policies = Table("policy", "mode", "groupSize", "default", "filter")
    for policy in project.get("policies") or ():
        policies.add_row(
            str(policy["name"]),
            str(policy["mode"]),
            str(policy["groupSize"]),
            "yes" if policy.get("default") else "",
            ", ".join(f"{k}={v}" for k, v in (policy.get("filter") or {}).items()),
        )
    console.print(policies)


def _policy(policy: Mapping[str, Any]) -> str:
    mark = "*" if policy.get("default") else ""
    return f"{policy['name']}{mark}"
