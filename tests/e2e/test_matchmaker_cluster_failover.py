"""Failover under ``--cluster``: what a process's death does to entries on their way out.

Real launcher processes over the real Redis, as in ``test_matchmaker_cluster.py``.
A process stopped with ``SIGSTOP`` reads nothing more from its inbox (and stops
renewing its key, so the others find it dead within the member TTL): what is
written to it meanwhile is never acted on, deterministically.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from .cluster_client import Client, cluster, health, pool_owned_by, wait_for_members

pytestmark = pytest.mark.redis


def test_a_client_matched_while_its_other_pool_s_owner_dies_waits_there_no_more(
    tmp_path: Path,
) -> None:
    """x (a's) waits in a pool of b's, b stops, x is matched at a (the withdrawal of its
    other entry goes to b, unread), b dies: x is told that entry was withdrawn, as one
    process would have, and it is not entered again at the pool's new owner."""
    with cluster(tmp_path, 3) as processes:
        a, b, c = processes
        x, y = Client(a), Client(a)
        elsewhere = pool_owned_by(b, processes, x.project, "other")
        here = pool_owned_by(a, processes, x.project, "here")
        entered = x.enter(elsewhere)
        assert entered["ok"], entered
        b.process.send_signal(signal.SIGSTOP)
        try:
            assert x.enter(here)["ok"]
            assert y.enter(here)["ok"]
            assert x.event("session.created")["pool"] == here
            # Matched while b still counted as live: a wrote the withdrawal to b's inbox.
            assert health(a)["cluster"]["members"] == 3
        finally:
            b.process.send_signal(signal.SIGKILL)
            b.process.wait(5)
        withdrawn = x.event("pool.withdrawn", timeout=10)
        assert withdrawn == {
            "pool": elsewhere,
            "entry_id": entered["data"]["entry_id"],
            "reason": "matched",
        }
        wait_for_members([a, c], 2)
        # Two newcomers in that pool meet each other: x is not waiting there (it entered
        # first, so it would be matched first).
        z, w = Client(c), Client(a)
        assert z.enter(elsewhere)["ok"]
        assert w.enter(elsewhere)["ok"]
        members = {m["client_id"] for m in z.event("session.created")["members"]}
        assert members == {z.client_id, w.client_id}
