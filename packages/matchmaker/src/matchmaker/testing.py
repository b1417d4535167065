"""pytest fixtures for testing game clients against a real matchmaker (a ``pytest11`` plugin).

Installing matchmaker makes them available in every test suite::

    async def test_two_players_meet(matchmaker_server, matchmaker_client):
        matchmaker_server.admin.create({"id": "chess", "policies": [...]})
        async with matchmaker_client(project="chess") as alice, ...

``matchmaker_server`` is a real server (:func:`matchmaker.serve`) on free
loopback ports with a memory store and a random management key, running on
its own event loop in a thread, so both plain and async tests can use it.
``matchmaker_client`` connects :class:`~matchmaker.client.Client` objects to it.

This module is imported whenever pytest starts, so it imports only pytest at
the top; the server is loaded when a test asks for a fixture.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from matchmaker.adminclient.client import AdminClient
    from matchmaker.client import Client
    from matchmaker.config import ServerConfig
    from matchmaker.directory import ProjectDirectory
    from matchmaker.running import RunningServer

__all__ = [
    "ClientFactory",
    "MatchmakerServer",
    "ServerThread",
    "matchmaker_client",
    "matchmaker_config",
    "matchmaker_server",
]

_START_S = 10.0


@dataclass(frozen=True, slots=True)
class MatchmakerServer:
    """What ``matchmaker_server`` yields: where the server listens and an admin client."""

    url: str
    """The data plane's HTTP base URL."""
    ws_url: str
    """The WebSocket URL a game client connects to."""
    management_url: str
    """The control plane's base URL (``/admin``)."""
    management_key: str
    admin: AdminClient
    """A synchronous ``/admin`` client presenting the key (``create``, ``patch``, ...)."""


@pytest.fixture
def matchmaker_config() -> ServerConfig:
    """The server ``matchmaker_server`` starts: free loopback ports, a memory store, a random
    management key. Override this fixture (``dataclasses.replace`` it) to change limits."""
    from matchmaker.config import ServerConfig

    return ServerConfig(
        host="127.0.0.1",
        port=0,
        management_port=0,
        management_key=secrets.token_urlsafe(24),
        store_url="memory://",
        server="hypercorn",
        log_level="warning",
    )


@pytest.fixture
def matchmaker_server(matchmaker_config: ServerConfig) -> Iterator[MatchmakerServer]:
    """A real matchmaker for this test, stopped (gracefully) after it."""
    from matchmaker.adminclient.client import AdminClient

    if matchmaker_config.management_key is None:
        matchmaker_config = replace(matchmaker_config, management_key=secrets.token_urlsafe(24))
    key = matchmaker_config.management_key
    assert key is not None
    with ServerThread(matchmaker_config) as running:
        assert running.management_url is not None
        with AdminClient(running.management_url, key) as admin:
            yield MatchmakerServer(
                url=running.url,
                ws_url=running.ws_url,
                management_url=running.management_url,
                management_key=key,
                admin=admin,
            )


class _Connecting:
    """``await factory(...)`` gives a connected client; ``async with factory(...)`` also
    closes it."""

    def __init__(self, connect: Callable[[], Any]) -> None:
        self._connect = connect
        self._client: Client | None = None

    def __await__(self) -> Generator[Any, None, Client]:
        client: Client = yield from self._connect().__await__()
        return client

    async def __aenter__(self) -> Client:
        self._client = await self._connect()
        return self._client

    async def __aexit__(self, *exc: object) -> None:
        if self._client is not None:
            await self._client.close()


class ClientFactory:
    """What ``matchmaker_client`` gives: call it with :meth:`Client.connect`'s keyword
    arguments (``project``, ``credential``, ``attributes``, ``hello``)."""

    def __init__(self, ws_url: str) -> None:
        self.ws_url = ws_url

    def __call__(self, **options: Any) -> _Connecting:
        from matchmaker.client import Client

        return _Connecting(lambda: Client.connect(self.ws_url, **options))


@pytest.fixture
def matchmaker_client(matchmaker_server: MatchmakerServer) -> ClientFactory:
    """Connects clients to ``matchmaker_server``: ``async with matchmaker_client() as c:``."""
    return ClientFactory(matchmaker_server.ws_url)


class ServerThread:
    """:func:`matchmaker.serve` on an event loop of its own in a thread, for callers that have
    no loop or must not block theirs: ``with ServerThread(config) as running:``, or
    :meth:`start` and :meth:`stop`. ``directory`` is :func:`~matchmaker.serve`'s."""

    def __init__(self, config: ServerConfig, directory: ProjectDirectory | None = None) -> None:
        self.config = config
        self.directory = directory
        self._started = threading.Event()
        self._running: RunningServer | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, name="matchmaker", daemon=True)

    def start(self) -> RunningServer:
        """Start the server; returns once it listens, or raises why it could not start."""
        self._thread.start()
        if not self._started.wait(_START_S):
            raise TimeoutError(f"the matchmaker did not start within {_START_S} s")
        if self._running is None:
            self._thread.join()
            raise RuntimeError("the matchmaker failed to start") from self._error
        return self._running

    def stop(self) -> None:
        """Stop the server gracefully; raises what made it fail, if it did."""
        if self._loop is not None and self._running is not None:
            self._loop.call_soon_threadsafe(self._running.stop)
        self._thread.join(_START_S)
        if self._thread.is_alive():
            raise TimeoutError(f"the matchmaker did not stop within {_START_S} s")
        if self._error is not None:
            raise self._error

    def __enter__(self) -> RunningServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _main(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as error:
            self._error = error
        finally:
            self._started.set()

    async def _serve(self) -> None:
        from matchmaker.running import serve

        self._loop = asyncio.get_running_loop()
        async with serve(self.config, directory=self.directory) as running:
            self._running = running
            self._started.set()
            await running.wait()
