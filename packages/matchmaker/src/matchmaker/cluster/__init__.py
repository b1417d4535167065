"""Several matchmaker processes as one service, over Redis (``--cluster``).

Imported only when ``--cluster`` is given, so a single process never imports
redis. The data plane's shell hands this package the requests that belong to
another process and the events addressed to clients of other processes; the
core stays the one place where matching happens. ::

    ring.py        rendezvous hashing: which live member owns a pool or a room
    messages.py    every message between members, as msgspec structs (a tagged union)
    codec.py       commands, answers, events and errors as plain values inside them
    routing.py     Router, sans I/O: fed what happened, returns what to send and perform
    routes.py      its state (proxies, entries waiting elsewhere, ...), lookups, actions
    failover.py    its handling of members' deaths and joins, losses and timeouts
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
