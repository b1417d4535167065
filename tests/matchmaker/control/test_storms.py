"""Concurrent POST/PATCH/DELETE storms on the same ids: no 5xx, nothing invalid stored, and
the directory the data plane reads ends equal to the store."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from matchmaker.config import ControlLimits, Limits, ServerConfig
from matchmaker.control.validation import check_project
from matchmaker.directory import ProjectDirectory
from matchmaker.model import Project

from .conftest import KEY, ServerThread

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


@pytest.mark.parametrize("store", ["memory", "sqlite"])
async def test_write_storms_on_one_id_stay_consistent(
    config: ServerConfig, directory: ProjectDirectory, tmp_path: Path, store: str
) -> None:
    url = "memory://" if store == "memory" else f"sqlite:///{tmp_path / 'storm.db'}"
    running = ServerThread(dataclasses.replace(config, store_url=url), directory)
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
        stored = msgspec.json.decode(json.dumps(listed["projects"]), type=list[Project])
        for project in stored:
            check_project(project, Limits(), ControlLimits())
        secrets = [key.secret for project in stored for key in project.keys]
        assert len(secrets) == len(set(secrets))
        assert directory.ids() == {project.id for project in stored}
        for project in stored:
            assert directory.get(project.id) == project
            for key in project.keys:
                assert directory.project_for_secret(key.secret) == project
        for secret in set(SECRETS) - set(secrets):
            assert directory.project_for_secret(secret) is None
    finally:
        running.stop()
