"""Jira Cloud issues (REST v3): ``POST /rest/api/3/search/jql``, Basic auth, cursor paging.

The query is ``project = "KEY"``, ANDed with ``filters.jql`` when given; pages
follow ``nextPageToken`` until ``isLast`` (or no token). Basic auth takes the
account e-mail from ``user_env`` and the API token from ``token_env``, both
required. Descriptions arrive as ADF and become Markdown
(:mod:`tasktool.sync.adf`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tasktool.config.sync import SourceConfig
from tasktool.model.errors import TaskToolError
from tasktool.sync.adf import adf_to_markdown
from tasktool.sync.remote import RemoteItem
from tasktool.sync.transport import Clock, RetryPolicy, Transport

PAGE_SIZE = 50
FIELDS = ("summary", "description", "status", "priority", "labels", "assignee")


def jql(config: SourceConfig) -> str:
    """The search: the project, and the configured extra query."""
    query = f'project = "{config.project}"'
    if config.jql:
        query += f" AND ({config.jql})"
    return query + " ORDER BY key ASC"


def _name(value: Any, *keys: str) -> str | None:
    if not isinstance(value, dict):
        return None
    for key in keys:
        found = value.get(key)
        if isinstance(found, str) and found:
            return found
    return None


def issue_item(issue: dict[str, Any], base_url: str) -> RemoteItem:
    """One issue of the search answer as a :class:`RemoteItem`."""
    key = str(issue["key"])
    fields = issue.get("fields") if isinstance(issue.get("fields"), dict) else {}
    assert isinstance(fields, dict)
    labels = tuple(
        label for label in fields.get("labels") or () if isinstance(label, str) and label
    )
    summary = fields.get("summary")
    return RemoteItem(
        external_id=key,
        title=summary if isinstance(summary, str) and summary.strip() else key,
        body=adf_to_markdown(fields.get("description")),
        status=_name(fields.get("status"), "name"),
        priority=_name(fields.get("priority"), "name"),
        labels=labels,
        assignee=_name(fields.get("assignee"), "displayName", "emailAddress", "accountId"),
        url=f"{base_url}/browse/{key}",
    )


class JiraSource:
    """The issues of one Jira project."""

    def __init__(
        self,
        config: SourceConfig,
        user: str,
        token: str,
        *,
        policy: RetryPolicy | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.config = config
        self.transport = Transport(
            source=config.name,
            headers={"Accept": "application/json", "User-Agent": "tasktool-sync"},
            auth=(user, token),
            policy=policy,
            clock=clock,
        )

    def close(self) -> None:
        self.transport.close()

    def _malformed(self) -> TaskToolError:
        return TaskToolError(
            f"sync source {self.config.name!r}: the search answer has no issues list",
            code="sync.response",
        )

    def items(self) -> Iterator[RemoteItem]:
        url = f"{self.config.base_url}/rest/api/3/search/jql"
        request: dict[str, Any] = {
            "jql": jql(self.config),
            "fields": list(FIELDS),
            "maxResults": PAGE_SIZE,
        }
        seen_tokens: set[str] = set()
        while True:
            data, _ = self.transport.request("POST", url, json=request)
            issues = data.get("issues") if isinstance(data, dict) else None
            if not isinstance(issues, list):
                raise self._malformed()
            for issue in issues:
                if isinstance(issue, dict) and isinstance(issue.get("key"), str):
                    yield issue_item(issue, self.config.base_url)
            token = data.get("nextPageToken")
            if data.get("isLast") is True or not isinstance(token, str) or not token:
                return
            if token in seen_tokens:  # a server repeating a cursor would loop forever
                raise TaskToolError(
                    f"sync source {self.config.name!r}: the search repeats a page cursor",
                    code="sync.response",
                )
            seen_tokens.add(token)
            request["nextPageToken"] = token


__all__ = ["JiraSource", "issue_item", "jql"]
