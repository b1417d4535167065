"""``/metrics`` over real sockets: a scripted scenario moves every counter and gauge."""

from __future__ import annotations

import contextlib

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from matchmaker.client import Client
from matchmaker.config import Limits
from matchmaker.errors import MatchmakerError
from matchmaker.server import Bound
from tests.matchmaker.control.conftest import KEY
from tests.matchmaker.observe.conftest import Serve
from tests.matchmaker.polling import eventually
from tests.matchmaker.servers import SERVERS

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(url: str, headers: dict[str, str] | None = None) -> Samples:
    response = httpx.get(url, headers=headers, timeout=10)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain; version=")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


@pytest.fixture(params=SERVERS)
def running(request: pytest.FixtureRequest, serve: Serve) -> Bound:
    """A server with a control plane and --metrics-port, on each data-plane server."""
    limits = Limits(send_rate_per_s=1.0, send_burst=20)
    return serve(server=request.param, metrics_port=0, limits=limits)


def urls(bound: Bound) -> tuple[str, str, str]:
    assert bound.management is not None
    assert bound.metrics is not None
    data = "ws://{}:{}/ws".format(*bound.data)
    return data, "http://{}:{}".format(*bound.management), "http://{}:{}".format(*bound.metrics)


async def flood(client: Client, session_id: str, frames: int) -> None:
    """Send ``frames`` messages without waiting for replies; a send after the server
    closed the connection (``client.closed``) ends the flood early."""
    with contextlib.suppress(MatchmakerError):
        for _ in range(frames):
            await client.send(session_id, "spam")


async def test_a_scripted_scenario_moves_the_metrics(running: Bound) -> None:
    ws, management, metrics_port = urls(running)
    auth = {"Authorization": f"Bearer {KEY}"}
    async with httpx.AsyncClient(base_url=management, headers=auth) as admin:
        created = await admin.post(
            "/admin/projects",
            json={
                "id": "game",
                "policies": [{"name": "duel", "mode": "auto", "groupSize": 2, "default": True}],
            },
        )
        assert created.status_code == 201
        assert (await admin.post("/admin/projects", json={"id": "game"})).status_code == 409
    async with httpx.AsyncClient() as anonymous:
        assert (await anonymous.get(f"{management}/metrics")).status_code == 401  # key needed

    players = [await Client.connect(ws, project="game") for _ in range(4)]
    waiting = await Client.connect(ws, project="lobby")
    try:
        await waiting.enter(pool="queue", create=True, mode="auto", group_size=3)
        for player in players:
            await player.enter()
        sessions = [(await p.next_event("session.created")).data for p in players]
        first = sessions[0]["session_id"]
        for _ in range(3):
            await players[0].send(first, {"move": "e4"})
        for _ in range(3):
            assert (await players[1].next_event("session.message")).data["data"] == {"move": "e4"}
        with pytest.raises(MatchmakerError) as refused:
            await players[2].enter(pool="nowhere")
        assert refused.value.code == "pool.not_found"

        during = scrape(f"{metrics_port}/metrics")  # no key on --metrics-port
        assert value(during, "matchmaker_clients") == 5
        assert value(during, "matchmaker_project_clients", project="game") == 4
        assert value(during, "matchmaker_project_clients", project="lobby") == 1
        assert value(during, "matchmaker_sessions") == 2
        assert value(during, "matchmaker_pools", mode="auto") == 1
        assert value(during, "matchmaker_pool_entries", mode="auto") == 1
        assert value(during, "matchmaker_matches_total", mode="auto") == 2
        assert value(during, "matchmaker_match_latency_seconds_count", mode="auto") == 4
        assert value(during, "matchmaker_relayed_messages_total") == 3
        assert value(during, "matchmaker_relayed_bytes_total") > 3 * len('{"move":"e4"}')
        assert value(during, "matchmaker_errors_total", code="pool.not_found") == 1
        assert value(during, "matchmaker_connections_total") == 5
        assert value(during, "matchmaker_control_requests_total", method="POST", status="201") == 1
        assert value(during, "matchmaker_control_requests_total", method="POST", status="409") == 1
        assert value(during, "matchmaker_control_requests_total", method="GET", status="401") == 1

        # A flood of fire-and-forget sends: refused as rate.limited, then closed with 3029
        # (a server that closes before the last of them is written ends the flood early).
        flooder = players[3]
        await flood(flooder, sessions[3]["session_id"], 120)
        assert await flooder.wait_closed() == 3029
    finally:
        for client in [*players, waiting]:
            await client.close()

    def settled() -> Samples | None:
        after = scrape(f"{management}/metrics", auth)  # the same registry, behind the key
        return after if value(after, "matchmaker_clients") == 0 else None

    after = await eventually(settled, what="every client gone")
    assert value(after, "matchmaker_disconnects_total", reason="rate_limited") == 1
    assert value(after, "matchmaker_errors_total", code="rate.limited") > 0
    # The clients that closed cleanly left their sessions; the one closed with 3029 is away
    # within its resume grace and keeps its own.
    assert value(after, "matchmaker_sessions") == 1
    assert value(after, "matchmaker_pool_entries", mode="auto") == 0
    assert value(after, "matchmaker_relayed_messages_total") >= 3 + 20 - 3


async def test_a_slow_consumer_disconnect_is_counted(serve: Serve) -> None:
    # With a queue of one frame, the reply to a pool.enter that matches at once and the
    # session.created it causes overflow it: the connection is closed as slow (3008).
    # (hypercorn's writer task queues both; picows writes them to the socket at once and
    # queues only while the socket's buffer is full: tests/matchmaker/data/test_limits.py.)
    limits = Limits(outbound_queue=1)
    bound = serve(server="hypercorn", management_key=None, metrics_port=0, limits=limits)
    assert bound.management is None
    assert bound.metrics is not None
    url = "http://{}:{}/metrics".format(*bound.metrics)
    client = await Client.connect("ws://{}:{}/ws".format(*bound.data))
    await client.send_raw(
        '{"id":"1","type":"pool.enter","data":'
        '{"pool":"solo","create":true,"mode":"auto","groupSize":1}}'
    )
    assert await client.wait_closed() == 3008
    await client.close()

    def counted() -> Samples | None:
        samples = scrape(url)
        slow = value(samples, "matchmaker_disconnects_total", reason="slow_consumer")
        return samples if slow == 1 else None

    samples = await eventually(counted, what="the slow-consumer disconnect counted")
    assert value(samples, "matchmaker_matches_total", mode="auto") == 1
    async with httpx.AsyncClient() as http:  # the metrics port serves nothing else
        assert (await http.get(url.replace("/metrics", "/admin/live"))).status_code == 404


def test_metrics_need_the_key_on_the_management_port(running: Bound) -> None:
    _, management, _ = urls(running)
    wrong = {"Authorization": "Bearer not-the-key"}
    assert httpx.get(f"{management}/metrics", headers=wrong).status_code == 401
    assert (
        "matchmaker_clients"
        in httpx.get(f"{management}/metrics", headers={"Authorization": f"Bearer {KEY}"}).text
    )
