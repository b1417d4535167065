"""A real dashboard on a free loopback port, over a small task directory."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tasktool.config import Overrides
from tasktool.planning.repository import loader
from tasktool.web.app import WebConfig
from tasktool.web.server import Bound, listen, run
from tests.tasktool.conftest import Project, task_text

CONFIG = """\
dir: tasks
phases:
  - id: mvp
    name: MVP
  - id: later
    name: Later
"""


def seed_tasks(project: Project) -> Path:
    """Five tasks: a chain 001 -> 002 -> 003, a parent with a child, one completed."""
    project.config(CONFIG)
    tasks = project.root / "tasks"
    files = {
        "001": task_text("001", "Design the API", status="in-progress", priority="high",
                         tags=["api"], phase="mvp", effort="small"),
        "002": task_text("002", "Write the server", priority="critical", dependencies=["001"],
                         tags=["api", "server"], phase="mvp"),
        "003": task_text("003", "Document it", dependencies=["002"], owner="ana", phase="later",
                         body="# Docs\n\nEvery endpoint."),
        "004": task_text("004", "Fix the flaky test", status="completed", priority="medium",
                         type="bug"),
        "005": task_text("005", "Child of 004", parent="004", priority="low"),
    }  # fmt: skip
    for task_id, text in files.items():
        project.write(f"tasks/{task_id}-task.md", text)
    # A comment and an unknown key that every edit must keep.
    path = tasks / "003-task.md"
    path.write_text(
        path.read_text().replace("owner: ana", "owner: ana  # who writes it\ncustom_key: kept"),
        encoding="utf-8",
    )
    return tasks


@dataclass
class Dashboard:
    """A running dashboard: its URL, task directory and project."""

    url: str
    host: str
    port: int
    tasks: Path
    project: Project

    def client(self, **headers: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=headers, timeout=10)

    def task_file(self, task_id: str) -> Path:
        return self.tasks / f"{task_id}-task.md"


class ServerThread:
    """``tasktool.web.server.run`` in a thread with its own event loop."""

    def __init__(self, config: WebConfig) -> None:
        self.config = config
        self.bound: Bound | None = None
        self.ready = threading.Event()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.shutdown: asyncio.Event | None = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._main, daemon=True)

    def _main(self) -> None:
        async def main() -> None:
            self.loop = asyncio.get_running_loop()
            self.shutdown = asyncio.Event()
            sock = listen("127.0.0.1", 0)

            def on_ready(bound: Bound) -> None:
                self.bound = bound
                self.ready.set()

            await run(self.config, sock, shutdown=self.shutdown, ready=on_ready)

        try:
            asyncio.run(main())
        except BaseException as exc:  # surfaced by start()
            self.error = exc
            self.ready.set()

    def start(self) -> Bound:
        self.thread.start()
        assert self.ready.wait(20), "the dashboard did not start"
        if self.error is not None:
            raise self.error
        assert self.bound is not None
        return self.bound

    def stop(self) -> None:
        if self.loop is not None and self.shutdown is not None:
            self.loop.call_soon_threadsafe(self.shutdown.set)
        self.thread.join(20)
        assert not self.thread.is_alive(), "the dashboard did not stop"


def start_dashboard(project: Project, *, readonly: bool = False) -> tuple[Dashboard, ServerThread]:
    tasks = seed_tasks(project) if not (project.root / "tasks").exists() else project.root / "tasks"
    load = loader(Overrides(config=str(project.root / ".tasktool.yaml")))
    server = ServerThread(WebConfig(load=load, task_dir=tasks, readonly=readonly))
    bound = server.start()
    dashboard = Dashboard(
        url=bound.url.rstrip("/"), host=bound.host, port=bound.port, tasks=tasks, project=project
    )
    return dashboard, server


@pytest.fixture
def dashboard(project: Project) -> Iterator[Dashboard]:
    running, server = start_dashboard(project)
    try:
        yield running
    finally:
        server.stop()


@pytest.fixture
def readonly_dashboard(project: Project) -> Iterator[Dashboard]:
    running, server = start_dashboard(project, readonly=True)
    try:
        yield running
    finally:
        server.stop()
