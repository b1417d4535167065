"""The sans-I/O matching core: pools, buckets, modes, sessions and membership.

No sockets, no clocks, no JSON: the core takes plain commands
(:mod:`~matchmaker.core.commands`) and the time, and returns plain answers and
events (:mod:`~matchmaker.core.events`). The data plane's WebSocket shell
(:mod:`matchmaker.data`) decodes frames into commands and encodes what comes
back. A new transport (see ``docs/architecture.md``, Where things plug in) needs
only what this package exports: a :class:`Conversation` per client over the
process's :class:`Matchmaker`, fed commands and the time, whose effects
(:data:`Effect`: :class:`ReplyWith`, :class:`Refuse`, :class:`Close`, ...) and
:data:`Delivery` events the transport carries out. ::

    commands.py   what a client asks (EnterPool, ...)
    conversation.py  Conversation: one connection's protocol rules, commands in, effects out
    effects.py    what the shell must do: ReplyWith, Refuse, Close, ...
    events.py     what the core answers and announces, and to whom (Delivery)
    engine.py     Matchmaker: every pool and session of one process, composing the below
    sessions.py   Sessions, on the tables: forming, seats, rooms, relay, leaving
    tables.py     Tables, the one state: the records, ids, expiry, an entry out of its pool
    modes/        one strategy per pool mode: which waiting entries form groups (auto, skill,
                  claim, mutual, propose, delegated; strategy.py, the seam)
    admission/    what a connection may do: field checks, jwt credentials, rate limits
    pools.py      which pool a request means (PoolSpec, resolve_pool) and who it admits
    state.py      the records: ClientState, Pool, PoolEntry, Member, Session
    projects.py   which Project a client belongs to, as of now
"""

from __future__ import annotations

from matchmaker.core.commands import ClientCommand, EnterPool
from matchmaker.core.conversation import Conversation
from matchmaker.core.effects import (
    Close,
    Effect,
    OpenChannel,
    PingClient,
    Refuse,
    Replay,
    ReplyWith,
    ResumeElsewhere,
)
from matchmaker.core.engine import Matchmaker
from matchmaker.core.events import Delivery, Event
from matchmaker.core.modes import MODES, AutoMode, ModeStrategy
from matchmaker.core.pools import PoolSpec, resolve_pool
from matchmaker.core.projects import current_project, resolve_hello
from matchmaker.core.state import ClientState, Member, Pool, PoolEntry, Session

__all__ = [
    "MODES",
    "AutoMode",
    "ClientCommand",
    "ClientState",
    "Close",
    "Conversation",
    "Delivery",
    "Effect",
    "EnterPool",
    "Event",
    "Matchmaker",
    "Member",
    "ModeStrategy",
    "OpenChannel",
    "PingClient",
    "Pool",
    "PoolEntry",
    "PoolSpec",
    "Refuse",
    "Replay",
    "ReplyWith",
    "ResumeElsewhere",
    "Session",
    "current_project",
    "resolve_hello",
    "resolve_pool",
]
