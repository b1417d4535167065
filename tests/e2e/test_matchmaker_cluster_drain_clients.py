"""A drain as a game sees it, with the Python client (``reconnect=``): two players behind a
load balancer (a TCP proxy), both on process a of a two-process cluster, each sending
every 5 ms. a is stopped (``SIGTERM``): it hands their game over to b and closes their
sockets with 3001 "resume"; the load balancer takes a out once its ``/readyz`` says 503,
and the clients, retrying by themselves, resume on b in the same session, every message
arriving exactly once and in order both ways."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import httpx
import pytest

from matchmaker.client import Client, Reconnect
from tests.matchmaker.data.cutproxy import cut_proxy
from tests.matchmaker.polling import eventually, wait_until
from tests.matchmaker.servers import SERVERS

from .both_ways import Player, both_ways
from .cluster_client import cluster, pool_owned_by
from .matchmaker_process import MatchmakerProcess
from .redis_server import RedisServer

pytestmark = pytest.mark.redis

FAST = Reconnect(initial_delay_ms=50, max_delay_ms=300)


def _ws(process: MatchmakerProcess) -> str:
    return process.data_url.replace("http", "ws", 1) + "/ws"


def _out_of_rotation(process: MatchmakerProcess) -> bool:
    """What a load balancer's health check concludes: ``/readyz`` is not 200."""
    try:
        return httpx.get(f"{process.data_url}/readyz", timeout=1).status_code != 200
    except httpx.HTTPError:
        return True


def _taken_out(process: MatchmakerProcess) -> None:
    wait_until(lambda: _out_of_rotation(process), within_s=10, what="out of rotation")


@pytest.mark.parametrize("server", SERVERS)
async def test_both_players_resume_a_drain_on_the_other_process_and_lose_nothing(
    tmp_path: Path, own_redis: RedisServer, server: str
) -> None:
    extra = ["--resume-grace-ms", "20000"]
    with cluster(tmp_path, 2, redis_url=own_redis.url, extra=extra, server=server) as (a, b):
        async with cut_proxy(_ws(a)) as balancer:
            alice = await Client.connect(balancer.url, reconnect=FAST)
            bob = await Client.connect(balancer.url, reconnect=FAST)
            try:
                project = alice.hello_reply["project"]
                name = await asyncio.to_thread(pool_owned_by, b, [a, b], project, "drain")
                for client in (alice, bob):
                    await client.enter(pool=name, create=True, mode="auto", group_size=2)
                session = (await alice.next_event("session.created")).data["session_id"]
                assert (await bob.next_event("session.created")).data["session_id"] == session
                ids = (alice.client_id, bob.client_id)
                players = (Player(alice), Player(bob))

                async def drain() -> None:
                    a.process.send_signal(signal.SIGTERM)
                    await asyncio.to_thread(_taken_out, a)
                    balancer.retarget(_ws(b))
                    assert await asyncio.to_thread(a.stop) == 0
                    await eventually(
                        lambda: all(me.back(1) for me in players), within_s=20, what="both on b"
                    )

                await both_ways(players, session, drain)
                for me, other in (players, players[::-1]):
                    assert other.got == list(range(me.sent)), "once each, in order"
                    assert me.connection == ["connection.away", "connection.back"]
                    assert me.client.hello_reply["resumed"] is True
                assert (alice.client_id, bob.client_id) == ids
                live = [pair for pair in balancer.pairs if not pair.client.is_closing()]
                ports = [pair.upstream.get_extra_info("peername")[1] for pair in live]
                assert ports == [b.ports["data"]] * 2, "both are on b now"
            finally:
                await alice.close()
                await bob.close()
