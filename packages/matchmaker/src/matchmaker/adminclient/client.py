"""A synchronous client of the ``/admin`` API (httpx), turning every failure into a coded error."""

from __future__ import annotations

import urllib.parse
from typing import Any

import httpx

from matchmaker.errors import MatchmakerError

__all__ = ["AdminClient", "AdminError"]

_PAGE = 1000


class AdminError(MatchmakerError):
    """An ``/admin`` error answer (its code and message) or ``admin.unreachable``."""

    code = "admin.unreachable"


class AdminClient:
    """The management port at ``url`` (``http://host:port``), authenticated with ``key``."""

    def __init__(self, url: str, key: str, *, timeout_s: float = 10.0) -> None:
        self.url = url.rstrip("/")
        self.etags: dict[str, str] = {}
        """The ``ETag`` of every Project this client has read or written, by id: what
        ``patch`` and ``delete`` send as ``If-Match`` to change only what was read."""
        self._http = httpx.Client(
            base_url=self.url,
            headers={"Authorization": f"Bearer {key}"},
            timeout=timeout_s,
        )

    def __enter__(self) -> AdminClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.close()

    def list_projects(self) -> list[dict[str, Any]]:
        """Every Project, following the cursor through all pages."""
        projects: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            params: dict[str, str | int] = {"limit": _PAGE}
            if cursor is not None:
                params["cursor"] = cursor
            page = self._call("GET", "/admin/projects", params=params)
            projects.extend(page["projects"])
            self.etags.update(page.get("etags") or {})
            cursor = page["next_cursor"]
            if cursor is None:
                return projects

    def get(self, project_id: str) -> dict[str, Any]:
        result: dict[str, Any] = self._call("GET", _path(project_id), project_id=project_id)
        return result

    def create(self, project: dict[str, Any], *, dry_run: bool = False) -> dict[str, Any]:
        """``POST``; with ``dry_run`` the server checks everything and stores nothing."""
        result: dict[str, Any] = self._call(
            "POST",
            "/admin/projects",
            json=project,
            project_id=project.get("id"),
            params=_dry(dry_run),
        )
        return result

    def patch(
        self,
        project_id: str,
        patch: dict[str, Any],
        *,
        if_match: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Merge-patch; with ``if_match`` (an ETag) only if the Project is still at it."""
        result: dict[str, Any] = self._call(
            "PATCH",
            _path(project_id),
            json=patch,
            project_id=project_id,
            if_match=if_match,
            params=_dry(dry_run),
        )
        return result

    def delete(
        self, project_id: str, *, if_match: str | None = None, dry_run: bool = False
    ) -> None:
        """Delete; with ``if_match`` (an ETag) only if the Project is still at it."""
        self._call("DELETE", _path(project_id), if_match=if_match, params=_dry(dry_run))
        if not dry_run:
            self.etags.pop(project_id, None)

    def _call(
        self,
        method: str,
        path: str,
        *,
        project_id: object = None,
        if_match: str | None = None,
        **kwargs: Any,
    ) -> Any:
        headers = {} if if_match is None else {"If-Match": if_match}
        try:
            response = self._http.request(method, path, headers=headers, **kwargs)
        except httpx.HTTPError as exc:
            raise AdminError(
                f"cannot reach the management port at {self.url}: {exc or type(exc).__name__}",
                code="admin.unreachable",
            ) from None
        if response.status_code == 204:
            return None
        try:
            body = response.json()
        except ValueError:
            body = None
        if response.is_success and body is not None:
            if isinstance(project_id, str) and "etag" in response.headers:
                self.etags[project_id] = response.headers["etag"]
            return body
        error = body.get("error") if isinstance(body, dict) else None
        if not isinstance(error, dict) or "code" not in error:
            raise AdminError(
                f"{self.url} answered {response.status_code} without an /admin error body "
                "(is this a matchmaker management port?)",
                code="admin.bad_response",
            )
        raise AdminError(
            str(error.get("message", "")),
            code=str(error["code"]),
            details={"status": response.status_code, **(error.get("details") or {})},
        )


def _dry(dry_run: bool) -> dict[str, str]:
    return {"dryRun": "true"} if dry_run else {}


def _path(project_id: str) -> str:
    return "/admin/projects/" + urllib.parse.quote(project_id, safe="")
