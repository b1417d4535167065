"""The data plane of one process: the core, and the collaborators that each do one job
around it (:mod:`matchmaker.data.jobs`)."""

from __future__ import annotations

import asyncio

from matchmaker.asgi import Receive, Scope, Send
from matchmaker.config import ServerConfig
from matchmaker.core import Matchmaker
from matchmaker.core.conversation import Conversation
from matchmaker.data.connection import Connection
from matchmaker.data.handover import close_entries, hand_over, take_over
from matchmaker.data.jobs.clock import wall_clock_ms
from matchmaker.data.jobs.delivery import Deliveries
from matchmaker.data.jobs.endpoints import AsgiEndpoint, FrameSockets
from matchmaker.data.jobs.hooks import ClusterHooks
from matchmaker.data.jobs.peers import Peers
from matchmaker.data.jobs.registry import Registry
from matchmaker.data.jobs.remote import RemoteResumes
from matchmaker.data.jobs.stopping import Stopping
from matchmaker.data.jobs.tasks import Background
from matchmaker.data.jobs.timers import Timers
from matchmaker.data.jobs.writers import Writers
from matchmaker.data.observer import DataObserver
from matchmaker.data.recording import ArrivalRecorder
from matchmaker.directory import ProjectDirectory
from matchmaker.model import Project
from matchmaker.observe.metrics import Metrics

__all__ = ["ClusterHooks", "DataPlane"]


class DataPlane:
    """Owns the matching core and hands every other job to a collaborator; an ASGI app
    for ``/ws``.

    What a connection calls (its :class:`~matchmaker.data.connection.Hub`) are the
    collaborators' bound methods, kept here as attributes: the registry's ``attach`` and
    ``detach``, the delivery's ``deliver_one`` and ``relay_local``, the WebRTC peers'
    ``open_channel``, the hand-off's ``resume_elsewhere``. A connection reaches each job
    in one call, as it did when they were all methods of this class.
    """

    def __init__(
        self,
        config: ServerConfig,
        directory: ProjectDirectory,
        shutdown: asyncio.Event,
        metrics: Metrics | None = None,
        cluster: ClusterHooks | None = None,
        *,
        restartable: bool = False,
    ) -> None:
        self.config = config
        self.observer = DataObserver(Metrics() if metrics is None else metrics)
        self.directory = directory
        self.shutdown = shutdown
        self.core = Matchmaker(config.limits, node=None if cluster is None else cluster.node)
        self.clients: dict[str, Connection] = {}
        self.open: set[Connection] = set()
        self.recorder = (
            None
            if config.record_arrivals is None
            else ArrivalRecorder(
                config.record_arrivals, config.record_arrivals_max_bytes, directory
            )
        )
        self.cluster = cluster
        self.forward = None if cluster is None else cluster.forward
        urls = (config.ice_servers or "").split(",")
        self._ice_servers = tuple(url.strip() for url in urls if url.strip())
        self.background = Background()
        self.stopping = Stopping(shutdown, self.open, cluster, restartable=restartable)
        self.delivery = Deliveries(self.core, self.clients, self.observer, cluster)
        self.deliver = self.delivery.deliver
        self.deliver_one = self.delivery.deliver_one
        self.relay_local = self.delivery.relay_local
        self.perform_for = self.delivery.perform_for
        self.registry = Registry(
            self.core,
            self.observer,
            self.stopping,
            deliver=self.deliver,
            clients=self.clients,
            open_connections=self.open,
        )
        self.attach = self.registry.attach
        self.detach = self.registry.detach
        self.timers = Timers(
            self.core,
            self.clients,
            self.deliver,
            cluster=cluster,
            heartbeat_interval_ms=config.limits.heartbeat_interval_ms,
            background=self.background,
            on_crash=self._timer_crashed,
            watch_stop=self.stopping.watch,
        )
        writers = Writers(self, self.conversation, self.open, self.background)
        self.peers = Peers(config.limits.rtc_peers_per_connection, writers, self.background)
        self.open_channel = self.peers.open_channel
        self.remote = RemoteResumes(cluster, writers)
        self.resume_elsewhere = self.remote.resume_elsewhere
        self.open_remote = self.remote.open_remote
        self.endpoint = AsgiEndpoint(self.observer, self.stopping, self.start, writers)
        self.frame_sockets = FrameSockets(
            self, self.conversation, self.open, self.stopping, self.start
        )
        self.open_direct = self.frame_sockets.open_direct
        if cluster is not None:
            cluster.bind(self)
        directory.subscribe(self._on_project_changed)

    # -- lifecycle ------------------------------------------------------------------------

    @property
    def restartable(self) -> bool:
        """Whether a stop hands the clients over to the next process (3001, :mod:`.handover`)."""
        return self.stopping.restartable

    @property
    def drained(self) -> bool:
        """Under --cluster, whether a stop handed the clients to the surviving members."""
        return self.stopping.drained

    def start(self) -> None:
        """Start the timers (idempotent; also done lazily by the first connection)."""
        if self.timers.start() and self.cluster is not None:
            self.cluster.start()

    async def stop(self) -> None:
        """Stop the timers and stop following Project changes."""
        self.directory.unsubscribe(self._on_project_changed)
        await self.timers.stop()
        if self.recorder is not None:
            self.recorder.close()

    def _timer_crashed(self, error: BaseException) -> None:
        """A timer crashed (logged already): without it no entry expires and no silent
        client is pinged, so the process stops, as on a signal (``/readyz`` answers 503
        ``server.shutting_down``; its clients are handed over when it is restartable)."""
        self.shutdown.set()

    def _on_project_changed(self, project_id: str, project: Project | None) -> None:
        """Clients waiting under a changed or removed policy are told (``pool.closed``)."""
        self.deliver(self.core.close_changed_policies(project_id, project), wall_clock_ms())

    def take_over(self, body: str, now_ms: int) -> None:
        """Before serving: take the clients a stopped process handed over (:mod:`.handover`)."""
        self.deliver(take_over(self.core, body, now_ms), now_ms)

    def hand_over(self, now_ms: int) -> str | None:
        """Once the servers stopped: the hand-over of the parked clients for the next
        process (``None``: nobody to hand over), their entries closed first."""
        self.deliver(close_entries(self.core, now_ms), now_ms)
        return hand_over(self.core, now_ms)

    def conversation(self) -> Conversation:
        """The protocol state of a new connection (of any transport)."""
        return Conversation(
            self.core,
            self.directory,
            require_declared=self.config.require_declared_projects,
            now_ms=wall_clock_ms(),
            ice_servers=self._ice_servers,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one WebSocket on ``/ws`` (:class:`~.jobs.endpoints.AsgiEndpoint`)."""
        await self.endpoint(scope, receive, send)
