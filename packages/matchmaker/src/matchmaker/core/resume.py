"""Reconnect and resume, sans I/O: resume tokens, per-client event numbering and replay.

Every client past ``hello`` has an :class:`Outbox`: its resume token, the
``seq`` of its last event and the last ``resume_buffer`` event frames (opaque
text the shell encoded). Numbering lives here, not on the connection, so a
client that reconnects continues its sequence. After an unclean disconnect
the client is *parked* until a deadline (``resume_grace_ms``); ``hello`` with
``resume {token, last_seq}`` takes the outbox back, the frames after
``last_seq`` are replayed and the token is rotated. A token works once, only
for its Project, and only while its client is parked or connected.

In a cluster a token names the member that issued it (``<node>.<random>``), so
a process that receives another member's token knows where the client's
outbox is (:meth:`Resumption.elsewhere`).
"""

from __future__ import annotations

import heapq
import itertools
import secrets
from collections import deque
from dataclasses import dataclass, field

from matchmaker.errors import MatchmakerError

__all__ = ["Outbox", "Resumption", "Taken"]


@dataclass(slots=True, eq=False)
class Outbox:
    """One client's event numbering and its recent frames, for replay."""

    client_id: str
    project_id: str
    token: str
    # The last frames sent, oldest first: their seqs run up to ``seq`` without a gap, so a
    # frame's seq is its place (no (seq, frame) pair to build and free per event).
    frames: deque[str]
    seq: int = 0
    parked_until_ms: int | None = None  # epoch milliseconds; None while connected

    def stamp(self, head: str) -> str:
        """The event ``head`` (encoded without its closing brace) with the next ``seq``;
        kept for replay (the oldest kept frame is dropped when the buffer is full)."""
        seq = self.seq = self.seq + 1
        frame = f'{head},"seq":{seq}}}'
        self.frames.append(frame)
        return frame


@dataclass(frozen=True, slots=True)
class Taken:
    """A successful resume: the outbox, the frames to replay, and the seqs lost forever
    (``missed``: first and last, when the buffer overflowed since ``last_seq``)."""

    outbox: Outbox
    replay: list[str]
    missed: tuple[int, int] | None = None
    was_parked: bool = field(default=True)


class Resumption:
    """Every client's outbox, by client id and by token, and the grace deadlines."""

    def __init__(self, buffer: int, grace_ms: int, issuer: str | None = None) -> None:
        self.buffer = buffer
        self.grace_ms = grace_ms
        self._prefix = "" if issuer is None else f"{issuer}."
        self.outboxes: dict[str, Outbox] = {}
        self._tokens: dict[str, str] = {}  # token -> client id
        self._deadlines: list[tuple[int, int, str]] = []
        self._order = itertools.count()

    def issue(self, client_id: str, project_id: str) -> str:
        """A new client's outbox; returns its first token."""
        token = self._new_token()
        self.outboxes[client_id] = Outbox(client_id, project_id, token, deque(maxlen=self.buffer))
        self._tokens[token] = client_id
        return token

    def _new_token(self) -> str:
        return self._prefix + secrets.token_urlsafe(18)

    def elsewhere(self, token: str) -> str | None:
        """The other cluster member that issued ``token``, if it names one (never without
        an issuer of its own: a single process's tokens name nobody)."""
        if not self._prefix:
            return None
        issuer, dot, _ = token.partition(".")
        return issuer if dot and issuer and f"{issuer}." != self._prefix else None

    def park(self, client_id: str, now_ms: int) -> bool:
        """The client's connection dropped uncleanly: hold its outbox for the grace period.
        ``False`` when there is no outbox (the client never completed ``hello``)."""
        outbox = self.outboxes.get(client_id)
        if outbox is None:
            return False
        outbox.parked_until_ms = now_ms + self.grace_ms
        heapq.heappush(self._deadlines, (outbox.parked_until_ms, next(self._order), client_id))
        return True

    def expired(self, now_ms: int) -> list[str]:
        """Clients whose grace ran out by ``now_ms``; their outboxes and tokens are gone."""
        gone: list[str] = []
        while self._deadlines and self._deadlines[0][0] <= now_ms:
            _, _, client_id = heapq.heappop(self._deadlines)
            outbox = self.outboxes.get(client_id)
            # A client that resumed (and perhaps dropped again) has another deadline, or none.
            until = outbox.parked_until_ms if outbox is not None else None
            if until is not None and until <= now_ms:
                self.forget(client_id)
                gone.append(client_id)
        return gone

    def forget(self, client_id: str) -> None:
        """The client is gone for good (clean close, or its grace ran out)."""
        outbox = self.outboxes.pop(client_id, None)
        if outbox is not None:
            self._tokens.pop(outbox.token, None)

    def holder(self, token: str) -> str | None:
        """The client id ``token`` would resume, without using it."""
        return self._tokens.get(token)

    def take(self, token: str, project_id: str, last_seq: int) -> Taken | None:
        """Resume with ``token``: ``None`` if it is unknown, used, or of another Project.
        On success the token is replaced (read the new one from the outbox).

        Raises ``protocol.bad_request`` (``details.limit``: the last seq sent) when
        ``last_seq`` is negative or past what this client was sent."""
        client_id = self._tokens.get(token)
        outbox = self.outboxes.get(client_id) if client_id is not None else None
        if outbox is None or outbox.project_id != project_id:
            return None
        if not 0 <= last_seq <= outbox.seq:
            # A seq this client was never sent: replaying "after" it would be a lie. The
            # token is not spent, so a corrected hello can still resume.
            raise MatchmakerError(
                f"last_seq must be between 0 and {outbox.seq}, the last event sent",
                code="protocol.bad_request",
                details={"field": "last_seq", "limit": outbox.seq},
            )
        del self._tokens[token]
        outbox.token = self._new_token()
        self._tokens[outbox.token] = outbox.client_id
        was_parked = outbox.parked_until_ms is not None
        outbox.parked_until_ms = None
        frames = outbox.frames
        first_kept = outbox.seq - len(frames) + 1  # seq + 1 when nothing is kept
        replay = list(itertools.islice(frames, max(0, last_seq + 1 - first_kept), None))
        missed = None
        if last_seq + 1 < first_kept and last_seq < outbox.seq:
            missed = (last_seq + 1, min(first_kept - 1, outbox.seq))
        return Taken(outbox, replay, missed, was_parked)
