"""A real matchmaker (``server.run``) on free loopback ports, in a background thread."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import httpx
import pytest

from matchmaker.config import ServerConfig
from matchmaker.directory import ProjectDirectory
from matchmaker.server import Bound, run

KEY = "test-management-key"


class ServerThread:
    """Runs ``run(config)`` on its own event loop; ``stop`` sets the shutdown event."""

    def __init__(self, config: ServerConfig, directory: ProjectDirectory | None = None) -> None:
        self.config = config
        self.directory = directory
        self._ready = threading.Event()
        self._bound: Bound | None = None
        self._error: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._shutdown: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._main, daemon=True)

    def start(self) -> Bound:
        self._thread.start()
        if not self._ready.wait(10):
            raise TimeoutError("the server did not start within 10 s")
        if self._bound is None:
            raise RuntimeError("the server failed to start") from self._error
        return self._bound

    def stop(self) -> None:
        if self._loop is not None and self._shutdown is not None:
            self._loop.call_soon_threadsafe(self._shutdown.set)
        self._thread.join(10)
        assert not self._thread.is_alive(), "the server did not stop within 10 s"
        if self._error is not None:
            raise self._error

    def _main(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as exc:
            self._error = exc
        finally:
            self._ready.set()

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._shutdown = asyncio.Event()
        await run(
            self.config, shutdown=self._shutdown, ready=self._on_ready, directory=self.directory
        )

    def _on_ready(self, bound: Bound) -> None:
        self._bound = bound
        self._ready.set()


@pytest.fixture
def config() -> ServerConfig:
    """Memory store, free ports; tests may ``replace`` fields before starting."""
    return ServerConfig(port=0, management_port=0, management_key=KEY, store_url="memory://")


@pytest.fixture
def directory() -> ProjectDirectory:
    """The directory the server under test keeps in sync (what the data plane reads)."""
    return ProjectDirectory()


@pytest.fixture
def server(config: ServerConfig, directory: ProjectDirectory) -> Iterator[Bound]:
    running = ServerThread(config, directory)
    bound = running.start()
    yield bound
    running.stop()


@pytest.fixture
def base_url(server: Bound) -> str:
    assert server.management is not None
    host, port = server.management
    return f"http://{host}:{port}"


@pytest.fixture
def admin(base_url: str) -> Iterator[httpx.Client]:
    """An httpx client to the management port presenting the key."""
    headers = {"Authorization": f"Bearer {KEY}"}
    with httpx.Client(base_url=base_url, headers=headers, timeout=10) as client:
        yield client


@pytest.fixture
def anonymous(base_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base_url, timeout=10) as client:
        yield client
