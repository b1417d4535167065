"""Real local trackers for the sync tests: small Starlette apps served by hypercorn.

:class:`FakeGitHub` implements ``GET /repos/{owner}/{repo}/issues`` (Bearer
token, ``state`` filter, pull requests mixed in, Link-header paging);
:class:`FakeJira` implements ``POST /rest/api/3/search/jql`` (Basic auth,
``project = "KEY"`` JQL, cursor paging, ADF descriptions). Both can be told to
answer the next requests with canned failures (rate limits, 5xx) and record
every request they saw. Each runs in its own thread and event loop on
127.0.0.1, on a port the kernel picks; the socket listens before the thread
starts, so the first request never races the server's start.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import re
import socket
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from hypercorn.asyncio import serve
from hypercorn.config import Config
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tasktool.cli.main import main

GITHUB_TOKEN = "ghp_secret_token_0123456789"
JIRA_USER = "dev@example.com"
JIRA_TOKEN = "jira_secret_token_9876543210"


@dataclass
class Canned:
    """A response to give instead of the real one."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None


@dataclass
class Seen:
    """One request as the server saw it."""

    method: str
    path: str
    query: str
    authorization: str | None
    body: Any = None


class Tracker:
    """What both fakes share: canned failures, the request log, the served thread."""

    page_size = 2

    def __init__(self, project: str) -> None:
        self.project = project
        self.issues: dict[Any, dict[str, Any]] = {}  # GitHub: by number; Jira: by key
        self.canned: list[Canned] = []
        self.seen: list[Seen] = []
        self.url = ""

    def fail_next(self, *responses: Canned) -> None:
        self.canned.extend(responses)

    async def _prelude(self, request: Request) -> Response | None:
        body = None
        if request.method == "POST":
            body = await request.json()
        self.seen.append(
            Seen(
                request.method,
                request.url.path,
                request.url.query,
                request.headers.get("authorization"),
                body,
            )
        )
        if self.canned:
            canned = self.canned.pop(0)
            return JSONResponse(
                canned.body or {"message": "canned"},
                status_code=canned.status,
                headers=canned.headers,
            )
        return None

    def app(self) -> Starlette:
        raise NotImplementedError


class FakeGitHub(Tracker):
    """``owner/repo`` issues; numbers ascend; ``issues`` may be edited between syncs."""

    link_host: str | None = None

    def add(self, number: int, title: str, **fields: Any) -> dict[str, Any]:
        issue: dict[str, Any] = {
            "number": number,
            "title": title,
            "body": fields.pop("body", f"Body of {title}."),
            "state": fields.pop("state", "open"),
            "labels": [{"name": name} for name in fields.pop("labels", [])],
            "assignee": {"login": assignee} if (assignee := fields.pop("assignee", None)) else None,
            "html_url": f"https://github.example/{self.project}/issues/{number}",
            **fields,
        }
        self.issues[number] = issue
        return issue

    async def issues_endpoint(self, request: Request) -> Response:
        early = await self._prelude(request)
        if early is not None:
            return early
        if request.headers.get("authorization") != f"Bearer {GITHUB_TOKEN}":
            return JSONResponse({"message": "Bad credentials"}, status_code=401)
        project = f"{request.path_params['owner']}/{request.path_params['repo']}"
        if project != self.project:
            return JSONResponse({"message": "Not Found"}, status_code=404)
        state = request.query_params.get("state", "open")
        page = int(request.query_params.get("page", "1"))
        size = min(int(request.query_params.get("per_page", "30")), self.page_size)
        chosen = [
            issue
            for _, issue in sorted(self.issues.items())
            if state == "all" or issue["state"] == state
        ]
        chunk = chosen[(page - 1) * size : page * size]
        headers = {}
        if page * size < len(chosen):
            following = request.url.include_query_params(page=page + 1, per_page=size)
            if self.link_host is not None:  # a server pointing the next page elsewhere
                following = following.replace(netloc=self.link_host)
            headers["Link"] = f'<{following}>; rel="next", <{request.url}>; rel="first"'
        return JSONResponse(chunk, headers=headers)

    def app(self) -> Starlette:
        return Starlette(
            routes=[Route("/repos/{owner}/{repo}/issues", self.issues_endpoint, methods=["GET"])]
        )


def adf(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"type": "doc", "version": 1, "content": list(blocks)}


def paragraph(*inline: dict[str, Any]) -> dict[str, Any]:
    return {"type": "paragraph", "content": list(inline)}


def text(value: str, *marks: str) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "text", "text": value}
    if marks:
        node["marks"] = [{"type": mark} for mark in marks]
    return node


_PROJECT = re.compile(r'^project = "([A-Z][A-Z0-9_]*)"')


class FakeJira(Tracker):
    """One project's issues by key; ``jql`` strings received are kept in ``seen``."""

    def add(self, number: int, summary: str, **fields: Any) -> dict[str, Any]:
        key = f"{self.project}-{number}"
        data = {
            "summary": summary,
            "description": fields.pop("description", adf(paragraph(text(f"About {summary}.")))),
            "status": {"name": fields.pop("status", "To Do")},
            "priority": {"name": fields.pop("priority", "Medium")},
            "labels": fields.pop("labels", []),
            "assignee": {"displayName": who} if (who := fields.pop("assignee", None)) else None,
        }
        self.issues[key] = {"id": str(10000 + number), "key": key, "fields": data}
        return self.issues[key]

    async def search(self, request: Request) -> Response:
        early = await self._prelude(request)
        if early is not None:
            return early
        expected = base64.b64encode(f"{JIRA_USER}:{JIRA_TOKEN}".encode()).decode()
        if request.headers.get("authorization") != f"Basic {expected}":
            return Response("Unauthorized", status_code=401)
        body = self.seen[-1].body
        match = _PROJECT.match(body.get("jql", ""))
        if match is None or match.group(1) != self.project:
            return JSONResponse({"errorMessages": ["no such project"]}, status_code=400)
        keys = sorted(self.issues, key=lambda key: int(key.rsplit("-", 1)[1]))
        start = int(base64.b64decode(body["nextPageToken"])) if "nextPageToken" in body else 0
        size = min(int(body.get("maxResults", 50)), self.page_size)
        chunk = [self.issues[key] for key in keys[start : start + size]]
        answer: dict[str, Any] = {"issues": chunk, "isLast": start + size >= len(keys)}
        if not answer["isLast"]:
            answer["nextPageToken"] = base64.b64encode(str(start + size).encode()).decode()
        return JSONResponse(answer)

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/rest/api/3/search/jql", self.search, methods=["POST"])])


class Served:
    """A tracker's app served by hypercorn in a thread until :meth:`stop`."""

    def __init__(self, tracker: Tracker) -> None:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        port = sock.getsockname()[1]
        tracker.url = f"http://127.0.0.1:{port}"
        config = Config()
        config.bind = [f"fd://{sock.detach()}"]
        config.accesslog = None
        config.errorlog = logging.getLogger("hypercorn.error")  # not the CLI's stderr
        config.graceful_timeout = 1.0
        self._loop = asyncio.new_event_loop()
        self._stop = asyncio.Event()
        app = tracker.app()

        def run() -> None:
            asyncio.set_event_loop(self._loop)
            self._loop.run_until_complete(
                serve(app, config, shutdown_trigger=self._stop.wait)  # type: ignore[arg-type]
            )

        self._thread = threading.Thread(target=run, name="fake-tracker", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=10)
        self._loop.close()


class Workspace:
    """A repository with a task directory, a config naming the fake trackers, and a CLI."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.tasks = root / "tasks"
        self.tasks.mkdir(parents=True)
        (root / ".git").mkdir()
        self.home = root / "home"
        self.home.mkdir()
        self.env = {"HOME": str(self.home), "GH_TOKEN": GITHUB_TOKEN}
        self.env |= {"JIRA_USER": JIRA_USER, "JIRA_TOKEN": JIRA_TOKEN}

    def configure(self, sources: str, extra: str = "") -> Path:
        path = self.root / ".tasktool.yaml"
        path.write_text(f"dir: tasks\n{extra}sync:\n  sources:\n{sources}", encoding="utf-8")
        return path

    def sync(self, *args: str, env: dict[str, str | None] | None = None) -> Result:
        runner = CliRunner()
        merged: dict[str, str | None] = {**self.env, **(env or {})}
        return runner.invoke(
            main,
            ["--config", str(self.root / ".tasktool.yaml"), "sync", *args],
            env=merged,
            catch_exceptions=False,
        )

    def task_files(self, folder: str = "") -> dict[str, str]:
        """Relative path to text of every task file under ``tasks/<folder>``."""
        base = self.tasks / folder
        return {
            str(path.relative_to(self.tasks)): path.read_text(encoding="utf-8")
            for path in sorted(base.rglob("*.md"))
            if ".tasktool" not in path.parts
        }

    def snapshot(self) -> dict[str, bytes]:
        """Every file under the repository root (for "nothing written")."""
        return {
            str(path.relative_to(self.root)): path.read_bytes()
            for path in sorted(self.root.rglob("*"))
            if path.is_file()
        }


def _entry(lines: list[str], extra: dict[str, str]) -> str:
    """One ``sync.sources`` item of the config, with ``extra`` keys (YAML flow values)."""
    lines = lines + [f"      {key}: {value}" for key, value in extra.items()]
    return "\n".join(lines) + "\n"


def github_entry(url: str, **extra: str) -> str:
    lines = [
        "    - name: github",
        "      project: acme/widgets",
        f"      base_url: {url}",
        "      token_env: GH_TOKEN",
        "      output_dir: tasks/github",
        "      field_map:",
        "        status: {open: pending, closed: completed}",
        "        priority: {p1: critical, p2: high}",
        "        labels_to_tags: true",
        "        assignee_to_owner: true",
    ]
    return _entry(lines, extra)


def jira_entry(url: str, **extra: str) -> str:
    lines = [
        "    - name: jira",
        "      project: PROJ",
        f"      base_url: {url}",
        "      user_env: JIRA_USER",
        "      token_env: JIRA_TOKEN",
        "      output_dir: tasks/jira",
        "      field_map:",
        "        status: {To Do: pending, In Progress: in-progress, Done: completed}",
        "        priority: {Highest: critical, High: high, Medium: medium, Low: low}",
        "        labels_to_tags: true",
        "        assignee_to_owner: true",
    ]
    return _entry(lines, extra)
