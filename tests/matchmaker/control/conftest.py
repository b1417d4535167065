"""A real matchmaker (``matchmaker.serve``) on free loopback ports, in a background thread."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from matchmaker import testing
from matchmaker.config import ServerConfig
from matchmaker.directory import ProjectDirectory
from matchmaker.server import Bound

KEY = "test-management-key"


class ServerThread:
    """The plugin's server thread (:class:`matchmaker.testing.ServerThread`), whose ``start``
    gives the bound addresses these tests use."""

    def __init__(self, config: ServerConfig, directory: ProjectDirectory | None = None) -> None:
        self._thread = testing.ServerThread(config, directory)

    def start(self) -> Bound:
        return self._thread.start().bound

    def stop(self) -> None:
        self._thread.stop()


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
