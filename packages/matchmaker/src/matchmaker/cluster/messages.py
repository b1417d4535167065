"""Every message between members, as msgspec structs: what travels in a member's inbox.

As :mod:`matchmaker.data.protocol` is for the client protocol, this is the one
definition of the cluster's wire: a tagged union (the tag ``k`` names the kind),
so a stream entry decodes straight into typed messages and a receiver
dispatches on their type through a table. Commands, answers and events inside
a message stay ``[class name, fields]`` (:mod:`.codec`), encoded once by their
sender and decoded once by the member that acts on them.

Between members, about a client (``client`` is its id, ``home`` the member it is
connected to): :class:`Command` goes to the member that owns what it is about,
:class:`Answers` back to the home, :class:`Events` to the members whose clients
an event addresses; :class:`Gone`, :class:`Away`, :class:`Back` and
:class:`Withdraw` follow the client at the members holding a proxy of it
(:class:`Hold` makes a member one of those without a request of the client's: a
party's member, entered by its leader). :class:`PartyWithdraw` tells a pool's owner
that a party whose entry waits there changed, and :class:`PartyClosed` a party's holder
that an entry it passed on for a leader connected elsewhere closed at the pool's owner.
:class:`Forgot` tells a member, back after its peers found it dead, that the
sender forgot its clients. :class:`Host` moves a session to the member most of its
members are connected to (at formation, or when its host died) and :class:`Moved`
tells the members' homes where it went. A draining member hands each of its clients
over to a surviving one (:class:`Handover`) and tells the members holding its proxies
(:class:`Rehomed`). The
backfill messages carry a session's open seats to its pool's owner when that is
another member: :class:`Opening` and :class:`Unmirror` (host to owner), :class:`Offer` (owner
to host), :class:`Seated` (host to owner), :class:`Unseat` (owner to host), :class:`Told`
(the newcomer's home to host). The
tunnel messages carry a resume on another member (:mod:`.handoff`): ``tunnel``
is its id, minted by the relay.
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = [
    "Answers",
    "Away",
    "Back",
    "Command",
    "Entry",
    "Events",
    "Forgot",
    "Gone",
    "Handover",
    "Hold",
    "Host",
    "Message",
    "Moved",
    "Offer",
    "Opening",
    "PartyClosed",
    "PartyWithdraw",
    "Rehomed",
    "Seated",
    "Told",
    "TunnelClose",
    "TunnelEnd",
    "TunnelFrame",
    "TunnelOpen",
    "TunnelOut",
    "Unmirror",
    "Unseat",
    "Withdraw",
    "decode",
    "encode",
]


class _Message(msgspec.Struct, tag_field="k", array_like=True, frozen=True):
    """Each message is an array on the wire, its kind (``k``) first."""


class Command(_Message, tag="cmd", frozen=True):
    """A client's request, for the member that owns its pool, room or session (from the
    client's home)."""

    client: str
    project: str
    credential: str | None
    attributes: dict[str, Any]
    player_id: str | None
    request_id: str | None
    command: list[Any]


class Answers(_Message, tag="fx", frozen=True):
    """The replies, refusals or close a forwarded request produced, for its home."""

    client: str
    effects: list[list[Any]]


class Events(_Message, tag="ev", frozen=True):
    """One event for clients connected to the receiving member."""

    to: list[str]
    event: list[Any]


class Gone(_Message, tag="gone", frozen=True):
    """The client left for good: drop its proxy."""

    client: str


class Withdraw(_Message, tag="withdraw", frozen=True):
    """The client was matched elsewhere: withdraw its entries held here."""

    client: str


class Away(_Message, tag="away", frozen=True):
    """The client's connection dropped: pause its proxy, as its home parked it."""

    client: str


class Back(_Message, tag="back", frozen=True):
    """The client resumed: its proxy's entries return to their pools."""

    client: str


class Hold(_Message, tag="hold", frozen=True):
    """The sender holds a proxy of the client now (a member of a party whose leader entered
    a pool owned there): its home tells it when the client is away, back or gone."""

    client: str


class PartyWithdraw(_Message, tag="pwithdraw", frozen=True):
    """The party ``party`` changed at the member that holds it: its entry at the receiver
    (the pool's owner) is withdrawn for all its members (``party_changed``)."""

    party: str


class PartyClosed(_Message, tag="pclosed", frozen=True):
    """A party entry the receiver (the party's holder) passed on for ``client``, its
    leader, whose home sent its ``pool.enter`` as ``request``, closed at ``pool``'s owner
    (it expired, its pool closed, it was withdrawn): the holder no longer follows it."""

    client: str
    pool: str
    request: str | None


class Opening(_Message, tag="seats", frozen=True):
    """The open backfill of ``session`` (hosted by the sender), for its pool's owner:
    what a newcomer must fit, and how many seats are open (``0``: none any more)."""

    session: str
    project: str
    pool: str
    policy: bool  # a policy's pool (else an ad-hoc one)
    spec: list[Any]  # the pool's parameters, as an encoded ``pool.enter``
    bucket: list[list[Any]]
    members: list[tuple[str, dict[str, Any]]]  # each member's id and attributes
    seats: int
    opened_ms: int
    region: str | None = None  # where the session plays (a newcomer must reach it)


class Unmirror(_Message, tag="unseats", frozen=True):
    """The open backfill of ``session`` is no longer the receiver's to fill (filled,
    cancelled, ended, or its pool has another owner now)."""

    session: str


class Offer(_Message, tag="offer", frozen=True):
    """The owner holds ``entry`` of ``client`` (connected to the member its id names) for
    ``session``'s open backfill: the session's member seats it or declines."""

    session: str
    entry: str
    client: str
    project: str
    credential: str | None
    attributes: dict[str, Any]
    player_id: str | None
    public: dict[str, Any] | None


class Seated(_Message, tag="seated", frozen=True):
    """The answer to an :class:`Offer`: the client was seated (the owner drops its entry as
    matched and passes ``created``, the client's ``session.created``, on to its home) or
    not (the entry returns to its place). The owner passes it on so that the home hears
    the answer to the client's ``pool.enter`` (which the owner sent) first."""

    session: str
    entry: str
    client: str
    created: list[Any] | None  # the encoded event, when seated


class Unseat(_Message, tag="unseat", frozen=True):
    """The entry seated by an :class:`Offer` was gone by the time the answer came (its
    client left the pool, it expired or was closed): the host takes the client out of
    ``session`` again, before it was told."""

    session: str
    client: str


class Told(_Message, tag="told", frozen=True):
    """The home of a client seated by an :class:`Offer` told it of ``session`` (its
    ``session.created`` came through the owner): the host sends it the session's events
    it kept meanwhile, then every next one straight (after this, so after the created)."""

    session: str
    client: str


class Forgot(_Message, tag="forgot", frozen=True):
    """The sender found the receiver dead (it stopped renewing its key) and forgot its
    clients: their proxies, and its own clients' sessions at the receiver. The receiver,
    alive after all, forgets the sender's likewise, so that every client of a session
    the two shared is told it ended, as a death would tell it."""


class Host(_Message, tag="host", frozen=True):
    """Host ``session`` here: from the member that formed it, where most of its members
    are connected (the receiver), or, once its host died, from each surviving member's
    home to the member chosen among them (:func:`.ring.host`). Each of ``members`` is
    ``[client id, public, player id, identity, home]``; ``identity`` is ``[credential,
    attributes]`` when the sender speaks for that client (its home, or the member that
    formed the session), else ``None`` (its own home sends it); ``home`` (optional) is
    where it is connected when that is not the member its id names (a drain's heir).
    ``origin`` is the session's pool as :class:`Opening` carries it (``[policy, spec, bucket]``), or
    ``None`` when the sender does not know it (a backfill is then refused)."""

    session: str
    project: str
    pool: str | None
    origin: list[Any] | None
    members: list[list[Any]]
    # Just formed: its members' homes have not all told them of it yet; until each says
    # so (:class:`Told`), the session's events for that member wait (as for a backfill).
    fresh: bool = False


class Moved(_Message, tag="moved", frozen=True):
    """``session`` is hosted by ``host`` now, not by the member its id names: the homes of
    its members route its requests there (told before their clients hear of it)."""

    session: str
    host: str


class Handover(_Message, tag="handover", frozen=True):
    """A draining member hands its client over to the receiver (its *heir*): who it is,
    its outbox (its resume token's digest, ``seq``, the ``frames`` kept for replay), the
    last ``session.send`` seq it took from the client (``ack``), the members holding a
    proxy of it, and the sessions hosted elsewhere it is in (``sessions``: id ->
    ``[host, member ids]``). The client resumes there with its token, which never
    crosses Redis: the heir knows it by its digest."""

    client: str
    project: str
    credential: str | None
    attributes: dict[str, Any]
    player_id: str | None
    token_digest: str
    seq: int
    frames: list[str]
    holders: list[str]
    sessions: dict[str, list[Any]]
    ack: int = 0


class Rehomed(_Message, tag="rehomed", frozen=True):
    """The client's home drained and handed it over to ``home``: its proxy here follows
    that member from now on (its events go there, its proxy outlives the old home)."""

    client: str
    home: str


class TunnelOpen(_Message, tag="topen", frozen=True):
    """A resuming ``hello`` (request ``request_id``), for the member that issued its token."""

    tunnel: str
    relay: str
    request_id: str | None
    hello: list[Any]


class TunnelFrame(_Message, tag="tin", frozen=True):
    """A frame from the client, for the issuer's end of the tunnel."""

    tunnel: str
    frame: str


class TunnelEnd(_Message, tag="tend", frozen=True):
    """The relay's socket closed with ``code``."""

    tunnel: str
    code: int


class TunnelOut(_Message, tag="tout", frozen=True):
    """A frame for the client, back to the relay."""

    tunnel: str
    frame: str


class TunnelClose(_Message, tag="tclose", frozen=True):
    """The issuer's end closed: the relay closes its socket with ``code`` and ``reason``."""

    tunnel: str
    code: int
    reason: str


Message = (
    Command
    | Answers
    | Events
    | Gone
    | Withdraw
    | Away
    | Back
    | Hold
    | PartyWithdraw
    | PartyClosed
    | Opening
    | Unmirror
    | Offer
    | Seated
    | Unseat
    | Told
    | Forgot
    | Host
    | Moved
    | Handover
    | Rehomed
    | TunnelOpen
    | TunnelFrame
    | TunnelEnd
    | TunnelOut
    | TunnelClose
)


class Entry(msgspec.Struct, array_like=True, frozen=True):
    """One stream entry: what one member (``sender``) had for another in one pass, in order.

    The receiver ignores what a member it found dead sent before dying (its state,
    and what the messages are about, died with it)."""

    sender: str
    messages: list[Message]


_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder(Entry)


def encode(sender: str, messages: list[Message]) -> bytes:
    """Messages for one member, in order, as one stream entry (one ``XADD``, one decode)."""
    return _ENCODER.encode(Entry(sender, messages))


def decode(data: bytes) -> Entry:
    """One stream entry; raises ``msgspec.DecodeError`` or ``msgspec.ValidationError``
    for one this member cannot read."""
    return _DECODER.decode(data)
