"""Several matchmaker processes as one service, over Redis (``--cluster``).

Imported only when ``--cluster`` is given, so a single process never imports
redis. The data plane's shell hands this package the requests that belong to
another process and the events addressed to clients of other processes; the
core stays the one place where matching happens. ::

    ring.py        rendezvous hashing: which member owns a pool or a room, hosts a session
    messages.py    every message between members, as msgspec structs (a tagged union)
    codec.py       commands, answers, events and errors as plain values inside them
    routing.py     Router, sans I/O: fed what happened, returns what to send and perform
    routes.py      Routes, the state it shares (proxies, entries waiting elsewhere, ...)
    failover.py    Failover, on that state: members' deaths and joins, losses, timeouts
    serving.py     Serving, on that state: remote clients served here through proxies
    seats.py       Seats, on that state: backfill across members
    placement/     on that state: sessions hosted where their members are, re-hosted when
                   their host dies (Hosting); a stopping member's hand-over (Drain)
    stages.py      where an entry waiting elsewhere stands, and the steps that change it
    handoff.py     resume on another member than the token's issuer: relay and tunnel
    membership.py  TTL heartbeat keys: who is alive, who just died (not Redis's restart)
    streams.py     the members' inboxes on Redis Streams
    node.py        ClusterNode: the loops, the outbox, Redis's availability

See ``docs/operations.md`` (Running several processes) for the design and why
Redis Streams carry the traffic.
"""

from __future__ import annotations

from matchmaker.cluster.node import ClusterNode, open_cluster

__all__ = ["ClusterNode", "open_cluster"]
