"""Realtime matchmaking service: WebSocket data plane, HTTP control plane.

The public API (``docs/library.md``) is every name in ``__all__``. Each is
imported on first use, so ``import matchmaker`` loads no server library::

    async with matchmaker.serve(matchmaker.ServerConfig(port=0)) as server:
        async with await matchmaker.Client.connect(server.ws_url) as client: ...

The pytest fixtures ``matchmaker_server`` and ``matchmaker_client`` come with
the package (:mod:`matchmaker.testing`, a ``pytest11`` plugin).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mtcommon.lazy import lazy_exports

if TYPE_CHECKING:
    from matchmaker.adminclient.client import AdminClient as AdminClient
    from matchmaker.adminclient.client import AdminError as AdminError
    from matchmaker.client import Client as Client
    from matchmaker.client import Event as Event
    from matchmaker.client import Reconnect as Reconnect
    from matchmaker.config import ControlLimits as ControlLimits
    from matchmaker.config import Limits as Limits
    from matchmaker.config import ServerConfig as ServerConfig
    from matchmaker.configure.resolve import Effective as Effective
    from matchmaker.configure.resolve import resolve as resolve
    from matchmaker.control.app import create_control_app as create_control_app
    from matchmaker.data.app import create_data_app as create_data_app
    from matchmaker.directory import ProjectDirectory as ProjectDirectory
    from matchmaker.errors import MatchmakerError as MatchmakerError
    from matchmaker.model import MatchmakingPolicy as MatchmakingPolicy
    from matchmaker.model import Project as Project
    from matchmaker.model import ProjectKey as ProjectKey
    from matchmaker.running import RunningServer as RunningServer
    from matchmaker.running import serve as serve
    from matchmaker.server import Bound as Bound
    from matchmaker.store.backends import DEFAULT_STORE_URL as DEFAULT_STORE_URL
    from matchmaker.store.backends import open_store as open_store
    from matchmaker.store.base import ProjectStore as ProjectStore
    from matchmaker.store.memory import MemoryStore as MemoryStore
    from matchmaker.store.postgres import PostgresStore as PostgresStore
    from matchmaker.store.sqlite import SqliteStore as SqliteStore

__all__ = [
    "DEFAULT_STORE_URL",
    "AdminClient",
    "AdminError",
    "Bound",
    "Client",
    "ControlLimits",
    "Effective",
    "Event",
    "Limits",
    "MatchmakerError",
    "MatchmakingPolicy",
    "MemoryStore",
    "PostgresStore",
    "Project",
    "ProjectDirectory",
    "ProjectKey",
    "ProjectStore",
    "Reconnect",
    "RunningServer",
    "ServerConfig",
    "SqliteStore",
    "__version__",
    "create_control_app",
    "create_data_app",
    "open_store",
    "resolve",
    "serve",
]
__version__ = "0.1.0"

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "AdminClient": ".adminclient.client",
        "AdminError": ".adminclient.client",
        "Bound": ".server",
        "Client": ".client",
        "ControlLimits": ".config",
        "DEFAULT_STORE_URL": ".store.backends",
        "Effective": ".configure.resolve",
        "Event": ".client",
        "Limits": ".config",
        "MatchmakerError": ".errors",
        "MatchmakingPolicy": ".model",
        "MemoryStore": ".store.memory",
        "PostgresStore": ".store.postgres",
        "Project": ".model",
        "ProjectDirectory": ".directory",
        "ProjectKey": ".model",
        "ProjectStore": ".store.base",
        "Reconnect": ".client",
        "RunningServer": ".running",
        "ServerConfig": ".config",
        "SqliteStore": ".store.sqlite",
        "create_control_app": ".control.app",
        "create_data_app": ".data.app",
        "open_store": ".store.backends",
        "resolve": ".configure.resolve",
        "serve": ".running",
    },
)
