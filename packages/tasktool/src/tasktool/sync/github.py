"""GitHub issues (REST): ``GET /repos/{owner}/{repo}/issues``, token auth, Link paging.

Pull requests come back from that endpoint too (they carry a
``pull_request`` key) and are skipped. ``filters.state`` becomes the
``state`` query parameter (GitHub's default is ``open``). The ``next`` link is
followed only on the host of ``base_url``: the token is never sent elsewhere.
A repository has no priority field, so the priority is the first label that
``field_map.priority`` names.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from tasktool.config.sync import SourceConfig
from tasktool.model.errors import TaskToolError
from tasktool.sync.remote import RemoteItem
from tasktool.sync.transport import Clock, RetryPolicy, Transport

PAGE_SIZE = 100


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _labels(issue: dict[str, Any]) -> tuple[str, ...]:
    names = []
    for label in issue.get("labels") or ():
        name = label.get("name") if isinstance(label, dict) else label
        if isinstance(name, str) and name.strip():
            names.append(name)
    return tuple(names)


def issue_item(issue: dict[str, Any], project: str, priorities: dict[str, str]) -> RemoteItem:
    """One issue of the REST answer as a :class:`RemoteItem`."""
    labels = _labels(issue)
    assignee = issue.get("assignee")
    return RemoteItem(
        external_id=f"{project}#{issue['number']}",
        title=_text(issue.get("title")) or f"Issue {issue['number']}",
        body=_text(issue.get("body")) or "",
        status=_text(issue.get("state")),
        priority=next((label for label in labels if label in priorities), None),
        labels=labels,
        assignee=_text(assignee.get("login")) if isinstance(assignee, dict) else None,
        url=_text(issue.get("html_url")),
    )


class GitHubSource:
    """The issues of one repository."""

    def __init__(
        self,
        config: SourceConfig,
        token: str | None,
        *,
        policy: RetryPolicy | None = None,
        clock: Clock | None = None,
    ) -> None:
        headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": "tasktool-sync",
        }
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        self.config = config
        self.transport = Transport(source=config.name, headers=headers, policy=policy, clock=clock)

    def close(self) -> None:
        self.transport.close()

    def _next_url(self, url: str | None, visited: set[str]) -> str | None:
        if url is None:
            return None
        if url in visited:  # a server linking back would page forever
            raise TaskToolError(
                f"sync source {self.config.name!r}: the next-page link repeats a page",
                code="sync.response",
            )
        visited.add(url)
        base, link = urlsplit(self.config.base_url), urlsplit(url)
        if (link.scheme, link.netloc) != (base.scheme, base.netloc):
            raise TaskToolError(
                f"sync source {self.config.name!r}: the next page is on another host "
                f"({link.netloc}); not following it with the token",
                code="sync.response",
            )
        return url

    def items(self) -> Iterator[RemoteItem]:
        url: str | None = f"{self.config.base_url}/repos/{self.config.project}/issues"
        state = {} if self.config.state is None else {"state": self.config.state}
        params: dict[str, Any] | None = {"per_page": PAGE_SIZE, **state}
        visited: set[str] = set()
        while url is not None:
            data, response = self.transport.request("GET", url, params=params)
            if not isinstance(data, list):
                raise TaskToolError(
                    f"sync source {self.config.name!r}: the issues answer is not a list",
                    code="sync.response",
                )
            for issue in data:
                if not isinstance(issue, dict) or "pull_request" in issue:
                    continue
                if not isinstance(issue.get("number"), int):
                    continue
                yield issue_item(issue, self.config.project, self.config.field_map.priority)
            url = self._next_url(response.links.get("next", {}).get("url"), visited)
            params = None  # the next link carries the query


__all__ = ["GitHubSource", "issue_item"]
