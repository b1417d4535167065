"""The match metrics the plane reads off the events it delivers: waits and matches."""

from __future__ import annotations

import time
from collections.abc import Sequence

from matchmaker.core import Event
from matchmaker.core.events import EntryClosed, SessionFormed
from matchmaker.core.modes.quality import quality
from matchmaker.core.state import Session
from matchmaker.data.connection import Connection
from matchmaker.data.observer import DataObserver

__all__ = ["MatchWaits"]


class MatchWaits:
    """Observes how long each matched member waited, and counts each match once."""

    def __init__(
        self,
        observer: DataObserver,
        clients: dict[str, Connection],
        sessions: dict[str, Session],
    ) -> None:
        self.observer = observer
        self.clients = clients
        self.sessions = sessions  # the core's: a formed group's quality is read off it
        self._last_match = ""  # the session id last counted as a match

    def observe(self, recipients: Sequence[str], event: Event) -> None:
        """A match or an entry ending: forget the entries' start times, observing the wait
        of each matched member that had entered, and counting the group once.

        The core announces a group's ``session.created`` events one after another, so the
        last session counted is enough to count each group once, by the mode of its
        first member that waited (in some modes not every member entered the pool).
        """
        session = None
        if isinstance(event, SessionFormed):
            if event.pool is None:
                return  # a room joined, not a match
            pool = event.pool
            session = self.sessions.get(event.session_id)
        else:
            assert isinstance(event, EntryClosed)
            pool = event.pool
        now = time.monotonic()
        rated = None if session is None else quality(session)
        policy = None if rated is None else rated.policy
        for client_id in recipients:
            connection = self.clients.get(client_id)
            started = None if connection is None else connection.entered.pop(pool, None)
            if started is None or not isinstance(event, SessionFormed):
                continue
            entered_at, mode = started
            self.observer.waited(mode, now - entered_at)
            if session is not None:
                self.observer.waited_in(session.project_id, policy, now - entered_at)
            if event.session_id != self._last_match:
                self._last_match = event.session_id
                self.observer.matched(mode)
                if session is not None and rated is not None:
                    self.observer.formed(session.project_id, rated)
