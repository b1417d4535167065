"""Reconnect and resume, sans I/O: resume tokens, per-client event numbering and replay.

Every client past ``hello`` has an :class:`Outbox`: its resume token's digest, the
``seq`` of its last event and its recent event frames (opaque text the shell
encoded), bounded by a :class:`ReplayBound`: bytes and age, not a count, since
what a resume needs is the traffic of a span of time (a client out of touch for
the heartbeat timeout and then away for the grace), whatever the event rate.
Numbering lives here, not on the connection, so a
client that reconnects continues its sequence. After an unclean disconnect
the client is *parked* until a deadline (``resume_grace_ms``); ``hello`` with
``resume {token, last_seq}`` takes the outbox back, the frames after
``last_seq`` are replayed and the token is rotated. A token works once, only
for its Project, and only while its client is parked or connected. Only its
SHA-256 is kept (:func:`token_digest`): the token itself goes to the client and
nowhere else, so the resume state can be written to the store on a restart
(:mod:`matchmaker.core.snapshot`) without a token in it.

In a cluster a token names the member that issued it (``<node>.<random>``), so
a process that receives another member's token knows where the client's
outbox is (:meth:`Resumption.elsewhere`).
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import secrets
from dataclasses import dataclass, field

from matchmaker.errors import MatchmakerError

__all__ = [
    "FRAME_OVERHEAD_BYTES",
    "Outbox",
    "ReplayBound",
    "Resumption",
    "Taken",
    "token_digest",
]

FRAME_OVERHEAD_BYTES = 64
"""What a kept frame costs beyond its characters (a str's header, 49 bytes for ASCII, and
its slot in the list), counted against the byte bound so that a flood of tiny frames is
bounded in memory too."""
_OVERHEAD = FRAME_OVERHEAD_BYTES  # read on every stamp


@dataclass(frozen=True, slots=True)
class ReplayBound:
    """How much of its recent traffic each outbox keeps: at most ``max_bytes`` (frames'
    characters plus :data:`FRAME_OVERHEAD_BYTES` each), and frames no older than ``max_age_ms``.

    No time is kept per frame (a stamp costs a comparison, not a tuple): every half
    ``max_age_ms``, at a stamp, the outbox notes a boundary (the last seq stamped so far, and
    the time), and frames are dropped through a boundary once it is ``max_age_ms`` old. So a
    frame is kept at least ``max_age_ms`` unless the byte bound drops it first, and at most
    1.5 times as long while events keep coming; an outbox that stops receiving keeps what
    it holds (within the bytes) until its next event.
    """

    max_bytes: int
    max_age_ms: int


@dataclass(slots=True, eq=False)
class Outbox:
    """One client's event numbering and its recent frames, for replay."""

    client_id: str
    project_id: str
    token_digest: str  # of its current resume token (the token is the client's alone)
    # The last frames sent, oldest first: their seqs run up to ``seq`` without a gap, so a
    # frame's seq is its place (no (seq, frame) pair to build and free per event).
    frames: list[str]  # a list, not a deque: batches leave it by a slice, in C
    bound: ReplayBound
    seq: int = 0
    parked_until_ms: int | None = None  # epoch milliseconds; None while connected
    kept_bytes: int = 0  # what ``frames`` costs against ``bound.max_bytes``
    # Age boundaries: frames through ``*_seq`` were stamped by ``*_ms`` (epoch milliseconds).
    next_boundary_ms: int = 0
    newer_seq: int = 0
    newer_ms: int = 0
    older_seq: int = 0
    older_ms: int = 0

    def stamp(self, head: str, now_ms: int) -> str:
        """The event ``head`` (encoded without its closing brace) with the next ``seq``,
        stamped at ``now_ms`` (epoch milliseconds); kept for replay within the bound (the
        oldest kept frames are dropped first)."""
        seq = self.seq = self.seq + 1
        frame = f'{head},"seq":{seq}}}'
        self.frames.append(frame)
        kept = self.kept_bytes = self.kept_bytes + len(frame) + _OVERHEAD
        # Both checks fail on almost every stamp: the trimming is done in batches.
        if kept > self.bound.max_bytes or now_ms >= self.next_boundary_ms:
            self._trim(now_ms)
        return frame

    def _trim(self, now_ms: int) -> None:
        """Drop what the bound no longer allows: when a boundary is due, the frames through
        the newest boundary ``max_age_ms`` old, and a new boundary is noted; past the bytes,
        the oldest frames down to 7/8 of them (so a full buffer trims once per eighth, not
        at every stamp)."""
        bound = self.bound
        if now_ms >= self.next_boundary_ms:
            if now_ms - self.newer_ms >= bound.max_age_ms:
                self._drop_through(self.newer_seq)
            elif now_ms - self.older_ms >= bound.max_age_ms:
                self._drop_through(self.older_seq)
            self.older_seq, self.older_ms = self.newer_seq, self.newer_ms
            self.newer_seq, self.newer_ms = self.seq - 1, now_ms
            self.next_boundary_ms = now_ms + bound.max_age_ms // 2
        if self.kept_bytes > bound.max_bytes:
            target = bound.max_bytes - bound.max_bytes // 8
            while self.kept_bytes > target:  # then frames is not empty
                # As many frames as the excess at their average cost; again if short.
                count = len(self.frames) * (self.kept_bytes - target) // self.kept_bytes
                self._drop(count + 1)

    def _drop_through(self, last: int) -> None:
        self._drop(last - (self.seq - len(self.frames)))

    def _drop(self, count: int) -> None:
        """Drop the ``count`` oldest frames (fewer if there are fewer; none if negative)."""
        frames = self.frames
        count = max(0, min(count, len(frames)))
        self.kept_bytes -= sum(map(len, frames[:count])) + count * _OVERHEAD
        del frames[:count]


@dataclass(frozen=True, slots=True)
class Taken:
    """A successful resume: the outbox, its new token, the frames to replay, and the seqs
    lost forever (``missed``: first and last, when the buffer overflowed since ``last_seq``)."""

    outbox: Outbox
    token: str
    replay: list[str]
    missed: tuple[int, int] | None = None
    was_parked: bool = field(default=True)


class Resumption:
    """Every client's outbox, by client id and by token, and the grace deadlines."""

    def __init__(self, bound: ReplayBound, grace_ms: int, issuer: str | None = None) -> None:
        self.bound = bound
        self.grace_ms = grace_ms
        self._prefix = "" if issuer is None else f"{issuer}."
        self.outboxes: dict[str, Outbox] = {}
        self._tokens: dict[str, str] = {}  # token digest -> client id
        self._deadlines: list[tuple[int, int, str]] = []
        self._order = itertools.count()

    def issue(self, client_id: str, project_id: str) -> str:
        """A new client's outbox; returns its first token."""
        token = self._new_token()
        digest = token_digest(token)
        self.outboxes[client_id] = Outbox(client_id, project_id, digest, [], self.bound)
        self._tokens[digest] = client_id
        return token

    def restore(self, outbox: Outbox) -> None:
        """Keep ``outbox`` (of a snapshot a process stopping for a restart wrote), its
        client parked until its ``parked_until_ms``: its token resumes it here."""
        self.outboxes[outbox.client_id] = outbox
        self._tokens[outbox.token_digest] = outbox.client_id
        assert outbox.parked_until_ms is not None, "a snapshot keeps parked clients only"
        deadline = (outbox.parked_until_ms, next(self._order), outbox.client_id)
        heapq.heappush(self._deadlines, deadline)

    def _new_token(self) -> str:
        return self._prefix + secrets.token_urlsafe(18)

    def elsewhere(self, token: str) -> str | None:
        """The other cluster member that issued ``token``, if it names one (never without
        an issuer of its own: a single process's tokens name nobody)."""
        if not self._prefix or token_digest(token) in self._tokens:
            return None  # (a token handed over here by a draining member is this one's)
        issuer, dot, _ = token.partition(".")
        return issuer if dot and issuer and f"{issuer}." != self._prefix else None

    def handed_over(
        self,
        client_id: str,
        project_id: str,
        digest: str,
        *,
        seq: int,
        frames: list[str],
        now_ms: int,
    ) -> None:
        """A draining cluster member handed a client over (``docs/operations.md``): its
        outbox is kept here, parked for the grace, so its token resumes it here with the
        same numbering and replay."""
        kept = sum(map(len, frames)) + len(frames) * _OVERHEAD
        outbox = Outbox(client_id, project_id, digest, list(frames), self.bound, seq, None, kept)
        old = self.outboxes.get(client_id)
        if old is not None:
            self._tokens.pop(old.token_digest, None)
        self.outboxes[client_id] = outbox
        self._tokens[digest] = client_id
        self.park(client_id, now_ms)

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
            self._tokens.pop(outbox.token_digest, None)

    def holder(self, token: str) -> str | None:
        """The client id ``token`` would resume, without using it."""
        return self._tokens.get(token_digest(token))

    def take(self, token: str, project_id: str, last_seq: int) -> Taken | None:
        """Resume with ``token``: ``None`` if it is unknown, used, or of another Project.
        On success the token is replaced (the new one is ``Taken.token``).

        Raises ``protocol.bad_request`` (``details.limit``: the last seq sent) when
        ``last_seq`` is negative or past what this client was sent."""
        digest = token_digest(token)
        client_id = self._tokens.get(digest)
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
        del self._tokens[digest]
        token = self._new_token()
        outbox.token_digest = token_digest(token)
        self._tokens[outbox.token_digest] = outbox.client_id
        was_parked = outbox.parked_until_ms is not None
        outbox.parked_until_ms = None
        frames = outbox.frames
        first_kept = outbox.seq - len(frames) + 1  # seq + 1 when nothing is kept
        replay = list(itertools.islice(frames, max(0, last_seq + 1 - first_kept), None))
        missed = None
        if last_seq + 1 < first_kept and last_seq < outbox.seq:
            missed = (last_seq + 1, min(first_kept - 1, outbox.seq))
        return Taken(outbox, token, replay, missed, was_parked)


def token_digest(token: str) -> str:
    """What is kept of a resume token: its SHA-256, in hex. A token is 144 random bits, so
    its digest needs no key: it cannot be guessed from the digest, only the token opens it."""
    return hashlib.sha256(token.encode()).hexdigest()
