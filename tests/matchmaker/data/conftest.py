"""A real data-plane server on a free loopback port, and clients connected to it."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from matchmaker.client import Client
from matchmaker.config import Limits, ServerConfig
from matchmaker.data.app import create_data_app, websocket_max_message_size
from matchmaker.data.plane import DataPlane
from matchmaker.directory import ProjectDirectory
from matchmaker.model import Project
from matchmaker.servers import Listener, serve_function
from tests.matchmaker.polling import eventually
from tests.matchmaker.servers import SERVERS


@dataclass
class DataServer:
    """One running data app: its URL, its directory, its plane and its shutdown event."""

    url: str
    base: str
    directory: ProjectDirectory
    plane: DataPlane
    shutdown: asyncio.Event
    clients: list[Client] = field(default_factory=list)

    async def connect(self, **hello: Any) -> Client:
        """A client past ``hello`` (``hello=False`` to skip it), closed at teardown."""
        client = await Client.connect(self.url, **hello)
        self.clients.append(client)
        return client

    async def until(self, predicate: Callable[[], bool], wait_s: float = 5.0) -> None:
        """Poll ``predicate`` until it holds or the deadline passes (then fail)."""
        await eventually(predicate, within_s=wait_s)


StartServer = Callable[..., Awaitable[DataServer]]


@pytest.fixture(params=SERVERS)
def server_name(request: pytest.FixtureRequest) -> str:
    """The server the data app runs on; every data-plane test runs on each."""
    name: str = request.param
    return name


@pytest.fixture
async def start_server(server_name: str) -> AsyncIterator[StartServer]:
    """Start data servers with given limits/flags and declared Projects; stop them after."""
    stops: list[tuple[DataServer, asyncio.Event, asyncio.Task[None], socket.socket]] = []

    async def start(
        *projects: Project,
        require_declared: bool = False,
        ice_servers: str | None = None,
        **limits: Any,
    ) -> DataServer:
        config = ServerConfig(
            port=0,
            require_declared_projects=require_declared,
            limits=Limits(**limits),
            ice_servers=ice_servers,
        )
        directory = ProjectDirectory(projects)
        shutdown = asyncio.Event()
        app = create_data_app(config, directory, shutdown=shutdown)
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        sock.setblocking(False)
        port = sock.getsockname()[1]
        listener = Listener(app, sock, 1.0, websocket_max_message_size(config))
        stop = asyncio.Event()
        serve = serve_function(server_name)

        async def serving() -> None:
            await serve(listener, stop)

        task = asyncio.create_task(serving())
        base = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient() as http, asyncio.timeout(10):
            while True:
                with contextlib.suppress(httpx.TransportError):
                    if (await http.get(f"{base}/healthz")).status_code == 200:
                        break
                await asyncio.sleep(0.02)
        server = DataServer(f"ws://127.0.0.1:{port}/ws", base, directory, app.plane, shutdown)
        stops.append((server, stop, task, sock))
        return server

    yield start
    for server, stop, task, sock in stops:
        await asyncio.gather(*(c.close() for c in server.clients), return_exceptions=True)
        server.shutdown.set()
        stop.set()
        async with asyncio.timeout(10):
            await task
        sock.close()


@pytest.fixture
async def server(start_server: StartServer) -> DataServer:
    """A zero-config server with default limits."""
    return await start_server()
