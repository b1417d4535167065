"""Where a cluster member plugs into the data plane: the :class:`ClusterHooks` protocol.

:mod:`matchmaker.cluster` implements it and never imports ``data/``; the plane's jobs
call it only when the process runs with ``--cluster``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from matchmaker.core import Event
from matchmaker.core.commands import ClientCommand
from matchmaker.core.conversation import Conversation
from matchmaker.core.effects import ResumeElsewhere
from matchmaker.data.connection import Connection

__all__ = ["ClusterHooks"]


class ClusterHooks(Protocol):
    """Where a cluster member (:mod:`matchmaker.cluster`, with ``--cluster``) plugs in.

    Without ``--cluster`` the plane has none and nothing below is called.
    """

    node: str
    available: bool
    """Whether the cluster's Redis answers (``/readyz`` is 503 while it does not)."""

    def bind(self, plane: Any) -> None: ...

    def start(self) -> None: ...

    def forward(
        self,
        conversation: Conversation,
        command: ClientCommand,
        request_id: str | None,
        now_ms: int,
    ) -> bool:
        """Send a request that another process owns there; ``False``: handle it here."""
        ...

    def deliver_remote(self, recipients: Sequence[str], event: Event, now_ms: int) -> None:
        """Route an event to clients that are not connected here."""
        ...

    def observe(self, recipients: Sequence[str], event: Event, now_ms: int) -> None:
        """See an event delivered to local clients."""
        ...

    def client_gone(self, client_id: str, now_ms: int) -> None:
        """A local client left the core."""
        ...

    def client_away(self, client_id: str, now_ms: int) -> None:
        """A local client's connection dropped: it is away for the resume grace."""
        ...

    def client_attached(self, client_id: str, now_ms: int) -> None:
        """A local client has a connection (again, if it resumed)."""
        ...

    def resume_elsewhere(
        self, connection: Connection, effect: ResumeElsewhere, now_ms: int
    ) -> None:
        """Hand ``connection`` over to the member that issued its resume token."""
        ...

    def drain(self, now_ms: int) -> bool:
        """The process is stopping: hand its clients and sessions over to the others
        (``False``: there was nobody to hand over to, or nothing to hand over)."""
        ...

    def describe(self) -> dict[str, object]: ...
