"""Concurrent POST/PATCH/DELETE storms on the same ids, on every store: no 5xx, nothing
stored that breaks a documented rule (judged by ``reference.py``, not the implementation),
every stored Project is what some acknowledged write returned, and the directory the
data plane reads ends equal to the store."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
from typing import Any

import httpx
import msgspec

from matchmaker.config import ServerConfig
from matchmaker.directory import ProjectDirectory
from matchmaker.model import Project

from .conftest import KEY, ServerThread
from .reference import project_violations

REQUESTS = 240
IDS = ["storm", "other"]
SECRETS = ["s1", "s2", "s3"]


def random_request(rng: random.Random) -> tuple[str, str, Any]:
    """A write on one of a few ids; bodies collide on ids and on secrets on purpose."""
    project_id = rng.choice(IDS)
    method = rng.choice(["POST", "PATCH", "PATCH", "DELETE"])
    keys = [{"type": "shared-secret", "secret": s} for s in rng.sample(SECRETS, rng.randint(0, 2))]
    policy = {"name": "p", "mode": "auto", "groupSize": rng.randint(1, 4), "default": True}
    body: Any = {
        "displayName": rng.choice([None, "d", "é" * 3]),
        "lockdown": rng.random() < 0.5,
        "keys": keys,
        "policies": rng.choice([[], [policy], [policy, policy]]),  # two "p": invalid
    }
    if rng.random() < 0.1:
        body = rng.choice([{"keys": "nope"}, [], {"id": "renamed"}, {"policies": None}])
    if method == "POST":
        return method, "/admin/projects", {"id": project_id, **body} if body else body
    return method, f"/admin/projects/{project_id}", body


async def test_write_storms_on_one_id_stay_consistent(
    config: ServerConfig, directory: ProjectDirectory, store_url: str
) -> None:
    running = ServerThread(dataclasses.replace(config, store_url=store_url), directory)
    bound = running.start()
    try:
        assert bound.management is not None
        host, port = bound.management
        rng = random.Random(7)
        headers = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
        async with httpx.AsyncClient(
            base_url=f"http://{host}:{port}", headers=headers, timeout=30
        ) as admin:

            async def one(method: str, path: str, body: Any) -> httpx.Response:
                return await admin.request(method, path, content=json.dumps(body).encode())

            responses = await asyncio.gather(*(one(*random_request(rng)) for _ in range(REQUESTS)))
            statuses = {r.status_code for r in responses}
            assert all(s < 500 for s in statuses), [
                r.text for r in responses if r.status_code >= 500
            ]
            assert statuses & {200, 201}, "no write succeeded: the storm tested nothing"
            for response in responses:
                if response.status_code >= 400:
                    assert response.json()["error"]["code"]
            listed = (await admin.get("/admin/projects", params={"limit": 1000})).json()
        stored: list[dict[str, Any]] = listed["projects"]
        for project in stored:
            assert not project_violations(project, KEY), project_violations(project, KEY)
        secrets = [key["secret"] for project in stored for key in project["keys"]]
        assert len(secrets) == len(set(secrets)), "a secret is bound to two Projects"
        # Whatever order the writes took, what is stored is what one of them answered.
        acknowledged = [r.json() for r in responses if r.status_code in (200, 201)]
        for project in stored:
            assert project in acknowledged, project
        decoded = msgspec.json.decode(json.dumps(stored), type=list[Project])
        assert directory.ids() == {project.id for project in decoded}
        for known in decoded:
            assert directory.get(known.id) == known
            for secret in known.shared_secrets():
                assert directory.project_for_secret(secret) == known
        for secret in set(SECRETS) - set(secrets):
            assert directory.project_for_secret(secret) is None
    finally:
        running.stop()
