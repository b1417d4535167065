"""``GET /admin/live`` and ``/admin/projects/{id}/live`` over real sockets."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import msgspec
import pytest

from matchmaker.client import Client
from matchmaker.control.live import LivePage, ProjectLivePage
from matchmaker.server import Bound
from tests.matchmaker.control.conftest import KEY
from tests.matchmaker.observe.conftest import Serve
from tests.matchmaker.servers import SERVERS

SECRET = "live-view-client-secret-3e1d"
PRIVATE = "private-attribute-value-77aa"
PROFILE = "public-profile-name-4c0f"


@pytest.fixture(params=SERVERS)
def running(request: pytest.FixtureRequest, serve: Serve) -> Bound:
    """A server with a control plane, on each data-plane server."""
    return serve(server=request.param)


@pytest.fixture
async def admin(running: Bound) -> AsyncIterator[httpx.AsyncClient]:
    assert running.management is not None
    base = "http://{}:{}".format(*running.management)
    headers = {"Authorization": f"Bearer {KEY}"}
    async with httpx.AsyncClient(base_url=base, headers=headers) as client:
        yield client


@pytest.fixture
async def scene(running: Bound, admin: httpx.AsyncClient) -> AsyncIterator[None]:
    """``game`` (a key, a policy): two clients waiting with a private attribute and a public
    profile; ``arena`` (implicit): a room of two; ``quiet`` (declared): nothing live."""
    project = {
        "id": "game",
        "keys": [{"type": "shared-secret", "secret": SECRET}],
        "policies": [{"name": "trio", "mode": "auto", "groupSize": 3, "filter": {"tier": "@self"}}],
    }
    assert (await admin.post("/admin/projects", json=project)).status_code == 201
    assert (await admin.post("/admin/projects", json={"id": "quiet"})).status_code == 201
    ws = "ws://{}:{}/ws".format(*running.data)
    attributes: dict[str, str | int | float | bool] = {"tier": PRIVATE}
    clients = [await Client.connect(ws, credential=SECRET, attributes=attributes) for _ in range(2)]
    pair = [await Client.connect(ws, project="arena") for _ in range(2)]
    try:
        for client in clients:
            await client.enter("trio", public={"name": PROFILE})
        await pair[0].join("room-1", create=True, public={"name": PROFILE})
        await pair[1].join("room-1")
        yield
    finally:
        for client in [*clients, *pair]:
            await client.close()


@pytest.mark.usefixtures("scene")
async def test_live_view_counts_and_hides_secrets(admin: httpx.AsyncClient) -> None:
    response = await admin.get("/admin/live")
    assert response.status_code == 200
    for hidden in (SECRET, PRIVATE, PROFILE, KEY):
        assert hidden not in response.text
    page = msgspec.json.decode(response.content, type=LivePage)
    assert page.clients == 4
    assert page.next_cursor is None
    assert [p.id for p in page.projects] == ["arena", "game"]  # "quiet" has nothing live
    arena, game = page.projects
    assert arena.clients == 2
    assert [(s.room, s.size, s.pool) for s in arena.sessions] == [("room-1", 2, None)]
    assert game.clients == 2
    assert game.sessions == []
    [trio] = game.pools
    assert (trio.name, trio.mode, trio.group_size, trio.policy) == ("trio", "auto", 3, True)
    assert trio.waiting == 2
    assert trio.oldest_wait_ms is not None
    assert trio.oldest_wait_ms >= 0

    one = await admin.get("/admin/projects/game/live")
    assert one.status_code == 200
    for hidden in (SECRET, PRIVATE, PROFILE, KEY):
        assert hidden not in one.text
    again = msgspec.json.decode(one.content, type=ProjectLivePage).project
    assert (again.id, again.clients, again.sessions) == ("game", 2, [])
    assert again.pools[0].waiting == 2
    assert again.pools[0].oldest_wait_ms is not None
    assert again.pools[0].oldest_wait_ms >= trio.oldest_wait_ms  # the wait grows


@pytest.mark.usefixtures("scene")
async def test_live_view_pages_and_refuses(admin: httpx.AsyncClient) -> None:
    first_page = await admin.get("/admin/live?limit=1")
    first = msgspec.json.decode(first_page.content, type=LivePage)
    assert [p.id for p in first.projects] == ["arena"]
    assert first.next_cursor is not None
    second = await admin.get("/admin/live", params={"limit": 1, "cursor": first.next_cursor})
    rest = msgspec.json.decode(second.content, type=LivePage)
    assert [p.id for p in rest.projects] == ["game"]
    assert rest.next_cursor is None

    quiet = msgspec.json.decode(
        (await admin.get("/admin/projects/quiet/live")).content, type=ProjectLivePage
    )
    assert (quiet.project.clients, quiet.project.pools, quiet.next_cursor) == (0, [], None)
    missing = await admin.get("/admin/projects/nowhere/live")
    assert missing.json()["error"]["code"] == "project.not_found"
    bad = await admin.get("/admin/live?limit=0")
    assert bad.json()["error"]["code"] == "request.invalid"
    anonymous = await admin.get("/admin/live", headers={"Authorization": "Bearer wrong"})
    assert anonymous.status_code == 401


async def test_a_project_whose_id_ends_in_live_is_still_patched_and_deleted(
    admin: httpx.AsyncClient,
) -> None:
    assert (await admin.post("/admin/projects", json={"id": "team/live"})).status_code == 201
    patched = await admin.patch("/admin/projects/team%2Flive", json={"lockdown": True})
    assert patched.status_code == 200
    assert patched.json()["lockdown"] is True
    assert (await admin.delete("/admin/projects/team%2Flive")).status_code == 204
    assert (await admin.get("/admin/projects")).json()["projects"] == []


async def test_a_projects_sessions_are_paged(running: Bound, admin: httpx.AsyncClient) -> None:
    ws = "ws://{}:{}/ws".format(*running.data)
    client = await Client.connect(ws, project="rooms")
    try:
        for name in ("a", "b", "c"):
            await client.join(name, create=True)
        seen: list[str] = []
        cursor: str | None = None
        while True:
            params = {"limit": 2} | ({} if cursor is None else {"cursor": cursor})
            response = await admin.get("/admin/projects/rooms/live", params=params)
            page = msgspec.json.decode(response.content, type=ProjectLivePage)
            assert len(page.project.sessions) <= 2
            seen += [session.room or "" for session in page.project.sessions]
            if (cursor := page.next_cursor) is None:
                break
        assert sorted(seen) == ["a", "b", "c"]
        assert len(seen) == 3
    finally:
        await client.close()


async def test_away_clients_are_counted_apart_everywhere(
    running: Bound, admin: httpx.AsyncClient
) -> None:
    """A dropped (resumable) client was counted as connected per Project, in /admin/live
    and ``matchmaker_project_clients``, but not in the totals: it is ``away`` in all."""
    ws = "ws://{}:{}/ws".format(*running.data)
    staying = await Client.connect(ws, project="game")
    dropped = await Client.connect(ws, project="game")
    try:
        dropped.abort()  # the TCP connection is cut: away for the resume grace
        async with asyncio.timeout(10):
            while True:  # until the server saw the drop
                response = await admin.get("/admin/live")
                page = msgspec.json.decode(response.content, type=LivePage)
                if page.away:
                    break
                await asyncio.sleep(0.02)
        [game] = page.projects
        assert (page.clients, page.away) == (1, 1)
        assert (game.id, game.clients, game.away) == ("game", 1, 1)
        one = await admin.get("/admin/projects/game/live")
        project = msgspec.json.decode(one.content, type=ProjectLivePage).project
        assert (project.clients, project.away) == (1, 1)
        metrics = (await admin.get("/metrics")).text.splitlines()
        assert "matchmaker_clients 1.0" in metrics
        assert "matchmaker_clients_away 1.0" in metrics
        assert 'matchmaker_project_clients{project="game"} 1.0' in metrics
        assert 'matchmaker_project_clients_away{project="game"} 1.0' in metrics
    finally:
        await staying.close()
